"""The data layer's transactions: a write that succeeds only together with a condition on, or a
change to, another item (a ticket and its user; a user and their org's seat count). Concurrent
transactions on the same item cancel each other; a cancelled one is tried again a few times. A
refused one is reported as ``ConditionFailed``: which action, and the item DynamoDB returned for it.
"""

import random
import time
from typing import TYPE_CHECKING, Any, cast

from botocore.exceptions import ClientError

from controlplane.dal.codec import from_dynamo, to_dynamo
from controlplane.dal.conditions import ConditionFailed, Expect, Item, condition
from controlplane.dal.schema import PARTITION_KEY
from controlplane.dal.stamps import DELETING
from controlplane.dal.table import BUSY, Key, Table, serialized, translate
from controlplane.models.errors import ServiceUnavailable
from controlplane.models.plans import USER_COUNT, USER_LIMIT
from controlplane.models.resources import SUSPENDED
from controlplane.observability import tracer

if TYPE_CHECKING:  # the stub packages are for the type checker only, never in Lambda
    from types_boto3_dynamodb.type_defs import ConditionCheckTypeDef, DeleteTypeDef, TransactWriteItemTypeDef

_CONFLICT_ATTEMPTS = 4
CONTENDED = "Other requests kept changing the same items; retry later"

# The org's seats: the count of its users beside its plan's limit, on the org item; a user joins
# an org that exists, is not being deleted (``DELETING``) nor suspended (``status``).
_SEAT_NAMES = {"#count": USER_COUNT, "#limit": USER_LIMIT, "#deleting": DELETING, "#status": "status"}
_SEAT_FREE = (
    "attribute_exists(#pk) AND #count < #limit AND attribute_not_exists(#deleting)"
    " AND (attribute_not_exists(#status) OR #status <> :suspended)"
)


@tracer.capture_method
def put_child(table: Table, parent: Key, item: Item) -> None:
    """Create ``item`` only if ``parent`` exists and ``item`` does not, in one transaction.
    Refused: action 0, the parent; action 1, the item."""
    names = {"#pk": PARTITION_KEY}
    parent_check: ConditionCheckTypeDef = {
        "TableName": table.name,
        "Key": to_dynamo(parent),
        "ConditionExpression": "attribute_exists(#pk)",
        "ExpressionAttributeNames": names,
    }
    request: list[TransactWriteItemTypeDef] = [
        {"ConditionCheck": parent_check},
        {
            "Put": {
                "TableName": table.name,
                "Item": to_dynamo(item),
                "ConditionExpression": "attribute_not_exists(#pk)",
                "ExpressionAttributeNames": names,
            }
        },
    ]
    _transact(table, request)


