"""The lifecycle events contract: what the control plane tells the application plane, and how one
DynamoDB stream record becomes those events.

The one definition. The events function publishes exactly what ``events_for`` returns, every
detail is an instance of the model ``DETAILS`` names for its detail-type (so it is validated as it
is built), and docs/EVENTS.md shows those models' JSON Schemas (``schemas()``; a test fails when the
document differs). ``resource`` is rendered by the API's own response models, so it is exactly
what the API returns: key attributes and internal fields (``entity``, ``created_by``...) never
appear.

When: ``occurred_at`` is the instant the write put on the item, to the millisecond: ``created_at``
of a create, ``deleting_since`` of an org's deletion start, ``updated_at`` of any other update. The
stream's own ``ApproximateCreationDateTime`` is rounded down (DynamoDB: to the second; DynamoDB
Local: to the minute), so it is only the fallback. A delete stamps nothing: its ``occurred_at`` is the
earliest it can have happened: the latest of the record's time, the deleted item's last stamp
(``updated_at``; an org's ``deleting_since``) and the ``occurred_at`` of the org's changes earlier in
the batch (one shard, so they were made before it; ``events_for``'s ``earlier``). So a delete never
reads earlier than what preceded it in its batch. Delivered again in a batch that starts later, it
may read earlier, never earlier than the record and the item say; its activity item keeps its key.

Order: the activity log (lifecycle.activity) does not sort by ``occurred_at`` (exact stamps beside a
delete's rounded time would put a delete before the change that preceded it). It sorts by
``Event.recorded_at``, the record's own time, then the record's sequence number: both come from the
record, so they follow the stream's order and a record delivered again keeps its position.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, create_model

from controlplane.dal import codec, keys, stamps
from controlplane.dal.schema import PARTITION_KEY, SORT_KEY
from controlplane.lifecycle import timing
from controlplane.models.resources import (
    ACTIVE,
    SUSPENDED,
    OrgId,
    OrgStatus,
    OrgSummary,
    Plan,
    Resource,
    Role,
    Status,
    Ticket,
    Timestamp,
    UnitId,
    User,
)
from controlplane.models.units import Unit

SOURCE = "controlplane"
DELETION_STARTED = "Organization Deletion Started"
ORG_DELETED_CAUSE = "organization_deleted"

# Fields of a resource whose change alone is bookkeeping, not news; a write that changes only these
# sends no ``Updated`` event: the stamps every write moves, the version, the delete mark (it has its
# own event), the seat counter and limit (and their API form, ``usage`` and ``limits``: a plan change
# is reported as the ``plan`` it is); a unit's ``path`` and ``depth``, which follow its parent (a move
# is its ``parent_id``), and ``moving``, the mark of a move under way.
BOOKKEEPING = frozenset(
    {"created_at", "updated_at", "version", stamps.DELETING, "user_count", "user_limit", "usage", "limits"}
    | {"path", "depth", "moving"}
)

T = TypeVar("T")


class Change(BaseModel, Generic[T]):
    model_config = ConfigDict(extra="forbid")
    old: T
    new: T


class Detail(BaseModel):
    model_config = ConfigDict(extra="forbid")
    event_id: str = Field(
        description="The stream record's eventID. Delivery is at least once: dedupe on (event_id, detail-type)"
    )
    org_id: OrgId
    occurred_at: Timestamp = Field(
        description="When the change was made (RFC 3339, milliseconds): the timestamp the write put on the item; "
        "for a delete, which stamps none, the earliest it can have happened (DynamoDB's time of the record, "
        "or the item's last timestamp if later). Also the entry's Time"
    )
    actor: str | None = Field(description="The `sub` of the caller who made the change; null where none is known")


@dataclass(frozen=True)
class Transition:
    """A detail-type sent, as ``changed`` is, beside ``updated`` when ``field`` changes to ``value``
    (None: to any value); its ``changes`` hold that field only."""

    field: str
    field_type: Any
    value: str | None
    detail_type: str


@dataclass(frozen=True)
class Kind:
    """One kind of resource and the detail-types its changes send."""

    entity: str
    model: type[Resource]
    created: str
    updated: str
    deleted: str
    watched: str  # the field whose change also sends ``changed``
    watched_type: Any
    changed: str
    cascaded: bool  # its items can be removed by an org's cascade delete (``cause``)
    transitions: tuple[Transition, ...] = ()

    def public_fields(self) -> tuple[str, ...]:
        return tuple(name for name in self.model.model_fields if name not in BOOKKEEPING)


KINDS = (
    Kind(  # the org item's own fields: its seats used are on another item (dal.seats), so not here
        keys.ORG,
        OrgSummary,
        "Organization Created",
        "Organization Updated",
        "Organization Deleted",
        "plan",
        Plan,
        "Organization Plan Changed",
        cascaded=False,
        transitions=(
            Transition("status", OrgStatus, SUSPENDED, "Organization Suspended"),
            Transition("status", OrgStatus, ACTIVE, "Organization Reactivated"),
        ),
    ),
    Kind(
        keys.USER,
        User,
        "User Created",
        "User Updated",
        "User Deleted",
        "role",
        Role,
        "User Role Changed",
        cascaded=True,
        transitions=(Transition("unit", UnitId, None, "User Moved"),),
    ),
    Kind(
        keys.TICKET,
        Ticket,
        "Ticket Opened",
        "Ticket Updated",
        "Ticket Deleted",
        "status",
        Status,
        "Ticket Status Changed",
        cascaded=True,
    ),
    Kind(
        keys.UNIT,
        Unit,
        "Unit Created",
        "Unit Updated",
        "Unit Deleted",
        "parent_id",
        UnitId | None,
        "Unit Moved",
        cascaded=True,
        transitions=(Transition("name", str, None, "Unit Renamed"),),
    ),
)
_BY_ENTITY = {kind.entity: kind for kind in KINDS}


def _detail_models(kind: Kind) -> dict[str, type[BaseModel]]:
    name = kind.model.__name__.removesuffix("Summary")
    # Models built from the kinds at import: their field types are values here, not static types.
    with_resource: type[BaseModel] = create_model(f"{name}Detail", __base__=Detail, resource=(kind.model, ...))
    fields = Literal[kind.public_fields()]  # type: ignore[valid-type]
    changes = Field(description="{field: {old, new}} for every field the write changed")
    updated = create_model(
        f"{name}UpdatedDetail",
        __base__=with_resource,
        changes=(dict[fields, Change[Any]], changes),  # type: ignore[valid-type]
    )
    watched_field: dict[str, Any] = {kind.watched: (Change[kind.watched_type], ...)}  # type: ignore[name-defined]
    watched = create_model(
        f"{name}{kind.watched.title()}Change", __config__=ConfigDict(extra="forbid"), **watched_field
    )
    changed = create_model(f"{name}{kind.watched.title()}ChangedDetail", __base__=with_resource, changes=(watched, ...))
    deleted: type[BaseModel] = with_resource
    if kind.cascaded:
        cause = Field(description=f'"{ORG_DELETED_CAUSE}" when the org\'s cascade delete removed it, else null')
        cause_field: dict[str, Any] = {"cause": (Literal[ORG_DELETED_CAUSE] | None, cause)}
        deleted = create_model(f"{name}DeletedDetail", __base__=with_resource, **cause_field)
    found: dict[str, type[BaseModel]] = {
        kind.created: with_resource,
        kind.updated: updated,
        kind.changed: changed,
        kind.deleted: deleted,
    }
    if kind.entity == keys.ORG:
        found[DELETION_STARTED] = with_resource
    for transition in kind.transitions:
        field: dict[str, Any] = {transition.field: (Change[transition.field_type], ...)}  # type: ignore[name-defined]
        title = transition.detail_type.replace(" ", "")
        change = create_model(f"{title}Change", __config__=ConfigDict(extra="forbid"), **field)
        found[transition.detail_type] = create_model(f"{title}Detail", __base__=with_resource, changes=(change, ...))
    return found


# Every detail-type, with the model of its Detail.
DETAILS: dict[str, type[BaseModel]] = {
    detail_type: model for kind in KINDS for detail_type, model in _detail_models(kind).items()
}


@dataclass(frozen=True)
class Event:
    detail_type: str
    detail: BaseModel
    time: datetime  # ``occurred_at``
    item: tuple[str, str]  # the changed item's primary key: events of one item keep stream order
    recorded_at: datetime  # the record's ApproximateCreationDateTime: with its sequence number, stream order

    def entry(self, bus_name: str) -> dict[str, Any]:
        """The PutEvents entry."""
        return {
            "Source": SOURCE,
            "DetailType": self.detail_type,
            "Detail": self.detail.model_dump_json(),
            "EventBusName": bus_name,
            "Time": self.time,
        }


# Whether an org's cascade delete has begun, or is over (org gone): decides a removal's ``cause``.
OrgBeingDeleted = Callable[[str], bool]


def events_for(
    record: dict[str, Any], org_being_deleted: OrgBeingDeleted, earlier: Mapping[str, datetime] | None = None
) -> list["Event"]:
    """The events one stream record (a Lambda DynamoDB stream record) sends, in order; none for
    items that are not resources (idempotency records, sweep markers) and for bookkeeping writes.
    ``earlier``: per org, the latest ``occurred_at`` of the records before this one in its shard
    (its batch): a delete came after them, so it reads no earlier."""
    change = record["dynamodb"]
    old = codec.item(change.get("OldImage") or {})
    new = codec.item(change.get("NewImage") or {})
    kind = _BY_ENTITY.get(str((new or old).get("entity")))
    if kind is None:
        return []
    recorded_at = datetime.fromtimestamp(float(change["ApproximateCreationDateTime"]), UTC)
    occurred_at = timing.occurred_at(old, new, recorded_at)
    if not new and earlier and old["org_id"] in earlier:
        occurred_at = max(occurred_at, earlier[old["org_id"]])
    key = codec.item(change["Keys"])
    base = {
        "event_id": record["eventID"],
        "org_id": (new or old)["org_id"],
        "occurred_at": occurred_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    }

    def event(detail_type: str, resource: dict[str, Any], actor: str | None, **extra: Any) -> Event:
        detail = DETAILS[detail_type](**base, actor=actor, resource=kind.model.from_item(resource), **extra)
        return Event(detail_type, detail, occurred_at, (key[PARTITION_KEY], key[SORT_KEY]), recorded_at)

    if not old:
        return [event(kind.created, new, new.get(stamps.CREATED_BY))]
    if not new:
        # A DeleteItem records no caller: only an org's delete knows its actor, from its mark.
        if not kind.cascaded:
            return [event(kind.deleted, old, old.get(stamps.DELETED_BY))]
        cause = ORG_DELETED_CAUSE if org_being_deleted(old["org_id"]) else None
        return [event(kind.deleted, old, None, cause=cause)]
    found = []
    if kind.entity == keys.ORG and stamps.DELETING in new and stamps.DELETING not in old:
        found.append(event(DELETION_STARTED, new, new.get(stamps.DELETED_BY)))
    before, after = (kind.model.from_item(i).model_dump(mode="json") for i in (old, new))
    changes = {
        name: {"old": before[name], "new": after[name]} for name in kind.public_fields() if before[name] != after[name]
    }
    if changes:
        actor = new.get(stamps.UPDATED_BY)
        found.append(event(kind.updated, new, actor, changes=changes))
        if kind.watched in changes:
            found.append(event(kind.changed, new, actor, changes={kind.watched: changes[kind.watched]}))
        for moved in (t for t in kind.transitions if t.field in changes and t.value in (None, changes[t.field]["new"])):
            found.append(event(moved.detail_type, new, actor, changes={moved.field: changes[moved.field]}))
    return found


def schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema of each detail-type's Detail, as docs/EVENTS.md shows them."""
    return {detail_type: model.model_json_schema() for detail_type, model in DETAILS.items()}
