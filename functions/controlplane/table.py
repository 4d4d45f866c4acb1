"""The data layer: the only module that talks to DynamoDB.

Operations are domain-agnostic (put if absent, query a page, update if present...). Callers pass
the domain error to raise when a condition fails, so DynamoDB's error codes never leave this file.
"""

import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from boto3.dynamodb.types import TypeSerializer
from botocore.exceptions import ClientError

from controlplane import codec
from controlplane.errors import ApiError, ServiceUnavailable
from controlplane.keys import base_key
from controlplane.observability import tracer
from controlplane.schema import GSI1_NAME, GSI1_PARTITION_KEY, GSI1_SORT_KEY, PARTITION_KEY, SORT_KEY

_serializer = TypeSerializer()

# Raised once botocore's own retries are spent: the table is busy, not broken.
_THROTTLING = {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
_BATCH_SIZE = 25
_BATCH_ATTEMPTS = 8
_CONFLICT_ATTEMPTS = 4

Item = dict
Key = dict[str, str]


def _to_dynamo(item: dict) -> dict:
    return {name: _serializer.serialize(value) for name, value in item.items()}


_from_dynamo = codec.item  # the values boto3's TypeDeserializer returns, at a quarter of its cost


def _serialized(request: dict) -> dict:
    if "ExpressionAttributeValues" in request:
        return {**request, "ExpressionAttributeValues": _to_dynamo(request["ExpressionAttributeValues"])}
    return request


@dataclass(frozen=True)
class Expect:
    """A write condition beyond existence: the stored ``attribute`` must equal ``value``, else ``error``."""

    attribute: str
    value: object
    error: ApiError


class _Cancelled(Exception):
    """A transaction lost a race with another write to the same item; worth another try."""


@contextmanager
def _translate(
    condition_failed: ApiError | None = None,
    expects: tuple[Expect, ...] = (),
    cancelled: tuple[ApiError | None, ...] = (),
):
    """Turn DynamoDB's error codes into domain errors; anything unexpected propagates.

    - ConditionalCheckFailed: ``condition_failed`` (the item is missing, or already exists), unless
      DynamoDB returned the item (``ReturnValuesOnConditionCheckFailure``) and it fails one of
      ``expects``: then that expectation's error.
    - TransactionCanceled: the error of the first action whose condition failed, in order.
    """
    try:
        yield
    except ClientError as error:
        code = error.response["Error"]["Code"]
        if code == "ConditionalCheckFailedException" and condition_failed:
            stored = _from_dynamo(error.response.get("Item") or {})
            failed = (e.error for e in expects if stored and stored.get(e.attribute) != e.value)
            raise next(failed, condition_failed) from None
        if code == "TransactionCanceledException" and cancelled:
            reasons = [reason.get("Code") for reason in error.response.get("CancellationReasons", [])]
            for reason, domain_error in zip(reasons, cancelled, strict=False):
                if reason == "ConditionalCheckFailed" and domain_error:
                    raise domain_error from None
            if "TransactionConflict" in reasons:
                raise _Cancelled() from None
            if set(reasons) & {"ThrottlingError", "ProvisionedThroughputExceeded"}:
                raise ServiceUnavailable() from None
        if code in _THROTTLING:
            raise ServiceUnavailable() from None
        raise


def _condition(expects: tuple[Expect, ...]) -> dict:
    """``attribute_exists(PK)`` and every expectation, as request parameters."""
    names: dict = {"#pk": PARTITION_KEY}
    values: dict = {}
    clauses = ["attribute_exists(#pk)"]
    for i, expect in enumerate(expects):
        names[f"#e{i}"] = expect.attribute
        values[f":e{i}"] = expect.value
        clauses.append(f"#e{i} = :e{i}")
    request = {"ConditionExpression": " AND ".join(clauses), "ExpressionAttributeNames": names}
    if expects:
        request["ExpressionAttributeValues"] = values
        request["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return request


class Table:
    def __init__(self, client, name: str):
        self.client = client
        self.name = name

    @tracer.capture_method
    def get(self, key: Key) -> Item | None:
        with _translate():
            response = self.client.get_item(TableName=self.name, Key=_to_dynamo(key))
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
        self, key: Key, attribute: str, value: object, missing: ApiError, expects: tuple[Expect, ...] = ()
    ) -> Item:
        """Set ``attribute`` once (a second call keeps the first value); no version bump: a mark is
        the server's bookkeeping, not a client's change."""
        condition = _condition(expects)
        condition["ExpressionAttributeNames"]["#mark"] = attribute
        condition["ExpressionAttributeValues"] = condition.get("ExpressionAttributeValues", {}) | {":mark": value}
        with _translate(missing, expects):
            response = self.client.update_item(
                TableName=self.name,
                Key=_to_dynamo(key),
                UpdateExpression="SET #mark = if_not_exists(#mark, :mark)",
                ReturnValues="ALL_NEW",
                **_serialized(condition),
            )
        return _from_dynamo(response["Attributes"])

    @tracer.capture_method
    def put_child(
        self, parent: Key, item: Item, parent_missing: ApiError, exists: ApiError, parent_unmarked: str | None = None
    ) -> None:
        """Create ``item`` only if ``parent`` exists (and does not carry the mark ``parent_unmarked``)
        and ``item`` does not, in one transaction.

        Concurrent transactions on the same item cancel each other (TransactionConflict) and
        botocore does not retry that; we do, so a race ends in one 201 and 409s, not 503s.
        """
        names = {"#pk": PARTITION_KEY}
        parent_check = {
            "TableName": self.name,
            "Key": _to_dynamo(parent),
            "ConditionExpression": "attribute_exists(#pk)",
            "ExpressionAttributeNames": names,
        }
        if parent_unmarked:
            parent_check["ConditionExpression"] += " AND attribute_not_exists(#mark)"
            parent_check["ExpressionAttributeNames"] = {**names, "#mark": parent_unmarked}
        request = [
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
        for attempt in range(_CONFLICT_ATTEMPTS):
            try:
                with _translate(cancelled=(parent_missing, exists)):
                    self.client.transact_write_items(TransactItems=request)
                return
            except _Cancelled:
                time.sleep(random.uniform(0, 0.05 * 2**attempt))
        raise ServiceUnavailable()

    @tracer.capture_method
    def update(self, key: Key, changes: dict, now: str, missing: ApiError, expects: tuple[Expect, ...] = ()) -> Item:
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
    ) -> tuple[list[Item], Key | None]:
        """One page of one partition, of the table or of GSI1, optionally narrowed to a sort-key prefix."""
        pk, sk = (GSI1_PARTITION_KEY, GSI1_SORT_KEY) if on_index else (PARTITION_KEY, SORT_KEY)
        condition = "#pk = :pk"
        names = {"#pk": pk}
        values = {":pk": partition}
        if prefix:
            condition += " AND begins_with(#sk, :prefix)"
            names["#sk"] = sk
            values[":prefix"] = prefix
        request = {
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

    def query_all(self, partition: str, **options) -> Iterator[list[Item]]:
        """Every page of a partition, for the cascade deletes."""
        start_key = None
        while True:
            items, start_key = self.query(partition, limit=1000, start_key=start_key, **options)
            yield items
            if not start_key:
                return

    @tracer.capture_method
    def delete_all(self, items: list[Item]) -> None:
        """Delete items in batches of 25, retrying what DynamoDB left unprocessed, with backoff."""
        keys = [base_key(item) for item in items]
        for start in range(0, len(keys), _BATCH_SIZE):
            requests = {
                self.name: [{"DeleteRequest": {"Key": _to_dynamo(key)}} for key in keys[start : start + _BATCH_SIZE]]
            }
            for attempt in range(_BATCH_ATTEMPTS):
                with _translate():
                    requests = self.client.batch_write_item(RequestItems=requests).get("UnprocessedItems")
                if not requests:
                    break
                time.sleep(min(0.05 * 2**attempt, 2))
            else:
                raise ServiceUnavailable()
