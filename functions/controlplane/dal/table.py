"""The data layer's DynamoDB calls on one item or one partition, and the translation of DynamoDB's
error codes into domain errors.

Operations are domain-agnostic (put if absent, query a page, update if present...). Callers pass
the domain error to raise when a condition fails, so DynamoDB's error codes never leave the data
layer. Transactions are in ``transactions``, batch writes in ``batches``.

Not wrapped in tracer subsegments of their own: each method is one DynamoDB call, which the
tracer's patched botocore already records as a subsegment (operation, table, duration), and a
wrapper would add its cost to every request and put the items it returns in the trace's metadata.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

from botocore.exceptions import ClientError

from controlplane import config
from controlplane.dal.codec import from_dynamo, to_dynamo
from controlplane.dal.conditions import ConditionFailed, Expect, Item, Params, condition
from controlplane.dal.schema import (
    GSI1_NAME,
    GSI1_PARTITION_KEY,
    GSI1_SORT_KEY,
    GSI2_NAME,
    GSI2_PARTITION_KEY,
    GSI2_SORT_KEY,
    PARTITION_KEY,
    SORT_KEY,
)
from controlplane.models.errors import ServiceUnavailable

if TYPE_CHECKING:  # the stub packages are for the type checker only, never in Lambda
    from types_boto3_dynamodb import DynamoDBClient
    from types_boto3_dynamodb.type_defs import QueryInputTypeDef

# Raised once botocore's own retries are spent: the table is busy, not broken. A transaction sent
# again with its client request token while its first attempt is still being applied is
# TransactionInProgressException, which botocore retries as throttling too.
THROTTLING = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "TransactionInProgressException",
}
BUSY = "The database is busy; retry later"

Key = dict[str, str]
_INDEX_KEYS = {GSI1_NAME: (GSI1_PARTITION_KEY, GSI1_SORT_KEY), GSI2_NAME: (GSI2_PARTITION_KEY, GSI2_SORT_KEY)}


def serialized(request: Params) -> Params:
    if "ExpressionAttributeValues" in request:
        return {**request, "ExpressionAttributeValues": to_dynamo(request["ExpressionAttributeValues"])}
    return request


@contextmanager
def translate() -> Iterator[None]:
    """Turn DynamoDB's error codes into ours; anything unexpected propagates.

    - ConditionalCheckFailed: ``ConditionFailed`` with the item DynamoDB returned, if it did.
    - Throttling, once botocore's retries are spent: 503.
    """
    try:
        yield
    except ClientError as error:
        # botocore's stubs type an error response for every service: no Item. DynamoDB's is an
        # attribute map, so read it untyped.
        response = cast(dict[str, Any], error.response)
        code = response["Error"]["Code"]
        if code == "ConditionalCheckFailedException":
            raise ConditionFailed(from_dynamo(response["Item"]) if response.get("Item") else None) from None
        if code in THROTTLING:
            raise ServiceUnavailable(BUSY) from None
        raise


def update_request(
    key: Key,
    changes: Item,
    now: str,
    expects: tuple[Expect, ...] = (),
    *,
    kept: frozenset[str] = frozenset(),
    removed: tuple[str, ...] = (),
) -> Params:
    """``Table.update``'s parameters (key, expression, condition), also for an Update in a transaction."""
    names = {"#updated_at": "updated_at", "#version": "version"}
    values = {":now": now, ":one": 1}
    assignments = ["#updated_at = :now", "#version = #version + :one"]
    for i, (field, value) in enumerate(changes.items()):
        names[f"#f{i}"] = field
        values[f":f{i}"] = value
        assignments.append(f"#f{i} = if_not_exists(#f{i}, :f{i})" if field in kept else f"#f{i} = :f{i}")
    names |= {f"#r{i}": field for i, field in enumerate(removed)}
    removal = f" REMOVE {', '.join(f'#r{i}' for i in range(len(removed)))}" if removed else ""
    request = condition(expects)
    request["ExpressionAttributeNames"] |= names
    request["ExpressionAttributeValues"] = request.get("ExpressionAttributeValues", {}) | values
    request["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return {"Key": to_dynamo(key), "UpdateExpression": "SET " + ", ".join(assignments) + removal, **serialized(request)}


def api_table() -> "Table":
    """The API functions' table, from their settings (which include the cursor secret)."""
    return Table(config.dynamodb(), config.settings().table_name)


class Table:
    def __init__(self, client: "DynamoDBClient", name: str):
        self.client = client
        self.name = name

    def get(self, key: Key, consistent: bool = False) -> Item | None:
        with translate():
            response = self.client.get_item(TableName=self.name, Key=to_dynamo(key), ConsistentRead=consistent)
        return from_dynamo(response["Item"]) if "Item" in response else None

    def get_many(self, keys: list[Key]) -> list[Item | None]:
        """Items by key, strongly consistent, in one BatchGetItem (at most 100 keys of a few items:
        nothing is left unprocessed in practice; what is, is read again). None for a missing one."""
        wanted = [to_dynamo(key) for key in keys]
        found: dict[tuple[str, str], Item] = {}
        pending: Any = {self.name: {"Keys": wanted, "ConsistentRead": True}}
        while pending:
            with translate():
                response = self.client.batch_get_item(RequestItems=pending)
            for raw in response["Responses"].get(self.name, []):
                item = from_dynamo(raw)
                found[(item[PARTITION_KEY], item[SORT_KEY])] = item
            pending = response.get("UnprocessedKeys")
        return [found.get((key[PARTITION_KEY], key[SORT_KEY])) for key in keys]

    def put(self, item: Item) -> None:
        """Write ``item`` whatever is there (the cascade's own bookkeeping)."""
        with translate():
            self.client.put_item(TableName=self.name, Item=to_dynamo(item))

    def mark(
        self,
        key: Key,
        attribute: str,
        value: object,
        expects: tuple[Expect, ...] = (),
        alongside: dict[str, Any] | None = None,
        *,
        overwrite: bool = False,
    ) -> Item:
        """Set ``attribute`` (and the ``alongside`` attributes) once: a second call keeps the first
        values, unless it is to ``overwrite`` them. No version bump: a mark is the server's
        bookkeeping, not a client's change."""
        marks = {attribute: value, **(alongside or {})}
        request = condition(expects)
        request["ExpressionAttributeNames"] |= {f"#m{i}": name for i, name in enumerate(marks)}
        request["ExpressionAttributeValues"] = request.get("ExpressionAttributeValues", {}) | {
            f":m{i}": mark for i, mark in enumerate(marks.values())
        }
        assignments = ", ".join(
            f"#m{i} = :m{i}" if overwrite else f"#m{i} = if_not_exists(#m{i}, :m{i})" for i in range(len(marks))
        )
        with translate():
            response = self.client.update_item(
                TableName=self.name,
                Key=to_dynamo(key),
                UpdateExpression=f"SET {assignments}",
                ReturnValues="ALL_NEW",
                **serialized(request),
            )
        return from_dynamo(response["Attributes"])

    def update(
        self,
        key: Key,
        changes: Item,
        now: str,
        expects: tuple[Expect, ...] = (),
        *,
        kept: frozenset[str] = frozenset(),
        removed: tuple[str, ...] = (),
    ) -> Item:
        """Set ``changes``, stamp ``updated_at`` and bump ``version``, only if the item exists and
        meets ``expects`` (e.g. its owner, its version). Changes named in ``kept`` are set only where
        the item has none yet; the ``removed`` attributes go."""
        with translate():
            response = self.client.update_item(
                TableName=self.name,
                ReturnValues="ALL_NEW",
                **update_request(key, changes, now, expects, kept=kept, removed=removed),
            )
        return from_dynamo(response["Attributes"])

    def delete(self, key: Key, expects: tuple[Expect, ...] = ()) -> None:
        """Delete the item at ``key`` if it exists and meets ``expects`` (else ``ConditionFailed``)."""
        with translate():
            self.client.delete_item(TableName=self.name, Key=to_dynamo(key), **serialized(condition(expects)))

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
        index: str | None = None,
        consistent: bool = False,
    ) -> tuple[list[Item], Key | None]:
        """One page of one partition, of the table or of an index (``on_index``: GSI1; or ``index``
        by name), optionally narrowed to a sort-key prefix or to the sort keys ``between`` two
        bounds (both included)."""
        index = index or (GSI1_NAME if on_index else None)
        pk, sk = _INDEX_KEYS[index] if index else (PARTITION_KEY, SORT_KEY)
        key_condition = "#pk = :pk"
        names = {"#pk": pk}
        values = {":pk": partition}
        if prefix:
            key_condition += " AND begins_with(#sk, :prefix)"
            names["#sk"] = sk
            values[":prefix"] = prefix
        elif between:
            key_condition += " AND #sk BETWEEN :low AND :high"
            names["#sk"] = sk
            values[":low"], values[":high"] = between
        request: QueryInputTypeDef = {
            "TableName": self.name,
            "KeyConditionExpression": key_condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": to_dynamo(values),
            "Limit": limit,
            "ScanIndexForward": not newest_first,
        }
        if consistent:
            request["ConsistentRead"] = True
        if index:
            request["IndexName"] = index
        if start_key:
            request["ExclusiveStartKey"] = to_dynamo(start_key)
        with translate():
            response = self.client.query(**request)
        last = response.get("LastEvaluatedKey")
        return [from_dynamo(item) for item in response["Items"]], from_dynamo(last) if last else None

    def query_all(self, partition: str, **options: Any) -> Iterator[list[Item]]:
        """Every page of a partition, for the cascade deletes."""
        start_key = None
        while True:
            items, start_key = self.query(partition, limit=1000, start_key=start_key, **options)
            yield items
            if not start_key:
                return

    def parent_first(
        self,
        partition: str,
        parent: str,
        limit: int,
        on_index: bool = False,
        newest_first: bool = False,
        between: tuple[str, str] | None = None,
    ) -> tuple[Item, list[Item], bool] | None:
        """A parent item and the first ``limit`` items after it in its collection (or in the sort-key
        range ``between``), in one request: the parent sorts first (an org before its users, a user
        before its tickets newest-first). The parent's ``entity`` is ``parent``; None
        without it. The flag says whether more items follow."""
        found, last = self.query(
            partition, limit=limit + 1, on_index=on_index, newest_first=newest_first, between=between
        )
        if not found or found[0]["entity"] != parent:
            return None
        return found[0], found[1:], last is not None
