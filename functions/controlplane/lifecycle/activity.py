"""Each org's activity log: the lifecycle events it was sent, kept where its admins can read them.

An entry is derived from the very ``Event`` the publisher sends (``contract.events_for``), so the log
and the bus never disagree. Its key comes from the stream record (``keys.activity_position``): the
record's own time (``Event.recorded_at``, DynamoDB's rounded ApproximateCreationDateTime, never the
exact ``occurred_at``), its sequence number and the event's index. So the log is in stream order,
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

DEFAULT_RETENTION_DAYS = 90
_DAY_SECONDS = 24 * 60 * 60
# An entry's ``resource``: its kind, and the field of the API's resource that is its id.
_RESOURCES: dict[type, tuple[str, str]] = {
    OrgSummary: ("organization", "org_id"),
    User: ("user", "user_id"),
    Ticket: ("ticket", "ticket_id"),
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
    """The activity items of one stream record's events, in the record's order."""
    found = []
    for index, event in enumerate(events):
        detail = event.detail.model_dump(mode="json")
        kind, id_field = _RESOURCES[_MODELS[event.detail_type]]
        recorded_at = event.recorded_at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        position = keys.activity_position(recorded_at, sequence_number, index)
        found.append(
            {
                **keys.activity_key(detail["org_id"], position),
                "entity": keys.ACTIVITY,
                "org_id": detail["org_id"],
                "position": position,
                "event_id": detail["event_id"],
                "type": event.detail_type,
                "occurred_at": detail["occurred_at"],
                "actor": detail["actor"],
                "resource": {"kind": kind, "id": detail["resource"][id_field]},
                "changes": detail.get("changes"),
                TTL_ATTRIBUTE: int(event.time.timestamp()) + retention_days * _DAY_SECONDS,
            }
        )
    return found
