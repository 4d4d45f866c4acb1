"""An org's seats: a counter item of its own (``user_count`` of ``user_limit``) beside the org item,
in the org's partition and in no index, and the transactions that take and give back seats together
with the users who hold them.

Why an item of its own: the org item is listed in GSI1 under ``ORGS``, one index partition shared by
every org. With the counter on it, every user create and delete in every tenant rewrote that index
partition (docs/DATA_MODEL.md, "No partition shared between tenants"). The org item keeps what only
org-level writes change (status, plan, the delete mark): a seat transaction checks it and does not
write it.

An org stored before the counter had an item of its own keeps ``user_count`` on the org item until
``move`` carries it over, in one transaction: ops/migrate_seats.py does every org, and the first seat
write on an org not moved yet does it for that org, so the API serves while the migration runs.
"""

from typing import TYPE_CHECKING, Any, cast

from controlplane.dal import keys
from controlplane.dal.codec import to_dynamo
from controlplane.dal.conditions import ConditionFailed, Expect, Item, Params, condition
from controlplane.dal.schema import PARTITION_KEY
from controlplane.dal.stamps import DELETING
from controlplane.dal.table import Table, serialized
from controlplane.dal.transactions import transact
from controlplane.models import plans
from controlplane.models.resources import SUSPENDED
from controlplane.observability import tracer

if TYPE_CHECKING:  # the stub packages are for the type checker only, never in Lambda
    from types_boto3_dynamodb.type_defs import TransactWriteItemTypeDef, UpdateTypeDef

COUNT, LIMIT = plans.USER_COUNT, plans.USER_LIMIT
_MOVE_ATTEMPTS = 4
# TransactWriteItems takes at most 100 actions: the users, the org's check and the counter.
MOST_USERS_AT_ONCE = 98


def counter(org_id: str, count: int, limit: int) -> Item:
    return {**keys.seats_key(org_id), "entity": keys.SEATS, "org_id": org_id, COUNT: count, LIMIT: limit}


def read(table: Table, org_id: str, consistent: bool = False) -> tuple[Item | None, Item | None]:
    """The org item and its seat counter, in one Query (the counter sorts right after the org)."""
    items, _ = table.query(keys.org_partition(org_id), limit=2, between=keys.org_range(org_id), consistent=consistent)
    found = {item["entity"]: item for item in items}
    return found.get(keys.ORG), found.get(keys.SEATS)


@tracer.capture_method
def create_org(table: Table, org: Item, limit: int) -> None:
    """The org item and its counter (no seat taken), together: neither exists without the other.
    Refused (``ConditionFailed``, action 0 or 1): the org exists."""
    request: list[TransactWriteItemTypeDef] = [
        {
            "Put": {
                "TableName": table.name,
                "Item": to_dynamo(item),
                "ConditionExpression": "attribute_not_exists(#pk)",
                "ExpressionAttributeNames": {"#pk": PARTITION_KEY},
            }
        }
        for item in (org, counter(org["org_id"], 0, limit))
    ]
    transact(table, request)


