"""Every key string of the single table is built here and nowhere else.

| item         | PK                         | SK                  | GSI1PK                     | GSI1SK              |
|--------------|----------------------------|---------------------|----------------------------|---------------------|
| organization | ORG#<org_id>               | METADATA#<org_id>   | ORGS                       | ORG#<org_id>        |
| seats        | ORG#<org_id>               | METADATA#<org_id>#SEATS |                        |                     |
| user import  | ORG#<org_id>               | USER_IMPORT#<id>    |                            |                     |
| user         | ORG#<org_id>               | USER#<user_id>      | ORG#<org_id>#USER#<user_id> | USER#<user_id>     |
| ticket       | ORG#<org_id>#TICKET#<id>   | TICKET#<id>         | ORG#<org_id>#USER#<user_id> | TICKET#<id>        |
| activity     | ORG#<org_id>               | ACTIVITY#<position> |                            |                     |
| unit         | ORG#<org_id>#UNITS         | UNIT#<unit_id>      | ORG#<org_id>#UNITS         | UNIT<tree path>     |
| unit tree    | ORG#<org_id>#UNITS         | TREE                |                            |                     |

Users also carry ``GSI2PK = ORG#<org_id>#MEMBERS`` and ``GSI2SK = USER<tree path of their unit>!<user_id>``.
A *tree path* is ``#`` then each unit id from the root down, each followed by ``#``: the root is ``#``,
Engineering/Platform is ``#eng#platform#``. ``#`` sorts before every character of an id, so
``begins_with`` on a unit's tree path is exactly its subtree, in depth-first order, and ``!`` (before
``#``) puts a unit's own users ahead of its children's.

An org's partition sorts ``ACTIVITY#`` < ``METADATA#<org_id>`` < ``METADATA#<org_id>#SEATS`` <
``SWEEP#`` < ``USER#`` < ``USER_IMPORT#`` (``_`` follows ``$``, the users' upper bound): the org item
sits between its activity and its users, so one Query reads it with either (``users_range``, and
``activity_range`` newest first), and a missing org is a 404 in that same request. Its seat
counter sorts right after it (``org_range``), so a read of the org reads both.

The seat counter has an item of its own, outside every index: a user create or delete writes it,
and the org item (listed in GSI1 under ``ORGS``, shared by every org) is left alone. See
docs/DATA_MODEL.md, "No partition shared between tenants".

Callers pass validated ids only (see ``ids``); a ``#`` in an id would let one key impersonate another.
"""

from typing import Any, TypedDict

from controlplane.dal.schema import (
    GSI1_PARTITION_KEY,
    GSI1_SORT_KEY,
    GSI2_PARTITION_KEY,
    GSI2_SORT_KEY,
    PARTITION_KEY,
    SORT_KEY,
    TTL_ATTRIBUTE,
)

# The ``entity`` attribute of each item.
ORG, SEATS, USER, TICKET, SWEEP, ACTIVITY = "org", "seats", "user", "ticket", "sweep", "activity"
USER_IMPORT, UNIT, TREE = "user_import", "unit", "tree"

ORGS_LISTING = "ORGS"
USER_PREFIX = "USER#"
TICKET_PREFIX = "TICKET#"
SWEEP_PREFIX = "SWEEP#"
ACTIVITY_PREFIX = "ACTIVITY#"
IMPORT_PREFIX = "USER_IMPORT#"


def org_partition(org_id: str) -> str:
    return f"ORG#{org_id}"


def user_collection(org_id: str, user_id: str) -> str:
    """GSI1 partition holding a user and all of the user's tickets."""
    return f"{org_partition(org_id)}#USER#{user_id}"


def org_key(org_id: str) -> dict[str, str]:
    return {PARTITION_KEY: org_partition(org_id), SORT_KEY: f"METADATA#{org_id}"}


def seats_key(org_id: str) -> dict[str, str]:
    """The org's seat counter (``user_count``, ``user_limit``): in the org's partition, in no index."""
    return {PARTITION_KEY: org_partition(org_id), SORT_KEY: f"METADATA#{org_id}#SEATS"}


