"""The local bus: what the events function publishes during ``make run`` goes here instead of to
EventBridge. One JSON line per event in .local/events.jsonl (``tail -f`` it, or ``make events-log``),
and one line in the server log."""

import json
import os
import sys
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from local import ROOT


def events_file() -> Path:
    """Where make run's events go; LOCAL_EVENTS_FILE moves it: the tests' servers write their own,
    never into the developer's, which ``make events-log`` follows."""
    return Path(os.environ.get("LOCAL_EVENTS_FILE") or ROOT / ".local" / "events.jsonl")


def log_line(detail_type: str, detail: dict) -> str:
    """The server log's line for an event: what happened, to which user or ticket, and by whom: the
    actor's sub, or for a removal by the org's cascade its cause, or ``-`` where none is known."""
    resource = detail.get("resource") or {}
    names = [f"org={detail['org_id']}"]
    names += [f"{name}={resource[f'{name}_id']}" for name in ("user", "ticket") if resource.get(f"{name}_id")]
    by = f"cause={detail['cause']}" if detail.get("cause") else f"actor={detail.get('actor') or '-'}"
    return f"event {detail_type} {' '.join(names)} {by}"


class Sink:
    """Answers PutEvents like EventBridge (every entry accepted), writing each entry down instead."""

    def __init__(
        self,
        path: Path | None = None,
        log=lambda line: print(line, file=sys.stderr, flush=True),
        listeners: tuple[Callable[[list[dict]], None], ...] = (),
    ):
        self.path = path or events_file()
        self.log = log
        self.listeners = listeners  # told of every PutEvents, as the bus's rules are (local.authorizer)
        self._lock = threading.Lock()

    def put_events(self, Entries: list[dict]) -> dict:
        results = []
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a") as out:
                for entry in Entries:
                    event_id = str(uuid.uuid4())
                    detail = json.loads(entry["Detail"])
                    time = entry.get("Time") or datetime.now(UTC)
                    line = {
                        "id": event_id,
                        "time": time.isoformat().replace("+00:00", "Z"),
                        "source": entry["Source"],
                        "detail-type": entry["DetailType"],
                        "event-bus-name": entry["EventBusName"],
                        "detail": detail,
                    }
                    out.write(json.dumps(line) + "\n")
                    results.append({"EventId": event_id})
                    self.log(log_line(entry["DetailType"], detail))
        for listener in self.listeners:
            listener(Entries)
        return {"FailedEntryCount": 0, "Entries": results}
