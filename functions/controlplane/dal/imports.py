"""A user import's items: the import (``USER_IMPORT#<id>``) and its rows in parts of
``PART_ROWS`` (``USER_IMPORT#<id>#PART#<n>``), all in the org's partition.

Why parts: 10,000 rows are about 1.5 MB, and an item holds at most 400 KB.

How big a part gets, whatever the body (the route takes 2,900 KiB, about 30 KB a row for a part of 97):
a row to do holds a valid user (user_id and unit 63 characters each, name 128 characters, up to
512 bytes, e-mail 254: under 1 KB); a refused row, its user_id cut to 64 characters and its reason
to 300 (``models.imports.refusal``, fewer where escapes take more room in the answer: under 1.6 KB
in UTF-8). Then the job adds, per row, a created user_id (twice: ``taken`` and ``created``) or a
refusal, and per user a sign-in failure (300 characters): 97 rows stay under 300 KB. A part holds its rows
(until the job is done with them), what became of them (the users created, the rows refused, the
sign-ins tried and failed) and how far the job got (``decided``: its rows are; ``signed``: sign-ins
tried). Each step of the job moves a part on with one UpdateItem, on condition that the part is
still where the step found it: a job delivered twice does each step once.
"""

from typing import TYPE_CHECKING, Any

from controlplane.dal import batches, keys, seats
from controlplane.dal.codec import from_dynamo, to_dynamo
from controlplane.dal.conditions import ConditionFailed, Item
from controlplane.dal.schema import PARTITION_KEY, SORT_KEY
from controlplane.dal.table import Key, Table, translate
from controlplane.dal.transactions import transact
from controlplane.observability import tracer

if TYPE_CHECKING:  # the stub packages are for the type checker only, never in Lambda
    from types_boto3_dynamodb.type_defs import TransactWriteItemTypeDef, UpdateTypeDef

# One transaction's worth: the users of a part go in with one write of the org's seat counter, and
# a check that the part is not decided yet (``undecided``), which takes one user's place.
PART_ROWS = seats.MOST_USERS_AT_ONCE - 1
# An import is ``storing`` while the request writes its parts (read as missing, and no job runs it),
# then runs until every row is decided and every sign-in made or tried enough times.
STORING, RUNNING, DONE = "storing", "running", "done"
PART = "user_import_part"


def part_key(org_id: str, import_id: str, part: int) -> Key:
    return {
        **keys.import_key(org_id, import_id),
        SORT_KEY: f"{keys.import_key(org_id, import_id)[SORT_KEY]}#PART#{part:04d}",
    }


@tracer.capture_method
def create(table: Table, record: Item, parts: list[Item]) -> Item:
    """The import (``record``, ``storing``) first, then its parts, then the import ``running`` in one
    transaction with a check that its org exists, is not being deleted and is not suspended (as a
    user's create checks, ``seats.org_open``): no part is ever stored without its import, an import
    is read (and run) only once all its parts are, and none outlives
    its org (a delete that marked the org after the check finds the import ``running`` and deletes
    it; one that marked it before refuses it here). If a write fails or is refused, what was written
    goes before the error is raised (refused: ``ConditionFailed``, action 1 the org's check, with
    the org if it is there); after a crash half-way, the import stays ``storing``, read as missing,
    and goes with its org. The import as it is now stored."""
    table.put(record)
    try:
        batches.put_all(table, parts)
        org_id = record["org_id"]
        transact(
            table, [{"Update": _advance_request(table, record, {"status": RUNNING})}, seats.org_open(table, org_id)]
        )
    except Exception:  # cleaned up, then raised as it was
        discard(table, record, parts)
        raise
    return {**record, "status": RUNNING, "version": int(record["version"]) + 1}


@tracer.capture_method
def discard(table: Table, record: Item, parts: list[Item]) -> None:
    """Delete an import and its parts (whatever state they are in): one no job will ever run."""
    batches.delete_all(table, [record, *parts])


@tracer.capture_method
def load(table: Table, org_id: str, import_id: str) -> tuple[Item | None, list[Item]]:
    """The import and its parts, in order (every page of one Query, strongly consistent)."""
    prefix = keys.import_key(org_id, import_id)[SORT_KEY]
    found: list[Item] = []
    for page in table.query_all(keys.org_partition(org_id), prefix=prefix, consistent=True):
        found += page
    record = next((item for item in found if item[SORT_KEY] == prefix), None)
    return record, [item for item in found if item["entity"] == PART]


