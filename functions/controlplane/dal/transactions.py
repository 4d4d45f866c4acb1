"""The data layer's transactions: a write that succeeds only together with a condition on, or a
change to, another item (a ticket and its user; a user and their org's seat count). Concurrent
transactions on the same item cancel each other; a cancelled one is tried again a few times.
"""

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from botocore.exceptions import ClientError

from controlplane.dal.codec import from_dynamo, to_dynamo
from controlplane.dal.conditions import Expect, Item, condition, refused
from controlplane.dal.schema import PARTITION_KEY
from controlplane.dal.table import BUSY, Key, Table, serialized, translate
from controlplane.models.errors import ApiError, ServiceUnavailable
from controlplane.observability import tracer

if TYPE_CHECKING:  # the stub packages are for the type checker only, never in Lambda
    from types_boto3_dynamodb.type_defs import ConditionCheckTypeDef, DeleteTypeDef, TransactWriteItemTypeDef

_CONFLICT_ATTEMPTS = 4
CONTENDED = "Other requests kept changing the same items; retry later"

# What a transaction's action is refused with when its condition fails: an error, or a function of
# the item DynamoDB returned for it (None when there is none) that makes one.
Cancellation = ApiError | Callable[[Item | None], ApiError] | None


@dataclass(frozen=True)
class Counter:
    """A count of a parent item's children, kept on the parent beside the limit it may not pass."""

    count: str
    limit: str


@tracer.capture_method
def put_child(
    table: Table,
    parent: Key,
    item: Item,
    parent_missing: ApiError,
    exists: ApiError,
    parent_unmarked: str | None = None,
) -> None:
    """Create ``item`` only if ``parent`` exists (and does not carry the mark ``parent_unmarked``)
    and ``item`` does not, in one transaction."""
    names = {"#pk": PARTITION_KEY}
    parent_check: ConditionCheckTypeDef = {
        "TableName": table.name,
        "Key": to_dynamo(parent),
        "ConditionExpression": "attribute_exists(#pk)",
        "ExpressionAttributeNames": names,
    }
    if parent_unmarked:
        parent_check["ConditionExpression"] += " AND attribute_not_exists(#mark)"
        parent_check["ExpressionAttributeNames"] = {**names, "#mark": parent_unmarked}
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
    _transact(table, request, (parent_missing, exists))


@tracer.capture_method
def put_counted(
    table: Table,
    parent: Key,
    item: Item,
    counter: Counter,
    exists: ApiError,
    parent_refused: Callable[[Item | None], ApiError],
    parent_unmarked: str | None = None,
    parent_not: tuple[str, object] | None = None,
) -> None:
    """Create ``item`` and add 1 to ``parent``'s ``counter``, in one transaction, only if the item
    does not exist yet and the parent exists (without the mark ``parent_unmarked``, and without
    the attribute-value pair ``parent_not``) with its count below its limit. A refused parent is
    passed to ``parent_refused`` (None if missing), which names the error; a parent without a
    count is refused too (it was never counted)."""
    names = {"#pk": PARTITION_KEY, "#count": counter.count, "#limit": counter.limit}
    values: dict[str, object] = {":one": 1}
    parent_condition = "attribute_exists(#pk) AND #count < #limit"
    if parent_unmarked:
        parent_condition += " AND attribute_not_exists(#mark)"
        names["#mark"] = parent_unmarked
    if parent_not:
        parent_condition += " AND (attribute_not_exists(#not) OR #not <> :not)"
        names["#not"], values[":not"] = parent_not
    request: list[TransactWriteItemTypeDef] = [
        {  # first: an existing item is 409 already_exists, whatever the parent's count
            "Put": {
                "TableName": table.name,
                "Item": to_dynamo(item),
                "ConditionExpression": "attribute_not_exists(#pk)",
                "ExpressionAttributeNames": {"#pk": PARTITION_KEY},
            }
        },
        {
            "Update": {
                "TableName": table.name,
                "Key": to_dynamo(parent),
                "UpdateExpression": "ADD #count :one",
                "ConditionExpression": parent_condition,
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": to_dynamo(values),
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        },
    ]
    _transact(table, request, (exists, parent_refused))


@tracer.capture_method
def delete_counted(
    table: Table,
    key: Key,
    parent: Key,
    counter: Counter,
    missing: ApiError,
    parent_refused: Callable[[Item | None], ApiError],
    expects: tuple[Expect, ...] = (),
) -> None:
    """Delete the item at ``key`` (if it exists and meets ``expects``) and subtract 1 from
    ``parent``'s ``counter``, in one transaction; a parent without a count refuses."""
    expected = serialized(condition(expects))
    expected["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    # The condition's parameters are shared with DeleteItem and UpdateItem, hence untyped.
    delete = cast("DeleteTypeDef", {"TableName": table.name, "Key": to_dynamo(key), **expected})
    request: list[TransactWriteItemTypeDef] = [
        {"Delete": delete},
        {
            "Update": {
                "TableName": table.name,
                "Key": to_dynamo(parent),
                "UpdateExpression": "ADD #count :minus_one",
                "ConditionExpression": "attribute_exists(#count)",
                "ExpressionAttributeNames": {"#count": counter.count},
                "ExpressionAttributeValues": to_dynamo({":minus_one": -1}),
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        },
    ]
    _transact(table, request, (lambda stored: refused(missing, expects, stored), parent_refused))


def _transact(table: Table, request: "list[TransactWriteItemTypeDef]", cancelled: tuple[Cancellation, ...]) -> None:
    """TransactWriteItems. Concurrent transactions on the same item cancel each other
    (TransactionConflict) and botocore does not retry that; we do, a few times with jittered
    backoff, so a race ends in one success and 409s, not 503s."""
    for attempt in range(_CONFLICT_ATTEMPTS):
        try:
            with translate():
                table.client.transact_write_items(TransactItems=request)
            return
        except ClientError as error:
            if not _lost_a_race(error, cancelled):
                raise
        time.sleep(random.uniform(0, 0.05 * 2**attempt))
    raise ServiceUnavailable(CONTENDED)


def _lost_a_race(error: ClientError, cancelled: tuple[Cancellation, ...]) -> bool:
    """True for a transaction another one cancelled (worth another try). A cancelled transaction
    raises the error of the first action whose condition failed, in order (a function gets the item
    DynamoDB returned for it, or None), or 503 when DynamoDB throttled it; anything else is False."""
    # botocore's stubs type a cancellation's Item as one key/value pair; DynamoDB's is an attribute
    # map, so read it untyped.
    response = cast(dict[str, Any], error.response)
    if response["Error"]["Code"] != "TransactionCanceledException":
        return False
    details = response.get("CancellationReasons", [])
    reasons = [reason.get("Code") for reason in details]
    for reason, refusal in zip(details, cancelled, strict=False):
        if reason.get("Code") == "ConditionalCheckFailed" and refusal:
            stored = from_dynamo(reason["Item"]) if "Item" in reason else None
            raise (refusal if isinstance(refusal, ApiError) else refusal(stored)) from None
    if "TransactionConflict" in reasons:
        return True
    if set(reasons) & {"ThrottlingError", "ProvisionedThroughputExceeded"}:
        raise ServiceUnavailable(BUSY) from None
    return False
