"""The data layer's transactions: a write that succeeds only together with a condition on, or a
change to, another item (a ticket and its user; a user and their org's seat count: ``seats``).
Concurrent transactions on the same item cancel each other; a cancelled one is tried again a few
times. A refused one is reported as ``ConditionFailed``: which action, and the item DynamoDB
returned for it.
"""

import random
import time
import uuid
from typing import TYPE_CHECKING, Any, cast

from botocore.exceptions import ClientError

from controlplane.dal import sealing
from controlplane.dal.codec import from_dynamo, to_dynamo
from controlplane.dal.conditions import ConditionFailed, Expect, Item, condition
from controlplane.dal.schema import PARTITION_KEY
from controlplane.dal.table import BUSY, Key, Table, serialized, translate
from controlplane.models.errors import ServiceUnavailable
from controlplane.observability import tracer

if TYPE_CHECKING:  # the stub packages are for the type checker only, never in Lambda
    from types_boto3_dynamodb.type_defs import ConditionCheckTypeDef, TransactWriteItemTypeDef

_CONFLICT_ATTEMPTS = 4
CONTENDED = "Other requests kept changing the same items; retry later"


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
    transact(table, request)


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
    transact(table, [update, check])


@tracer.capture_method
def delete_with(table: Table, key: Key, expects: tuple[Expect, ...], beside: Key) -> None:
    """Delete the item at ``key`` if it exists and meets ``expects``, and ``beside`` (whatever it
    holds) with it, in one transaction (an org and its seat counter, if the org is still the one
    being deleted). Refused: action 0, the item."""
    request = serialized(condition(expects))
    transact(
        table,
        [
            {"Delete": {"TableName": table.name, "Key": to_dynamo(key), **request}},  # type: ignore[typeddict-item]
            {"Delete": {"TableName": table.name, "Key": to_dynamo(beside)}},
        ],
    )


def transact(table: Table, request: "list[TransactWriteItemTypeDef]") -> None:
    """TransactWriteItems. Concurrent transactions on the same item cancel each other
    (TransactionConflict) and botocore does not retry that; we do, a few times with jittered
    backoff, so a race ends in one success and 409s, not 503s. Each attempt has a client request
    token: botocore's own retry of an attempt whose answer was lost (a timeout) is then the same
    transaction to DynamoDB, which answers it as done instead of applying it again, or refusing it
    as if its own items were someone else's. A write that makes what a keyed create answers with
    completes the create's idempotency record too (``sealing``)."""
    seal = sealing.update()
    items = request if seal is None else [*request, seal]
    for attempt in range(_CONFLICT_ATTEMPTS):
        try:
            with translate():
                table.client.transact_write_items(TransactItems=items, ClientRequestToken=str(uuid.uuid4()))
            if seal is not None:
                sealing.settle(applied=True)
            return
        except ClientError as error:
            if seal is not None and _refused(error, len(request)):
                sealing.settle(applied=False)  # the record is another attempt's now: kept, not ours to delete
            try:
                again = _lost_a_race(error)
            except ConditionFailed as failed:
                if failed.action == len(request):  # the record alone: this attempt made nothing
                    raise sealing.Lost() from None
                raise  # refused for what it would make, as any create is (an org the other attempt made: 409)
            if not again:
                raise
        time.sleep(random.uniform(0, 0.05 * 2**attempt))
    raise ServiceUnavailable(CONTENDED)


def _refused(error: ClientError, action: int) -> bool:
    """True for a cancelled transaction whose action ``action`` failed its condition."""
    details = cast(dict[str, Any], error.response).get("CancellationReasons", [])
    return len(details) > action and details[action].get("Code") == "ConditionalCheckFailed"


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