def org_range(org_id: str) -> tuple[str, str]:
    """Sort keys of the org item and its seat counter, for one Query of both."""
    return org_key(org_id)[SORT_KEY], seats_key(org_id)[SORT_KEY]


def import_key(org_id: str, import_id: str) -> dict[str, str]:
    """A user import, in the org's partition (its refused rows are on the item: see logic.imports)."""
    return {PARTITION_KEY: org_partition(org_id), SORT_KEY: f"{IMPORT_PREFIX}{import_id}"}


def user_key(org_id: str, user_id: str) -> dict[str, str]:
    return {PARTITION_KEY: org_partition(org_id), SORT_KEY: f"{USER_PREFIX}{user_id}"}


def ticket_key(org_id: str, ticket_id: str) -> dict[str, str]:
    return {
        PARTITION_KEY: f"{org_partition(org_id)}#TICKET#{ticket_id}",
        SORT_KEY: f"{TICKET_PREFIX}{ticket_id}",
    }


def org_keys(org_id: str) -> dict[str, str]:
    """All key attributes of an organization item."""
    return {**org_key(org_id), GSI1_PARTITION_KEY: ORGS_LISTING, GSI1_SORT_KEY: f"ORG#{org_id}"}


def user_keys(org_id: str, user_id: str, unit_path: tuple[str, ...] = ()) -> dict[str, str]:
    return {
        **user_key(org_id, user_id),
        GSI1_PARTITION_KEY: user_collection(org_id, user_id),
        GSI1_SORT_KEY: f"{USER_PREFIX}{user_id}",
        **member_keys(org_id, user_id, unit_path),
    }


def tree_path(unit_path: tuple[str, ...]) -> str:
    """The sort-key form of a unit's path (its ids from the root down; the root's is empty)."""
    return "#" + "".join(f"{unit_id}#" for unit_id in unit_path)


def units_partition(org_id: str) -> str:
    """An org's units and its tree item (in the table), and its units by path (in GSI1)."""
    return f"{org_partition(org_id)}#UNITS"


def members_partition(org_id: str) -> str:
    """GSI2: an org's users by unit path. One per org: no partition is shared between tenants."""
    return f"{org_partition(org_id)}#MEMBERS"


def member_keys(org_id: str, user_id: str, unit_path: tuple[str, ...]) -> dict[str, str]:
    return {GSI2_PARTITION_KEY: members_partition(org_id), GSI2_SORT_KEY: members_prefix(unit_path) + f"!{user_id}"}


def members_prefix(unit_path: tuple[str, ...], direct: bool = False) -> str:
    """GSI2 sort-key prefix of the users of a unit and everything below it (or, ``direct``, its own)."""
    return f"{USER_PREFIX[:-1]}{tree_path(unit_path)}" + ("!" if direct else "")


def unit_key(org_id: str, unit_id: str) -> dict[str, str]:
    return {PARTITION_KEY: units_partition(org_id), SORT_KEY: f"UNIT#{unit_id}"}


def unit_keys(org_id: str, unit_path: tuple[str, ...]) -> dict[str, str]:
    """All key attributes of a unit at ``unit_path`` (its own id last)."""
    return {
        **unit_key(org_id, unit_path[-1]),
        GSI1_PARTITION_KEY: units_partition(org_id),
        GSI1_SORT_KEY: units_prefix(unit_path),
    }


def units_prefix(unit_path: tuple[str, ...]) -> str:
    """GSI1 sort-key prefix of a unit and its subtree (the whole tree for the root's empty path)."""
    return f"UNIT{tree_path(unit_path)}"


def tree_key(org_id: str) -> dict[str, str]:
    """The org's tree item: its unit count, its move in progress, and its move counter."""
    return {PARTITION_KEY: units_partition(org_id), SORT_KEY: "TREE"}


def ticket_keys(org_id: str, user_id: str, ticket_id: str) -> dict[str, str]:
    return {
        **ticket_key(org_id, ticket_id),
        GSI1_PARTITION_KEY: user_collection(org_id, user_id),
        GSI1_SORT_KEY: f"{TICKET_PREFIX}{ticket_id}",
    }