@tracer.capture_method
def put_user_taking_a_seat(
    table: Table, org: Key, user: Item, checks: "tuple[TransactWriteItemTypeDef, ...]" = ()
) -> None:
    """Create ``user`` and add 1 to the ``org``'s seat count, in one transaction, only if the user
    does not exist yet and the org has a seat free (see ``_SEAT_FREE``; an org without a count was
    never counted, and has none), and the ``checks`` hold (the user's unit: ``tree.placed_in``).
    Refused: action 0, the user exists; action 1, the org (its item, or None if it is missing);
    action 2 on, the check's."""
    request: list[TransactWriteItemTypeDef] = [
        {  # first: an existing user is reported, whatever the org's count
            "Put": {
                "TableName": table.name,
                "Item": to_dynamo(user),
                "ConditionExpression": "attribute_not_exists(#pk)",
                "ExpressionAttributeNames": {"#pk": PARTITION_KEY},
            }
        },
        {
            "Update": {
                "TableName": table.name,
                "Key": to_dynamo(org),
                "UpdateExpression": "ADD #count :one",
                "ConditionExpression": _SEAT_FREE,
                "ExpressionAttributeNames": {"#pk": PARTITION_KEY, **_SEAT_NAMES},
                "ExpressionAttributeValues": to_dynamo({":one": 1, ":suspended": SUSPENDED}),
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        },
        *checks,
    ]
    _transact(table, request)


@tracer.capture_method
def update_with_check(
    table: Table, key: Key, changes: Item, now: str, check: "TransactWriteItemTypeDef", expects: tuple[Expect, ...] = ()
) -> None:
    """Set ``changes`` on an existing item that meets ``expects``, stamp it and bump its version,
    only if ``check`` holds, in one transaction (a user moved into a unit: ``tree.placed_in``).
    Refused: action 0, the item (its item, if returned); action 1, the check's."""
    expected = serialized(condition(expects))
    names = {**expected["ExpressionAttributeNames"], "#updated_at": "updated_at", "#version": "version"}
    values: dict[str, Any] = {":now": now, ":one": 1}
    assignments = ["#updated_at = :now", "#version = #version + :one"]
    for i, (field, value) in enumerate(changes.items()):
        names[f"#f{i}"], values[f":f{i}"] = field, value
        assignments.append(f"#f{i} = :f{i}")
    update: TransactWriteItemTypeDef = {
        "Update": {
            "TableName": table.name,
            "Key": to_dynamo(key),
            "UpdateExpression": "SET " + ", ".join(assignments),
            "ConditionExpression": expected["ConditionExpression"],
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": {**expected.get("ExpressionAttributeValues", {}), **to_dynamo(values)},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
    }
    _transact(table, [update, check])


@tracer.capture_method
def delete_user_giving_back_a_seat(table: Table, user: Key, org: Key, expects: tuple[Expect, ...] = ()) -> None:
    """Delete the user at ``user`` (if it exists and meets ``expects``) and subtract 1 from the
    ``org``'s seat count, in one transaction. Refused: action 0, the user (its item, if returned);
    action 1, the org, which has no count (its item, or None if it is missing)."""
    expected = serialized(condition(expects))
    expected["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    # The condition's parameters are shared with DeleteItem and UpdateItem, hence untyped.
    delete = cast("DeleteTypeDef", {"TableName": table.name, "Key": to_dynamo(user), **expected})
    request: list[TransactWriteItemTypeDef] = [
        {"Delete": delete},
        {
            "Update": {
                "TableName": table.name,
                "Key": to_dynamo(org),
                "UpdateExpression": "ADD #count :minus_one",
                "ConditionExpression": "attribute_exists(#count)",
                "ExpressionAttributeNames": {"#count": USER_COUNT},
                "ExpressionAttributeValues": to_dynamo({":minus_one": -1}),
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        },
    ]
    _transact(table, request)


def _transact(table: Table, request: "list[TransactWriteItemTypeDef]") -> None:
    """TransactWriteItems. Concurrent transactions on the same item cancel each other
    (TransactionConflict) and botocore does not retry that; we do, a few times with jittered
    backoff, so a race ends in one success and 409s, not 503s."""
    for attempt in range(_CONFLICT_ATTEMPTS):
        try:
            with translate():
                table.client.transact_write_items(TransactItems=request)
            return
        except ClientError as error:
            if not _lost_a_race(error):
                raise
        time.sleep(random.uniform(0, 0.05 * 2**attempt))
    raise ServiceUnavailable(CONTENDED)


def _lost_a_race(error: ClientError) -> bool:
    """True for a transaction another one cancelled (worth another try). A cancelled transaction
    raises ``ConditionFailed`` for the first action whose condition failed, with the item DynamoDB
    returned for it (or None), or 503 when DynamoDB throttled it; anything else is False."""
    # botocore's stubs type a cancellation's Item as one key/value pair; DynamoDB's is an attribute
    # map, so read it untyped.
    response = cast(dict[str, Any], error.response)
    if response["Error"]["Code"] != "TransactionCanceledException":
        return False
    details = response.get("CancellationReasons", [])
    reasons = [reason.get("Code") for reason in details]
    for action, reason in enumerate(details):
        if reason.get("Code") == "ConditionalCheckFailed":
            stored = from_dynamo(reason["Item"]) if "Item" in reason else None
            raise ConditionFailed(stored, action) from None
    if "TransactionConflict" in reasons:
        return True
    if set(reasons) & {"ThrottlingError", "ProvisionedThroughputExceeded"}:
        raise ServiceUnavailable(BUSY) from None
    return False
