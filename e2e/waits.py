"""Bounded waits for what a deployment does after it answers, and the local gateway before.

On AWS, GSI1 and GSI2 are updated asynchronously (a list that reads them may miss a write made just
before), the activity log and the authorizer cache's flush follow the table's stream, and imports and
big deletes run from a queue after their ``202``. ``make run`` does all of it within the request, so a
check that reads at once passes there and fails, now and then, against a stack. Each wait has a bound
and, past it, fails saying what it waited for and what it last read.
"""

import os
import time
from collections.abc import Callable
from typing import TypeVar

from cpctl.errors import NotFound

T = TypeVar("T")

INDEX_SECONDS = 30.0  # a GSI, or the stream's activity entry, shows a write well within this
JOB_SECONDS = 120.0  # a queued job (an import, an org's delete) is done within this
POLL_SECONDS = 0.5


def on_deployment() -> bool:
    """The suite runs against a stack (``make e2e API_URL=...``), not the gateway it starts."""
    return bool(os.environ.get("E2E_API_URL"))


def settle_seconds() -> float:
    """How far apart two reads must agree for a snapshot to count as settled: GSIs typically follow
    within a second on AWS; DynamoDB Local updates them within the write."""
    return float(os.environ.get("E2E_SETTLE_SECONDS") or (1.0 if on_deployment() else 0.0))


def eventually(read: Callable[[], T], check: Callable[[T], bool], what: str, timeout: float = INDEX_SECONDS) -> T:
    """``read()``'s first value that passes ``check``, read every POLL_SECONDS for up to ``timeout``."""
    deadline = time.monotonic() + timeout
    while not check(value := read()):
        assert time.monotonic() < deadline, f"{what}: not within {timeout:g} s; last read: {value!r}"
        time.sleep(POLL_SECONDS)
    return value


def or_none(read: Callable[[], T]) -> T | None:
    """``read()``, or None while it answers 404: for ``eventually`` on a list that reads its parent
    from an index (a user's tickets, on GSI1), which on AWS does not show a new parent at once."""
    try:
        return read()
    except NotFound:
        return None


def settled(read: Callable[[], T], what: str, timeout: float = INDEX_SECONDS) -> T:
    """``read()`` once two reads settle_seconds() apart agree: a write made just before has reached
    the indexes, so a later read differs only by what happened since."""
    pause, deadline = settle_seconds(), time.monotonic() + timeout
    value = read()
    while pause:
        time.sleep(pause)
        if (again := read()) == value:
            break
        assert time.monotonic() < deadline, f"{what}: still changing after {timeout:g} s; last read: {again!r}"
        value = again
    return value


def gone(read: Callable[[], object], what: str, timeout: float = INDEX_SECONDS) -> None:
    """``read()`` raises NotFound within ``timeout``: on AWS a GET reads eventually consistent, and
    just after a delete it may still find what was deleted."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            found = read()
        except NotFound:
            return
        assert time.monotonic() < deadline, f"{what}: still found after {timeout:g} s; last read: {found!r}"
        time.sleep(POLL_SECONDS)