def tickets_from(ticket_id: str) -> tuple[str, str]:
    """GSI1 sort keys of a user's tickets from ``ticket_id`` up (not the user item, ``USER#``)."""
    return f"{TICKET_PREFIX}{ticket_id}", "TICKET$"  # "$" follows "#": after every TICKET#<ticket_id>


# Org creations' idempotency records, which no org owns: upper case, so no org id (a lower-case slug)
# names this partition, and no org's delete sweeps it.
OPERATORS_IDEMPOTENCY = "IDEMPOTENCY#OPERATORS"


def idempotency_partition(org_id: str) -> str:
    """Where Powertools keeps an org's idempotency records."""
    return f"IDEMPOTENCY#{org_id}"


class IdempotencyLayout(TypedDict):
    key_attr: str
    sort_key_attr: str
    static_pk_value: str
    expiry_attr: str


def idempotency_layout(org_id: str | None) -> IdempotencyLayout:
    """Where Powertools' idempotency records go in the single table, as its DynamoDB persistence
    layer's keyword arguments: ``PK = IDEMPOTENCY#<org>`` (one partition per tenant, so no tenant's
    retries heat another's partition; operators' org creations, with no org in their path, use
    ``OPERATORS_IDEMPOTENCY``), ``SK`` = Powertools' hash of the request, and the table's TTL
    attribute for its expiry."""
    return IdempotencyLayout(
        key_attr=PARTITION_KEY,
        sort_key_attr=SORT_KEY,
        static_pk_value=idempotency_partition(org_id) if org_id else OPERATORS_IDEMPOTENCY,
        expiry_attr=TTL_ATTRIBUTE,
    )


def sweep_key(org_id: str, user_id: str) -> dict[str, str]:
    """A cascade delete's marker for a deleted user whose tickets GSI1 may still be showing late."""
    return {PARTITION_KEY: org_partition(org_id), SORT_KEY: f"{SWEEP_PREFIX}{user_id}"}


def activity_key(org_id: str, position: str) -> dict[str, str]:
    """An activity entry; ``position`` (``activity_position``) orders the org's entries in time."""
    return {PARTITION_KEY: org_partition(org_id), SORT_KEY: f"{ACTIVITY_PREFIX}{position}"}


def activity_position(recorded_at: str, sequence_number: str, index: int) -> str:
    """Where an event sorts among its org's activity: when the stream recorded it (rounded the same
    way for every record, so the log keeps the stream's order), then its record's sequence number
    (zero-padded: DynamoDB's are up to 40 digits) and its place among that record's events. All three
    come from the record, so a replayed record rewrites the same item."""
    return f"{recorded_at}#{sequence_number.zfill(40)}#{index}"


def activity_range(org_id: str, since: str = "") -> tuple[str, str]:
    """Sort keys from the org's activity (at ``since`` or later) up to and including its org item."""
    return f"{ACTIVITY_PREFIX}{since}", org_key(org_id)[SORT_KEY]


def users_range(org_id: str) -> tuple[str, str]:
    """Sort keys from the org item through its users (its seat counter and sweep markers between
    them), not its activity nor its imports."""
    return org_key(org_id)[SORT_KEY], "USER$"  # "$" follows "#": after every USER#<user_id>


def base_key(item: dict[str, Any]) -> dict[str, str]:
    """The primary key of a stored item (what DeleteItem and BatchWriteItem need)."""
    return {PARTITION_KEY: item[PARTITION_KEY], SORT_KEY: item[SORT_KEY]}


# Cursor scopes: a cursor only continues the list it came from.
def orgs_scope() -> str:
    return "orgs"


def users_scope(org_id: str) -> str:
    return f"users:{org_id}"


def activity_scope(org_id: str, subject: str) -> str:
    """An activity cursor is the caller's own: a log outlives its org, so a cursor taken in an org
    deleted since would otherwise page through that org's log for the next org of its id."""
    return f"activity:{org_id}:{subject}"


def tickets_scope(org_id: str, user_id: str) -> str:
    return f"tickets:{org_id}:{user_id}"


def units_scope(org_id: str, under: str) -> str:
    return f"units:{org_id}:{under}"


def unit_users_scope(org_id: str, unit_id: str, direct: bool) -> str:
    return f"unit-users:{org_id}:{unit_id}:{direct}"
