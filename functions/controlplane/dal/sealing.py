"""An idempotent create completes its idempotency record in its own transaction.

Powertools' idempotency utility puts a request's record in progress, runs the request, then marks
the record completed with the response: the last write comes after the creation. A Lambda that ends
between the two (its timeout, a crash, a throttled update) leaves the record in progress, and once
that expires a resend with the same key runs again: a second ticket, or a 409 for an org or a unit
the first attempt made. So a create made in one transaction completes the record in it: the record
says COMPLETED, with the response a replay gets, exactly when the resource exists.

``controlplane.http.idempotency`` opens a ``Seal`` for a keyed create and claims the record it put;
logic names what a write makes (``making``); ``transactions.transact`` adds the record's update to
that write. The update holds only while the record is still this request's: one whose in-progress
time ran out and that a later attempt with the same key took over is not (``Lost``: nothing made).
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError
from pydantic import BaseModel

from controlplane.dal.codec import to_dynamo
from controlplane.dal.table import Key

if TYPE_CHECKING:  # the stub packages are for the type checker only, never in Lambda
    from types_boto3_dynamodb import DynamoDBClient
    from types_boto3_dynamodb.type_defs import TransactWriteItemTypeDef


@dataclass(frozen=True)
class Record:
    """The attributes of the idempotency record as its persistence layer stores them."""

    table: str
    status: str
    data: str
    expiry: str
    in_progress_expiry: str
    in_progress: str
    completed: str


@dataclass
class Seal:
    """A keyed create's record: ``response`` turns what the create made into the record's data (the
    JSON a replay answers with). ``key``, ``fence`` (the in-progress expiry it was put with) and
    ``expires`` are set once the request has put it (``claim``)."""

    record: Record
    response: Callable[[BaseModel], str]
    key: Key | None = None
    fence: int | None = None
    expires: int = 0
    made: BaseModel | None = field(default=None, repr=False)
    sealed: bool = False  # the record was completed with the creation
    lost: bool = False  # the record was another attempt's by the time of the write: nothing made

    def claim(self, key: Key, fence: int | None, expires: int) -> None:
        self.key, self.fence, self.expires = key, fence, expires


class Lost(Exception):
    """The create's transaction was refused because its idempotency record is another attempt's now."""


_TRANSACTION_CONFLICT = "TransactionConflictException"
_CONDITION_FAILED = "ConditionalCheckFailedException"
_open: ContextVar[Seal | None] = ContextVar("seal", default=None)


@contextmanager
def opened(seal: Seal) -> Iterator[Seal]:
    """``seal`` is the request's while the block runs."""
    token = _open.set(seal)
    try:
        yield seal
    finally:
        _open.reset(token)


@contextmanager
def making(resource: BaseModel) -> Iterator[None]:
    """The write in this block makes ``resource``: a keyed request completes its record in it."""
    seal = _open.get()
    if seal is not None:
        seal.made = resource
    try:
        yield
    finally:
        if seal is not None:
            seal.made = None


def update() -> "TransactWriteItemTypeDef | None":
    """The open seal's update of its record, for a write that makes something; None for none."""
    seal = _open.get()
    if seal is None or seal.made is None or seal.key is None:
        return None
    record = seal.record
    mine, names, values = _mine(seal)
    names |= {"#data": record.data, "#expiry": record.expiry}
    values |= {":completed": record.completed, ":data": seal.response(seal.made), ":expiry": seal.expires}
    return {
        "Update": {
            "TableName": record.table,
            "Key": to_dynamo(seal.key),
            "UpdateExpression": "SET #status = :completed, #data = :data, #expiry = :expiry",
            "ConditionExpression": mine,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": to_dynamo(values),
        }
    }


def release(seal: Seal, key: Key, client: "DynamoDBClient") -> None:
    """Delete the record (``key``, as claimed) of a create that failed, if it is still this request's
    in-progress record. A write whose answer was lost (timed out, or a 500, past botocore's retries:
    a 503) may have made the resource all the same, and completed the record with it: that record
    stays, for the resend the 503 asks for to replay, not to make the resource again."""
    mine, names, values = _mine(seal)
    try:
        client.delete_item(
            TableName=seal.record.table,
            Key=to_dynamo(key),
            ConditionExpression=mine,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=to_dynamo(values),
        )
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != _CONDITION_FAILED:
            raise


def _mine(seal: Seal) -> tuple[str, dict[str, str], dict[str, object]]:
    """The condition that the record is still the in-progress one this request put (``claim``), with
    its names and values."""
    record = seal.record
    names = {"#status": record.status, "#fence": record.in_progress_expiry}
    values: dict[str, object] = {":in_progress": record.in_progress}
    mine = "attribute_not_exists(#fence)"
    if seal.fence is not None:
        mine, values[":fence"] = "#fence = :fence", seal.fence
    return f"#status = :in_progress AND {mine}", names, values


def settle(applied: bool) -> None:
    """After the write that held ``update()``: its record is completed (``applied``), or lost."""
    seal = _open.get()
    if seal is not None:
        seal.sealed, seal.lost = applied, not applied


def in_a_transaction(error: BaseException | None) -> bool:
    """``error`` (or one it was raised from) is DynamoDB refusing a write to an item that another
    request's transaction holds: a resend's record put while the first attempt's creation seals it."""
    while error is not None:
        if isinstance(error, ClientError) and error.response.get("Error", {}).get("Code") == _TRANSACTION_CONFLICT:
            return True
        error = error.__cause__ or error.__context__
    return False
