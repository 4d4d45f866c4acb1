"""The data layer's batch writes: BatchWriteItem in batches of 25, with what DynamoDB left
unprocessed sent again."""

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from controlplane.dal.codec import to_dynamo
from controlplane.dal.conditions import Item
from controlplane.dal.keys import base_key
from controlplane.dal.table import BUSY, Table, translate
from controlplane.models.errors import ServiceUnavailable
from controlplane.observability import tracer

if TYPE_CHECKING:  # the stub packages are for the type checker only, never in Lambda
    from types_boto3_dynamodb.type_defs import WriteRequestTypeDef, WriteRequestUnionTypeDef

_BATCH_SIZE = 25
_BATCH_ATTEMPTS = 8


@tracer.capture_method
def delete_all(table: Table, items: list[Item]) -> None:
    """Delete items (or keys) whatever they hold: the cascade deletes."""
    write_all(table, [{"DeleteRequest": {"Key": to_dynamo(base_key(item))}} for item in items])


@tracer.capture_method
def put_all(table: Table, items: list[Item]) -> None:
    """Write items whatever is there (no item twice): the activity log, whose keys come from the
    events, so a batch sent again rewrites the same items."""
    write_all(table, [{"PutRequest": {"Item": to_dynamo(item)}} for item in items])


def write_all(table: Table, requests: "list[WriteRequestTypeDef]") -> None:
    """BatchWriteItem in batches of 25. DynamoDB may leave part of a batch unprocessed (throttled)
    without an error: that part is sent again with backoff, a bounded number of times."""
    for start in range(0, len(requests), _BATCH_SIZE):
        batch = requests[start : start + _BATCH_SIZE]
        pending: Mapping[str, Sequence[WriteRequestUnionTypeDef]] = {table.name: batch}
        for attempt in range(_BATCH_ATTEMPTS):
            with translate():
                pending = table.client.batch_write_item(RequestItems=pending).get("UnprocessedItems")
            if not pending:
                break
            time.sleep(min(0.05 * 2**attempt, 2))
        else:
            raise ServiceUnavailable(BUSY)
