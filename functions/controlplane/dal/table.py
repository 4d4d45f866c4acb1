"""The data layer: the only module that talks to DynamoDB.

Operations are domain-agnostic (put if absent, query a page, update if present...). Callers pass
the domain error to raise when a condition fails, so DynamoDB's error codes never leave this file.
"""

import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from boto3.dynamodb.types import TypeSerializer
from botocore.exceptions import ClientError

from controlplane.dal import codec
from controlplane.dal.keys import base_key
from controlplane.dal.schema import GSI1_NAME, GSI1_PARTITION_KEY, GSI1_SORT_KEY, PARTITION_KEY, SORT_KEY
from controlplane.models.errors import ApiError, ServiceUnavailable
from controlplane.observability import tracer

if TYPE_CHECKING:  # the stub packages are for the type checker only, never in Lambda
    from types_boto3_dynamodb import DynamoDBClient
    from types_boto3_dynamodb.type_defs import (
        AttributeValueTypeDef,
        ConditionCheckTypeDef,
        DeleteTypeDef,
        QueryInputTypeDef,
        TransactWriteItemTypeDef,
        WriteRequestTypeDef,
        WriteRequestUnionTypeDef,
    )

_serializer = TypeSerializer()

# Raised once botocore's own retries are spent: the table is busy, not broken.
_THROTTLING = {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
_BATCH_SIZE = 25
_BATCH_ATTEMPTS = 8
_CONFLICT_ATTEMPTS = 4

# A stored item, deserialized. Any: an attribute holds whatever DynamoDB stores (str, Decimal,
# list, set, map...), and each resource module knows its own items' attributes.
Item = dict[str, Any]
Key = dict[str, str]
# Request parameters shared by several operations (condition, names, values), spread into the call.
# Any: each operation's own TypedDict differs, and the values here are not serialized yet.
Params = dict[str, Any]
Dynamo = dict[str, "AttributeValueTypeDef"]


def _to_dynamo(item: Item) -> Dynamo:
    return {name: _serializer.serialize(value) for name, value in item.items()}


_from_dynamo = codec.item  # the values boto3's TypeDeserializer returns, at a quarter of its cost


def image(raw: Mapping[str, Any]) -> Item:
    """An item from a stream record's image (Keys, OldImage, NewImage): DynamoDB's attribute-value form."""
    return _from_dynamo(raw)


def _serialized(request: Params) -> Params:
    if "ExpressionAttributeValues" in request:
        return {**request, "ExpressionAttributeValues": _to_dynamo(request["ExpressionAttributeValues"])}
    return request


Refusal = ApiError | Callable[[Item], ApiError]


def _refusal(error: Refusal, stored: Item) -> ApiError:
    return error if isinstance(error, ApiError) else error(stored)


@dataclass(frozen=True)
class Expect:
    """A write condition beyond existence: the stored ``attribute`` must equal ``value`` (or, with
    ``at_most``, be at most ``value`` where it is stored at all), else ``error``: an error, or a
    function of the stored item that makes one (to say by how much it failed)."""

    attribute: str
    value: object
    error: Refusal
    at_most: bool = False

    def met_by(self, stored: Item) -> bool:
        if self.at_most:
            return self.attribute not in stored or stored[self.attribute] <= self.value
        return stored.get(self.attribute) == self.value

    def clause(self, name: str, value: str) -> str:
        return f"(attribute_not_exists({name}) OR {name} <= {value})" if self.at_most else f"{name} = {value}"


@dataclass(frozen=True)
class Counter:
    """A count of a parent item's children, kept on the parent beside the limit it may not pass."""

    count: str
    limit: str


def _refused(missing: ApiError, expects: tuple[Expect, ...], stored: Item | None) -> ApiError:
    """Why a write whose condition failed was refused: the first expectation the stored item
    fails, else ``missing`` (no item, or none returned)."""
    failed = (_refusal(e.error, stored) for e in expects if stored and not e.met_by(stored))
    return next(failed, missing)


# What a transaction's action is refused with when its condition fails (see ``_translate``).
Cancellation = ApiError | Callable[[Item | None], ApiError] | None


class _Cancelled(Exception):
    """A transaction lost a race with another write to the same item; worth another try."""


@contextmanager
def _translate(
    condition_failed: ApiError | None = None,
    expects: tuple[Expect, ...] = (),
    cancelled: tuple[Cancellation, ...] = (),
) -> Iterator[None]:
    """Turn DynamoDB's error codes into domain errors; anything unexpected propagates.

    - ConditionalCheckFailed: ``condition_failed`` (the item is missing, or already exists), unless
      DynamoDB returned the item (``ReturnValuesOnConditionCheckFailure``) and it fails one of
      ``expects``: then that expectation's error.
    - TransactionCanceled: the error of the first action whose condition failed, in order; a
      function gets the item DynamoDB returned for it (``ReturnValuesOnConditionCheckFailure``), or
      None when there is none.
    """
    try:
        yield
    except ClientError as error:
        # botocore's stubs type an error response for every service: no Item, and a cancellation's
        # Item as one key/value pair. DynamoDB's are attribute maps, so read it untyped.
        response = cast(dict[str, Any], error.response)
        code = response["Error"]["Code"]
        if code == "ConditionalCheckFailedException" and condition_failed:
            raise _refused(condition_failed, expects, _from_dynamo(response.get("Item") or {})) from None
        if code == "TransactionCanceledException" and cancelled:
            details = response.get("CancellationReasons", [])
            reasons = [reason.get("Code") for reason in details]
            for reason, refusal in zip(details, cancelled, strict=False):
                if reason.get("Code") == "ConditionalCheckFailed" and refusal:
                    stored = _from_dynamo(reason["Item"]) if "Item" in reason else None
                    raise (refusal if isinstance(refusal, ApiError) else refusal(stored)) from None
            if "TransactionConflict" in reasons:
                raise _Cancelled() from None
            if set(reasons) & {"ThrottlingError", "ProvisionedThroughputExceeded"}:
                raise ServiceUnavailable() from None
        if code in _THROTTLING:
            raise ServiceUnavailable() from None
        raise


def _condition(expects: tuple[Expect, ...]) -> Params:
    """``attribute_exists(PK)`` and every expectation, as request parameters."""
    names: dict[str, str] = {"#pk": PARTITION_KEY}
    values: dict[str, object] = {}
    clauses = ["attribute_exists(#pk)"]
    for i, expect in enumerate(expects):
        names[f"#e{i}"] = expect.attribute
        values[f":e{i}"] = expect.value
        clauses.append(expect.clause(f"#e{i}", f":e{i}"))
    request: Params = {"ConditionExpression": " AND ".join(clauses), "ExpressionAttributeNames": names}
    if expects:
        request["ExpressionAttributeValues"] = values
        request["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return request


class Table:
    def __init__(self, client: "DynamoDBClient", name: str):
        self.client = client
        self.name = name

    @tracer.capture_method
    def get(self, key: Key, consistent: bool = False) -> Item | None:
        with _translate():
            response = self.client.get_item(TableName=self.name, Key=_to_dynamo(key), ConsistentRead=consistent)
        return _from_dynamo(response["Item"]) if "Item" in response else None

    @tracer.capture_method
    def put_new(self, item: Item, exists: ApiError) -> None:
        with _translate(exists):
            self.client.put_item(
                TableName=self.name,
                Item=_to_dynamo(item),
                ConditionExpression="attribute_not_exists(#pk)",
                ExpressionAttributeNames={"#pk": PARTITION_KEY},
            )

    @tracer.capture_method
    def put(self, item: Item) -> None:
        """Write ``item`` whatever is there (the cascade's own bookkeeping)."""
        with _translate():
            self.client.put_item(TableName=self.name, Item=_to_dynamo(item))

    @tracer.capture_method
    def mark(
        self,
        key: Key,
        attribute: str,
        value: object,
        missing: ApiError,
        expects: tuple[Expect, ...] = (),
        alongside: dict[str, Any] | None = None,
    ) -> Item:
        """Set ``attribute`` (and the ``alongside`` attributes) once: a second call keeps the first
        values. No version bump: a mark is the server's bookkeeping, not a client's change."""
        marks = {attribute: value, **(alongside or {})}
        condition = _condition(expects)
        condition["ExpressionAttributeNames"] |= {f"#m{i}": name for i, name in enumerate(marks)}
        condition["ExpressionAttributeValues"] = condition.get("ExpressionAttributeValues", {}) | {
            f":m{i}": mark for i, mark in enumerate(marks.values())
        }
        assignments = ", ".join(f"#m{i} = if_not_exists(#m{i}, :m{i})" for i in range(len(marks)))
        with _translate(missing, expects):
            response = self.client.update_item(
                TableName=self.name,
                Key=_to_dynamo(key),
                UpdateExpression=f"SET {assignments}",
                ReturnValues="ALL_NEW",
                **_serialized(condition),
            )
        return _from_dynamo(response["Attributes"])

    @tracer.capture_method
    def put_child(
        self, parent: Key, item: Item, parent_missing: ApiError, exists: ApiError, parent_unmarked: str | None = None
    ) -> None:
        """Create ``item`` only if ``parent`` exists (and does not carry the mark ``parent_unmarked``)
        and ``item`` does not, in one transaction."""
        names = {"#pk": PARTITION_KEY}
        parent_check: ConditionCheckTypeDef = {
            "TableName": self.name,
            "Key": _to_dynamo(parent),
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
                    "TableName": self.name,
                    "Item": _to_dynamo(item),
                    "ConditionExpression": "attribute_not_exists(#pk)",
                    "ExpressionAttributeNames": names,
                }
            },
        ]
        self._transact(request, (parent_missing, exists))

    @tracer.capture_method
    def put_counted(
        self,
        parent: Key,
        item: Item,
        counter: Counter,
        exists: ApiError,
        parent_refused: Callable[[Item | None], ApiError],
        parent_unmarked: str | None = None,
    ) -> None:
        """Create ``item`` and add 1 to ``parent``'s ``counter``, in one transaction, only if the item
        does not exist yet and the parent exists (without the mark ``parent_unmarked``) with its
        count below its limit. A refused parent is passed to ``parent_refused`` (None if missing),
        which names the error; a parent without a count is refused too (it was never counted)."""
        names = {"#pk": PARTITION_KEY, "#count": counter.count, "#limit": counter.limit}
        condition = "attribute_exists(#pk) AND #count < #limit"
        if parent_unmarked:
            condition += " AND attribute_not_exists(#mark)"
            names["#mark"] = parent_unmarked
        request: list[TransactWriteItemTypeDef] = [
            {  # first: an existing item is 409 already_exists, whatever the parent's count
                "Put": {
                    "TableName": self.name,
                    "Item": _to_dynamo(item),
                    "ConditionExpression": "attribute_not_exists(#pk)",
                    "ExpressionAttributeNames": {"#pk": PARTITION_KEY},
                }
            },
            {
                "Update": {
                    "TableName": self.name,
                    "Key": _to_dynamo(parent),
                    "UpdateExpression": "ADD #count :one",
                    "ConditionExpression": condition,
                    "ExpressionAttributeNames": names,
                    "ExpressionAttributeValues": _to_dynamo({":one": 1}),
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                }
            },
        ]
        self._transact(request, (exists, parent_refused))

    @tracer.capture_method
    def delete_counted(
        self,
        key: Key,
        parent: Key,
        counter: Counter,
        missing: ApiError,
        parent_refused: Callable[[Item | None], ApiError],
        expects: tuple[Expect, ...] = (),
    ) -> None:
        """Delete the item at ``key`` (if it exists and meets ``expects``) and subtract 1 from
        ``parent``'s ``counter``, in one transaction; a parent without a count refuses."""
        condition = _serialized(_condition(expects))
        condition["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        # The condition's parameters are shared with DeleteItem and UpdateItem, hence untyped.
        delete = cast("DeleteTypeDef", {"TableName": self.name, "Key": _to_dynamo(key), **condition})
        request: list[TransactWriteItemTypeDef] = [
            {"Delete": delete},
            {
                "Update": {
                    "TableName": self.name,
                    "Key": _to_dynamo(parent),
                    "UpdateExpression": "ADD #count :minus_one",
                    "ConditionExpression": "attribute_exists(#count)",
                    "ExpressionAttributeNames": {"#count": counter.count},
                    "ExpressionAttributeValues": _to_dynamo({":minus_one": -1}),
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                }
            },
        ]
        self._transact(request, (lambda stored: _refused(missing, expects, stored), parent_refused))

    def _transact(self, request: "list[TransactWriteItemTypeDef]", cancelled: tuple[Cancellation, ...]) -> None:
        """TransactWriteItems. Concurrent transactions on the same item cancel each other
        (TransactionConflict) and botocore does not retry that; we do, a few times with jittered
        backoff, so a race ends in one success and 409s, not 503s."""
        for attempt in range(_CONFLICT_ATTEMPTS):
            try:
                with _translate(cancelled=cancelled):
                    self.client.transact_write_items(TransactItems=request)
                return
            except _Cancelled:
                time.sleep(random.uniform(0, 0.05 * 2**attempt))
        raise ServiceUnavailable()

    @tracer.capture_method
    def update(self, key: Key, changes: Item, now: str, missing: ApiError, expects: tuple[Expect, ...] = ()) -> Item:
        """Set ``changes``, stamp ``updated_at`` and bump ``version``, only if the item exists and
        meets ``expects`` (e.g. its owner, its version)."""
        names = {"#updated_at": "updated_at", "#version": "version"}
        values = {":now": now, ":one": 1}
        assignments = ["#updated_at = :now", "#version = #version + :one"]
        for i, (field, value) in enumerate(changes.items()):
            names[f"#f{i}"] = field
            values[f":f{i}"] = value
            assignments.append(f"#f{i} = :f{i}")
        condition = _condition(expects)
        condition["ExpressionAttributeNames"] |= names
        condition["ExpressionAttributeValues"] = condition.get("ExpressionAttributeValues", {}) | values
        with _translate(missing, expects):
            response = self.client.update_item(
                TableName=self.name,
                Key=_to_dynamo(key),
                UpdateExpression="SET " + ", ".join(assignments),
                ReturnValues="ALL_NEW",
                **_serialized(condition),
            )
        return _from_dynamo(response["Attributes"])

    @tracer.capture_method
    def delete(self, key: Key, missing: ApiError, expects: tuple[Expect, ...] = ()) -> None:
        with _translate(missing, expects):
            self.client.delete_item(TableName=self.name, Key=_to_dynamo(key), **_serialized(_condition(expects)))

    @tracer.capture_method
    def query(
        self,
        partition: str,
        *,
        limit: int,
        start_key: Key | None = None,
        prefix: str | None = None,
        on_index: bool = False,
        newest_first: bool = False,
        between: tuple[str, str] | None = None,
    ) -> tuple[list[Item], Key | None]:
        """One page of one partition, of the table or of GSI1, optionally narrowed to a sort-key
        prefix or to the sort keys ``between`` two bounds (both included)."""
        pk, sk = (GSI1_PARTITION_KEY, GSI1_SORT_KEY) if on_index else (PARTITION_KEY, SORT_KEY)
        condition = "#pk = :pk"
        names = {"#pk": pk}
        values = {":pk": partition}
        if prefix:
            condition += " AND begins_with(#sk, :prefix)"
            names["#sk"] = sk
            values[":prefix"] = prefix
        elif between:
            condition += " AND #sk BETWEEN :low AND :high"
            names["#sk"] = sk
            values[":low"], values[":high"] = between
        request: QueryInputTypeDef = {
            "TableName": self.name,
            "KeyConditionExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": _to_dynamo(values),
            "Limit": limit,
            "ScanIndexForward": not newest_first,
        }
        if on_index:
            request["IndexName"] = GSI1_NAME
        if start_key:
            request["ExclusiveStartKey"] = _to_dynamo(start_key)
        with _translate():
            response = self.client.query(**request)
        last = response.get("LastEvaluatedKey")
        return [_from_dynamo(item) for item in response["Items"]], _from_dynamo(last) if last else None

    @tracer.capture_method
    def count(self, partition: str, prefix: str) -> int:
        """How many items of a partition have a sort key starting with ``prefix``; every page,
        strongly consistent (the user-count migration counts what is there, not what was)."""
        total, start_key = 0, None
        while True:
            request: QueryInputTypeDef = {
                "TableName": self.name,
                "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :prefix)",
                "ExpressionAttributeNames": {"#pk": PARTITION_KEY, "#sk": SORT_KEY},
                "ExpressionAttributeValues": _to_dynamo({":pk": partition, ":prefix": prefix}),
                "Select": "COUNT",
                "ConsistentRead": True,
            }
            if start_key:
                request["ExclusiveStartKey"] = start_key
            with _translate():
                response = self.client.query(**request)
            total += response["Count"]
            start_key = response.get("LastEvaluatedKey")
            if not start_key:
                return total

    @tracer.capture_method
    def start_counter(self, key: Key, counter: Counter, count: int, limit: int) -> bool:
        """Give an item that has no ``counter`` yet its count, and its limit unless it has one; False
        (nothing written) if the item is gone or already counted, so running it again is safe."""
        try:
            with _translate():
                self.client.update_item(
                    TableName=self.name,
                    Key=_to_dynamo(key),
                    UpdateExpression="SET #count = :count, #limit = if_not_exists(#limit, :limit)",
                    ConditionExpression="attribute_exists(#pk) AND attribute_not_exists(#count)",
                    ExpressionAttributeNames={"#pk": PARTITION_KEY, "#count": counter.count, "#limit": counter.limit},
                    ExpressionAttributeValues=_to_dynamo({":count": count, ":limit": limit}),
                )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def query_all(self, partition: str, **options: Any) -> Iterator[list[Item]]:
        """Every page of a partition, for the cascade deletes."""
        start_key = None
        while True:
            items, start_key = self.query(partition, limit=1000, start_key=start_key, **options)
            yield items
            if not start_key:
                return

    @tracer.capture_method
    def put_all(self, items: list[Item]) -> None:
        """Write items whatever is there (bulk loads: the benchmarks, the tests), in batches."""
        self._write_all([{"PutRequest": {"Item": _to_dynamo(item)}} for item in items])

    @tracer.capture_method
    def delete_all(self, items: list[Item]) -> None:
        self._write_all([{"DeleteRequest": {"Key": _to_dynamo(base_key(item))}} for item in items])

    def _write_all(self, requests: "list[WriteRequestTypeDef]") -> None:
        """BatchWriteItem in batches of 25. DynamoDB may leave part of a batch unprocessed (throttled)
        without an error: that part is sent again with backoff, a bounded number of times."""
        for start in range(0, len(requests), _BATCH_SIZE):
            batch = requests[start : start + _BATCH_SIZE]
            pending: Mapping[str, Sequence[WriteRequestUnionTypeDef]] = {self.name: batch}
            for attempt in range(_BATCH_ATTEMPTS):
                with _translate():
                    pending = self.client.batch_write_item(RequestItems=pending).get("UnprocessedItems")
                if not pending:
                    break
                time.sleep(min(0.05 * 2**attempt, 2))
            else:
                raise ServiceUnavailable()
