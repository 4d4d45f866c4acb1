"""The local bus: what the events function publishes during ``make run`` goes here instead of to
EventBridge. One JSON line per event in .local/events.jsonl (``tail -f`` it, or ``make events-log``),
and one line in the server log."""

import json
import sys
import threading
import uuid
from datetime import UTC, datetime
from pathlib import Path

from local import ROOT

EVENTS_FILE = ROOT / ".local" / "events.jsonl"


class Sink:
    """Answers PutEvents like EventBridge (every entry accepted), writing each entry down instead."""

    def __init__(self, path: Path = EVENTS_FILE, log=lambda line: print(line, file=sys.stderr, flush=True)):
        self.path = path
        self.log = log
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
                    self.log(f"event {entry['DetailType']} org={detail['org_id']} actor={detail['actor']}")
        return {"FailedEntryCount": 0, "Entries": results}
