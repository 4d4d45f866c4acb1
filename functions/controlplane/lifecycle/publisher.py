"""Publish a batch of stream records' events to the bus, in stream order, each record once.

Lambda reads a stream shard in order, and with ReportBatchItemFailures it checkpoints before the
first record reported failed and sends that record *and every later one* again. So:

- the records are turned into events in order, and PutEvents is called with up to 10 entries of
  whole records, under 256 KB in all (a bigger call is refused whole), chunk after chunk, retrying
  the entries EventBridge refused (``PUT_ATTEMPTS``);
- the first record that could not be turned into events or fully published is the cut: it and
  every record after it are batch item failures, and no chunk after its own is sent. Records before
  the cut were published and are not sent again;
- no PutEvents call starts without the time it may take (``PUT_SECONDS``): the records left are
  reported instead, since a timed-out invocation is retried whole;
- a chunk never holds two records of one item, so a later change of an item can never reach the
  bus before an earlier one that failed; and a record's events are put in order, a call ending
  before a record's second event (``_call``), so a refused one is retried before the next is sent.

What can still repeat (delivery is at least once, docs/EVENTS.md): the entries of the cut record,
or of later records in its chunk, that EventBridge accepted before the retries ran out.

Before any of that, the events of every record that could be read are written to their orgs'
activity logs (``activity``), in batches: a record sent again rewrites the same items. If that
write fails, nothing is published and every record is reported, to be sent again.
"""

import math
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from controlplane import config
from controlplane.dal import batches, keys, stamps
from controlplane.dal.table import Table
from controlplane.lifecycle import activity
from controlplane.lifecycle.contract import Event, events_for
from controlplane.observability import logger

Record = dict[str, Any]  # a Lambda DynamoDB stream record

MAX_ENTRIES = 10  # PutEvents takes at most 10 entries
# and refuses a call whose entries add up to 256 KB or more: ten Ticket Updated of a long
# description (it is in the resource, and old and new in the changes) are about 300 KB.
MAX_BYTES = 256 * 1024
PUT_ATTEMPTS = 4
# The longest one PutEvents call can take (config.EVENTS_CLIENT_CONFIG: one attempt, 1 s to connect and
# 2 s to read), and a margin. None is started with less time left: a timed-out invocation is retried
# whole, so the records it had already published would be sent again.
PUT_SECONDS = 4


class NotPublished(Exception):
    """A record whose events did not all reach the bus (or that follows one), for Lambda to retry."""


@dataclass
class Outcome:
    published: int = 0  # events
    failed: set[str] = field(default_factory=set)  # sequence numbers of the records to report


@cache
def bus_name() -> str:
    return config.event_bus_name()


@cache
def _table() -> Table:
    # Not api_table(): that needs the cursor secret, which this function has no business reading.
    return Table(config.dynamodb(), config.table_name())


@cache
def retention_days() -> int:
    """How long activity entries are kept (ACTIVITY_RETENTION_DAYS, the stack's ``activity_retention_days``)."""
    days = config.activity_retention_days() or activity.DEFAULT_RETENTION_DAYS
    if days < 1:
        raise RuntimeError(f"ACTIVITY_RETENTION_DAYS must be at least 1, not {days}")
    return days


def org_being_deleted(org_id: str) -> bool:
    """True once an org's cascade delete has begun (or the org is gone)."""
    org = _table().get(keys.org_key(org_id), consistent=True)
    return org is None or stamps.DELETING in org


def publish(records: list[Record], time_left: Callable[[], float] = lambda: math.inf) -> Outcome:
    outcome = Outcome()
    deleting: dict[str, bool] = {}  # one read per org per batch

    def being_deleted(org_id: str) -> bool:
        if org_id not in deleting:
            deleting[org_id] = org_being_deleted(org_id)
        return deleting[org_id]

    converted: list[tuple[Record, list[Event]]] = []
    latest: dict[str, datetime] = {}  # per org, the latest occurred_at so far: a later delete reads no earlier
    cut = len(records)
    for index, record in enumerate(records):
        try:
            events = events_for(record, being_deleted, latest)
            converted.append((record, events))
            for event in events:
                org_id = event.detail.model_dump(include={"org_id"})["org_id"]
                latest[org_id] = max(event.time, latest.get(org_id, event.time))
        except Exception:  # a record we cannot read (or a failed org read) must cut the batch here, not crash
            # it: a crash would have Lambda send the records before it, already published, again.
            logger.exception("Cannot turn a stream record into events", event_id=record.get("eventID"))
            cut = index
            break
    try:
        _record_activity(converted)
    except Exception:  # throttled past the retries, or unreadable: every record again, nothing published
        logger.exception("Cannot write the activity log")
        cut, converted = 0, []
    for chunk_start, chunk in _chunks(converted):
        refused = _put(chunk, time_left) if time_left() >= PUT_SECONDS else 0
        if refused is not None:
            cut = chunk_start + refused
            break
        outcome.published += sum(len(events) for _, events in chunk)
    outcome.failed = {record["dynamodb"]["SequenceNumber"] for record in records[cut:]}
    return outcome