@tracer.capture_method
def users_present(table: Table, org_id: str, user_ids: list[str]) -> dict[str, Item]:
    """The org's users of these ids that exist (one BatchGetItem, strongly consistent)."""
    if not user_ids:
        return {}
    request: dict[str, Any] = {
        table.name: {"Keys": [to_dynamo(keys.user_key(org_id, u)) for u in user_ids], "ConsistentRead": True}
    }
    found: dict[str, Item] = {}
    while request:
        with translate():
            response = table.client.batch_get_item(RequestItems=request)
        found |= {item["user_id"]: item for item in map(from_dynamo, response["Responses"].get(table.name, []))}
        request = dict(response.get("UnprocessedKeys") or {})
    return found


def undecided(table: Table, part: Item, taken: list[str]) -> "TransactWriteItemTypeDef":
    """The part exists and is not decided yet, and notes ``taken``, the users it puts, among the
    part's ``taken``: in the transaction that puts them, so a delivery of the job whose part another
    one decided first puts none, and a delivery after a crash knows which users its import put,
    present or not (one deleted since is not put again). Every user of a part is then put before its
    decision, and the import's end finds any the decision did not count
    (``logic.import_rows.give_back_stranded``)."""
    return {
        "Update": {
            "TableName": table.name,
            "Key": to_dynamo(keys.base_key(part)),
            "UpdateExpression": "SET #taken = list_append(if_not_exists(#taken, :none), :taken)",
            "ConditionExpression": "attribute_exists(#pk) AND #decided = :false",
            "ExpressionAttributeNames": {"#pk": PARTITION_KEY, "#decided": "decided", "#taken": "taken"},
            "ExpressionAttributeValues": to_dynamo({":false": False, ":none": [], ":taken": taken}),
        }
    }


class Superseded(Exception):
    """Another delivery of the job moved the item on first: that delivery carries on."""


@tracer.capture_method
def advance(
    table: Table, item: Item, changes: Item, appended: Item | None = None, removed: tuple[str, ...] = ()
) -> Item:
    """Move a part (or the import) on: set ``changes``, append to the lists ``appended``, remove the
    attributes ``removed`` and bump ``version``, on condition that the version is still the item's.
    The item as it is now stored; ``Superseded`` if another delivery moved it first."""
    try:
        with translate():
            table.client.update_item(**_advance_request(table, item, changes, appended, removed))
    except ConditionFailed:
        raise Superseded() from None
    appended = appended or {}
    now = {**item, **changes, "version": int(item["version"]) + 1}
    for name, value in appended.items():
        now[name] = list(item.get(name, [])) + list(value)
    return {name: value for name, value in now.items() if name not in removed}


def _advance_request(
    table: Table, item: Item, changes: Item, appended: Item | None = None, removed: tuple[str, ...] = ()
) -> "UpdateTypeDef":
    """``advance``'s UpdateItem, also for an Update in a transaction."""
    appended = appended or {}
    version = int(item["version"])
    names = {"#pk": PARTITION_KEY, "#version": "version"}
    values: dict[str, Any] = {":version": version, ":next": version + 1} | ({":empty": []} if appended else {})
    assignments = ["#version = :next"]
    for i, (name, value) in enumerate(changes.items()):
        names[f"#s{i}"], values[f":s{i}"] = name, value
        assignments.append(f"#s{i} = :s{i}")
    for i, (name, value) in enumerate(appended.items()):
        names[f"#a{i}"], values[f":a{i}"] = name, value
        assignments.append(f"#a{i} = list_append(if_not_exists(#a{i}, :empty), :a{i})")
    names |= {f"#r{i}": name for i, name in enumerate(removed)}
    removal = f" REMOVE {', '.join(f'#r{i}' for i in range(len(removed)))}" if removed else ""
    return {
        "TableName": table.name,
        "Key": to_dynamo(keys.base_key(item)),
        "UpdateExpression": "SET " + ", ".join(assignments) + removal,
        "ConditionExpression": "attribute_exists(#pk) AND #version = :version",
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": to_dynamo(values),
    }
