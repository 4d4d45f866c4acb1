"""Each org's activity log: the lifecycle events it was sent, kept where its admins can read them.

One entry per change: a stream record's entry is derived from the very ``Event``s the publisher
sends for it (``contract.events_for``), so the log and the bus never disagree, but a write that sends
two events (``Updated`` and its ``Changed``, ``Suspended``...) is one entry, named by the most telling
of them (``_RANK``). Its key comes from the stream record (``keys.activity_position``): the
record's own time (``Event.recorded_at``, DynamoDB's rounded ApproximateCreationDateTime, never the
exact ``occurred_at``), its sequence number and index 0 (entries written before issue 29 kept one
per event, numbered in the record). So the log is in stream order,
a delete (whose ``occurred_at`` is only a lower bound) never sorts before the change that preceded
it, and a record delivered again rewrites the same item. Its TTL comes from ``occurred_at``: the same on
a replay of the same batch, so the rewrite is identical (a delete's may be earlier in a batch that
starts later: contract's docstring).

Activity items must not send events of their own, nor invoke the events function for nothing: the
event source mapping's filter (``FILTERS``, Lambda's filter-rule syntax) only lets through records of
the items ``contract.KINDS`` describe. The local stream poller applies the same filters (``accepts``).
"""

import json
from collections.abc import Mapping
from typing import Any

from controlplane.dal import keys
from controlplane.dal.conditions import Item
from controlplane.dal.schema import TTL_ATTRIBUTE
from controlplane.lifecycle.contract import DELETION_STARTED, KINDS, Event
from controlplane.models.resources import OrgSummary, Ticket, User
from controlplane.models.units import Unit

DEFAULT_RETENTION_DAYS = 90
_DAY_SECONDS = 24 * 60 * 60
# An entry's ``resource``: its kind, and the field of the API's resource that is its id.
_RESOURCES: dict[type, tuple[str, str]] = {
    OrgSummary: ("organization", "org_id"),
    User: ("user", "user_id"),
    Ticket: ("ticket", "ticket_id"),
    Unit: ("unit", "unit_id"),
}

# The resource class of each detail-type.
_MODELS: dict[str, type] = {
    detail_type: kind.model
    for kind in KINDS
    for detail_type in (
        kind.created,
        kind.updated,
        kind.changed,
        kind.deleted,
        *(t.detail_type for t in kind.transitions),
    )
} | {DELETION_STARTED: OrgSummary}

# Which of a record's events names its entry (``_RANK``): one write that suspends an org sends
# ``Organization Updated`` and ``Organization Suspended``; its entry says "Organization Suspended".
# The transitions and a deletion's start say the most, then a watched field's change (a plan, a
# role, a ticket's status), then what every write sends (created, updated, deleted).
_RANK: dict[str, int] = (
    {detail_type: 0 for detail_type in _MODELS}
    | {kind.changed: 1 for kind in KINDS}
    | {t.detail_type: 2 for kind in KINDS for t in kind.transitions}
    | {DELETION_STARTED: 3}
)

_ENTITIES = [kind.entity for kind in KINDS]
# Filters are ORed. A DynamoDB event source filters on the ``dynamodb`` key only: a record passes
# when the item after the change (insert, modify) or before it (remove) is one of the resources.
FILTERS: tuple[dict[str, Any], ...] = (
    {"dynamodb": {"NewImage": {"entity": {"S": _ENTITIES}}}},
    {"dynamodb": {"OldImage": {"entity": {"S": _ENTITIES}}}},
)


def filter_criteria() -> list[dict[str, str]]:
    """``FILTERS`` as an event source mapping's ``FilterCriteria.Filters`` (each pattern a JSON string)."""
    return [{"pattern": json.dumps(pattern, separators=(",", ":"))} for pattern in FILTERS]


def accepts(record: Mapping[str, Any]) -> bool:
    """Whether Lambda would deliver ``record`` under ``FILTERS``: for the patterns used there,
    nested keys whose leaf is a list of allowed values."""
    return any(_matches(record, pattern) for pattern in FILTERS)


def _matches(value: Any, pattern: Mapping[str, Any]) -> bool:
    if not isinstance(value, Mapping):
        return False
    for name, wanted in pattern.items():
        if name not in value:
            return False
        if isinstance(wanted, Mapping):
            if not _matches(value[name], wanted):
                return False
        elif value[name] not in wanted:
            return False
    return True


def entries(sequence_number: str, events: list[Event], retention_days: int) -> list[Item]:
    """The activity item of one stream record: one entry per change, however many events the change
    sent. Its ``type`` is the record's most telling event (``_RANK``), its ``changes`` every field
    the write changed; a ticket's entry carries its subject."""
    if not events:
        return []
    event = max(events, key=lambda e: _RANK[e.detail_type])  # the first of the highest rank
    detail = event.detail.model_dump(mode="json")
    changed = [e.detail.model_dump(mode="json").get("changes") for e in events]
    changes = {name: change for found in changed if found for name, change in found.items()} or None
    kind, id_field = _RESOURCES[_MODELS[event.detail_type]]
    resource = {"kind": kind, "id": detail["resource"][id_field]}
    if kind == "ticket":
        resource["subject"] = detail["resource"]["subject"]
    recorded_at = event.recorded_at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    position = keys.activity_position(recorded_at, sequence_number, 0)
    return [
        {
            **keys.activity_key(detail["org_id"], position),
            "entity": keys.ACTIVITY,
            "org_id": detail["org_id"],
            "position": position,
            "event_id": detail["event_id"],
            "type": event.detail_type,
            "occurred_at": detail["occurred_at"],
            "actor": detail["actor"],
            "resource": resource,
            "changes": changes,
            TTL_ATTRIBUTE: int(event.time.timestamp()) + retention_days * _DAY_SECONDS,
        }
    ]