def _record_activity(converted: list[tuple[Record, list[Event]]]) -> None:
    """Every record's activity entries, in BatchWriteItem batches (never a request per event)."""
    found = {
        tuple(keys.base_key(entry).values()): entry  # one item per key: a batch may not name an item twice
        for record, events in converted
        for entry in activity.entries(record["dynamodb"]["SequenceNumber"], events, retention_days())
    }
    if found:
        batches.put_all(_table(), list(found.values()))


def _chunks(converted: list[tuple[Record, list[Event]]]) -> Iterable[tuple[int, list[tuple[Record, list[Event]]]]]:
    """Consecutive whole records, at most MAX_ENTRIES events under MAX_BYTES, no item twice; with the
    first one's index."""
    start, size, total = 0, 0, 0
    chunk: list[tuple[Record, list[Event]]] = []
    items: set[tuple[str, str]] = set()
    for index, (record, events) in enumerate(converted):
        item_keys = {event.item for event in events}
        record_bytes = sum(_entry_bytes(event) for event in events)
        if chunk and (size + len(events) > MAX_ENTRIES or total + record_bytes >= MAX_BYTES or item_keys & items):
            yield start, chunk
            start, chunk, size, total, items = index, [], 0, 0, set()
        chunk.append((record, events))
        size += len(events)
        total += record_bytes
        items |= item_keys
    if chunk:
        yield start, chunk


def _entry_bytes(event: Event) -> int:
    """An entry's size as EventBridge counts it: 14 bytes for its Time, the UTF-8 bytes of its
    Source, DetailType and Detail."""
    entry = event.entry("")
    return 14 + sum(len(entry[name].encode()) for name in ("Source", "DetailType", "Detail"))


def _put(chunk: list[tuple[Record, list[Event]]], time_left: Callable[[], float]) -> int | None:
    """PutEvents for a chunk, in order, retrying the entries EventBridge refused (``PUT_ATTEMPTS``
    calls with a refusal at most); None when all were accepted, else the position in the chunk of the
    first record with an event not put. A call ends before a record's second event (``_call``), so
    the events of one change are put in order even when one is refused."""
    pending = [(position, event) for position, (_, events) in enumerate(chunk) for event in events]
    calls = failures = 0
    refused = False  # the last call failed, or EventBridge refused an entry of it
    while pending and failures < PUT_ATTEMPTS:
        if calls and time_left() < PUT_SECONDS + (2 if refused else 0):  # no time for it: report what is left
            break
        if refused:
            time.sleep(min(0.1 * 2**failures, 2) * random.uniform(0.5, 1))
        sent, calls = _call(pending), calls + 1
        try:
            response = config.eventbridge().put_events(Entries=[event.entry(bus_name()) for _, event in sent])
        except (ClientError, BotoCoreError) as error:  # the whole call failed: every entry again
            logger.warning("PutEvents failed", error=str(error), attempt=failures + 1)
            failures, refused = failures + 1, True
            continue
        kept = []
        for entry, result in zip(sent, response["Entries"], strict=True):
            if result.get("ErrorCode"):
                logger.warning(
                    "PutEvents refused an entry",
                    detail_type=entry[1].detail_type,
                    error_code=result["ErrorCode"],
                    attempt=failures + 1,
                )
                kept.append(entry)
        refused = bool(kept)
        failures += refused
        pending = kept + pending[len(sent) :]
    return min(position for position, _ in pending) if pending else None


def _call(pending: list[tuple[int, Event]]) -> list[tuple[int, Event]]:
    """The entries of the next call: the pending ones, in order, up to a record's second (which
    waits for the first to be accepted; a change that sends two events, a rename and a new plan,
    takes two calls)."""
    records: set[int] = set()
    for index, (position, _) in enumerate(pending):
        if position in records:
            return pending[:index]
        records.add(position)
    return pending