def org_open(table: Table, org_id: str) -> "TransactWriteItemTypeDef":
    """The org exists, is not being deleted and is not suspended (checked, not written)."""
    return {
        "ConditionCheck": {
            "TableName": table.name,
            "Key": to_dynamo(keys.org_key(org_id)),
            "ConditionExpression": "attribute_exists(#pk) AND attribute_not_exists(#deleting) "
            "AND (attribute_not_exists(#status) OR #status <> :suspended)",
            "ExpressionAttributeNames": {"#pk": PARTITION_KEY, "#deleting": DELETING, "#status": "status"},
            "ExpressionAttributeValues": to_dynamo({":suspended": SUSPENDED}),
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
    }


@tracer.capture_method
def take(
    table: Table,
    org_id: str,
    users: list[Item],
    limit: int | None = None,
    checks: "tuple[TransactWriteItemTypeDef, ...]" = (),
) -> None:
    """Put ``users`` and add as many to the org's seat count, in one transaction, if none of them
    exists, the org is open and it has the seats, and the ``checks`` hold (a user's unit:
    ``tree.placed_in``). One user needs no read first (``count < limit``); several need the ``limit``
    the caller read, as DynamoDB conditions do no arithmetic (``count <= limit - n``, on condition the
    limit is still that one).

    Refused (``ConditionFailed``): action ``i < n``, user ``i`` exists (the stored user); action
    ``n``, the org (its item; None: missing); action ``n + 1``, the counter (its item: no seats;
    None: the org was never counted); action ``n + 2`` on, the checks'."""
    n = len(users)
    values: dict[str, object] = {":n": n}
    expression = "attribute_exists(#count) AND #count < #limit"
    if limit is not None:
        expression, values = "#limit = :limit AND #count <= :most", {":n": n, ":limit": limit, ":most": limit - n}
    elif n != 1:
        raise ValueError("several users take seats against a limit read first")
    request: list[TransactWriteItemTypeDef] = [
        {
            "Put": {
                "TableName": table.name,
                "Item": to_dynamo(user),
                "ConditionExpression": "attribute_not_exists(#pk)",
                "ExpressionAttributeNames": {"#pk": PARTITION_KEY},
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        }
        for user in users
    ]
    request.append(org_open(table, org_id))
    request.append(_on_counter(table, org_id, "ADD #count :n", expression, values))
    _with_counter(table, org_id, [*request, *checks], counter_action=n + 1)


@tracer.capture_method
def give_back(table: Table, org_id: str, key: dict[str, str], expects: tuple[Expect, ...] = ()) -> None:
    """Delete a user (at ``key``, if it exists and meets ``expects``) and give their seat back, in
    one transaction. Refused (``ConditionFailed``): action 0, the user (its item, if returned);
    action 1, the counter (None: the org was never counted)."""
    delete = {"TableName": table.name, "Key": to_dynamo(key), **serialized(condition(expects))}
    delete["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    request: list[TransactWriteItemTypeDef] = [
        {"Delete": cast(Any, delete)},
        _on_counter(table, org_id, "ADD #count :minus_one", "attribute_exists(#count)", {":minus_one": -1}),
    ]
    _with_counter(table, org_id, request)


@tracer.capture_method
def resize(table: Table, org_id: str, update: Params, limit: int) -> None:
    """Update the org item (``update``: an Update action's key, expression and condition) and set
    the counter's limit, in one transaction, on condition that the org's users fit in it. Refused
    (``ConditionFailed``): action 0, the org (its item, if returned); action 1, the counter (its item:
    the users do not fit; None: the org was never counted)."""
    request: list[TransactWriteItemTypeDef] = [
        {"Update": cast("UpdateTypeDef", {"TableName": table.name, **update})},
        _on_counter(table, org_id, "SET #limit = :limit", "#count <= :limit", {":limit": limit}),
    ]
    _with_counter(table, org_id, request)


def set_uncounted(table: Table, org_id: str, update: Params) -> None:
    """Update the org item (``update``, as for ``resize``) of an org with no counter item, on
    condition that it still has none, in one transaction: a plan change that found no counter must
    not write its limit on the org item of an org created (or counted) since, whose counter would keep
    the old limit. Refused (``ConditionFailed``): action 0, the org; action 1, a counter exists now."""
    request: list[TransactWriteItemTypeDef] = [
        {"Update": cast("UpdateTypeDef", {"TableName": table.name, **update})},
        {
            "ConditionCheck": {
                "TableName": table.name,
                "Key": to_dynamo(keys.seats_key(org_id)),
                "ConditionExpression": "attribute_not_exists(#pk)",
                "ExpressionAttributeNames": {"#pk": PARTITION_KEY},
            }
        },
    ]
    transact(table, request)


def _on_counter(
    table: Table, org_id: str, expression: str, condition: str, values: dict[str, object]
) -> "TransactWriteItemTypeDef":
    names = {"#count": COUNT, "#limit": LIMIT} if "#limit" in expression + condition else {"#count": COUNT}
    return {
        "Update": {
            "TableName": table.name,
            "Key": to_dynamo(keys.seats_key(org_id)),
            "UpdateExpression": expression,
            "ConditionExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": to_dynamo(values),
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
    }


def _with_counter(
    table: Table, org_id: str, request: "list[TransactWriteItemTypeDef]", counter_action: int | None = None
) -> None:
    """Run a seat transaction (its action ``counter_action``, by default the last, is on the counter);
    if the org's counter is still on the org item, move it and run again."""
    counter_action = len(request) - 1 if counter_action is None else counter_action
    try:
        transact(table, request)
    except ConditionFailed as failed:
        if failed.action != counter_action or failed.item is not None or not move(table, org_id):
            raise
        transact(table, request)


@tracer.capture_method
def move(table: Table, org_id: str) -> bool:
    """Move an org's count and limit from the org item to a counter item of their own, in one
    transaction, on condition that the count and the limit are still the ones read. True once the
    counter is on its own item (now or before); False if the org is gone or was never counted. Safe to
    run again and beside the API: a count or a limit changed meanwhile is read again."""
    for _ in range(_MOVE_ATTEMPTS):
        org, seats = read(table, org_id, consistent=True)
        if seats is not None:
            return True
        if org is None or COUNT not in org:
            return False
        limit = int(org.get(LIMIT, plans.limit(org["plan"])))
        # The limit read, too: a plan change by the code before writes its limit on the org item.
        seen, same_limit = {":seen": org[COUNT]}, "attribute_not_exists(#limit)"
        if LIMIT in org:
            seen, same_limit = {":seen": org[COUNT], ":limit": org[LIMIT]}, "#limit = :limit"
        remove = serialized(
            {
                "UpdateExpression": "REMOVE #count, #limit",
                "ConditionExpression": f"#count = :seen AND {same_limit}",
                "ExpressionAttributeNames": {"#count": COUNT, "#limit": LIMIT},
                "ExpressionAttributeValues": seen,
            }
        )
        request: list[TransactWriteItemTypeDef] = [
            {
                "Put": {
                    "TableName": table.name,
                    "Item": to_dynamo(counter(org_id, int(org[COUNT]), limit)),
                    "ConditionExpression": "attribute_not_exists(#pk)",
                    "ExpressionAttributeNames": {"#pk": PARTITION_KEY},
                }
            },
            {"Update": {"TableName": table.name, "Key": to_dynamo(keys.org_key(org_id)), **remove}},  # type: ignore[typeddict-item]
        ]
        try:
            transact(table, request)
            return True
        except ConditionFailed:  # moved meanwhile, or the count changed: read again
            continue
    return False
