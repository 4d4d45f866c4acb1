"""Where ``make run``'s API is: the one port setting.

``make run`` (``local.server``) writes its URL and pid to .local/api.json while it serves, with its
DynamoDB endpoint and table (the tokens of ``local.tokens`` read users' subjects there), and removes
the file when it stops. ``make seed``, ``make console``, ``make tokens`` and ``cpctl`` read it, so
``PORT=3300 make run`` is all a user sets. A file whose server is gone is not trusted: its pid is dead
(a killed server never removed it), or nothing accepts connections on its port (the pid was reused).
An explicit URL (``--url``, CONTROLPLANE_URL, API_URL) always wins over the file; without either, the
default is http://127.0.0.1:$PORT (3000).

LOCAL_API_FILE moves the file: the tests' servers write their own, never the developer's.
"""

import json
import os
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from local import ROOT

HOST = "127.0.0.1"
DEFAULT_PORT = "3000"
CONNECT_TIMEOUT_SECONDS = 0.5


def record_file() -> Path:
    return Path(os.environ.get("LOCAL_API_FILE") or ROOT / ".local" / "api.json")


def default_url() -> str:
    return f"http://{HOST}:{os.environ.get('PORT') or DEFAULT_PORT}"


@contextmanager
def recorded(url: str, **details: str) -> Iterator[Path]:
    """Say where this process serves (and its ``details``: its DynamoDB) for as long as the block runs;
    the file goes when it ends, unless another server has written its own since."""
    path = record_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    mine = {"url": url, "pid": os.getpid(), **details}
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(mine) + "\n")
    temporary.replace(path)  # whole or not at all, for a reader that looks at the same moment
    try:
        yield path
    finally:
        if _read(path) == mine:
            path.unlink(missing_ok=True)


def _read(path: Path) -> dict | None:
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("url"), str) or not isinstance(record.get("pid"), int):
        return None
    return record


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _answers(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or HOST, parts.port or 80), CONNECT_TIMEOUT_SECONDS):
            return True
    except OSError:
        return False


def running_record() -> dict | None:
    """The record of the ``make run`` that is serving now, or None (no file, or its server is gone)."""
    record = _read(record_file())
    if record is None or not _alive(record["pid"]) or not _answers(record["url"]):
        return None
    return record


def running_url() -> str | None:
    """The URL of the ``make run`` that is serving now, or None."""
    record = running_record()
    return record["url"] if record else None


def refuse_while_serving(then: str) -> None:
    """Raises RuntimeError while ``make run`` serves from this checkout, for what must not run beside
    it: a second ``make run`` would open its DynamoDB Local data, ``make reset`` delete it under it, and
    either would take its record away, leaving ``make seed``, ``make tokens`` and ``cpctl`` on the
    default port while it still serves. ``then``: what to run once it is stopped."""
    if first := running_record():
        raise RuntimeError(
            f"`make run` serves {first['url']} from this checkout (pid {first['pid']}; make seed, make tokens "
            f"and cpctl use it): stop it first (Ctrl-C in its terminal), then {then}."
        )


def api_url(explicit: str | None = None) -> str:
    """The API to talk to: ``explicit`` if given, else the running ``make run``'s, else the default."""
    return explicit or running_url() or default_url()


if __name__ == "__main__":  # make reset, before it deletes .local/
    try:
        refuse_while_serving("make reset")
    except RuntimeError as error:
        sys.exit(f"make reset: {error}")
