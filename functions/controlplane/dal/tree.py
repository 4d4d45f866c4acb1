"""The data layer's writes on an org's tree of units (issue 27): a unit created or deleted with the
tree's unit count, the move lock, and the rewrite of a stored path that a move makes.

A unit that a move or a delete has marked (``MOVING``, ``DELETING``) takes no new child and no new
user: ``placed_in`` is the condition every such write carries, so nothing lands on a stale path. It
also notes when (``LAST_PLACED``), so that a delete waits for the indexes to show what was placed.
A delete's mark outlives its request only if the request died; once ``REQUEST_LIFETIME`` old it is
taken for none, by placements and by the next delete.
"""

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from controlplane.dal.codec import from_dynamo, to_dynamo
from controlplane.dal.conditions import Item
from controlplane.dal.schema import PARTITION_KEY
from controlplane.dal.stamps import DELETING, iso
from controlplane.dal.table import Key, Table, translate
from controlplane.dal.transactions import transact

if TYPE_CHECKING:  # the stub packages are for the type checker only, never in Lambda
    from types_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

MOVING = "moving"  # on a unit: the id of the move rewriting its path
MOVE = "move"  # on the tree item: the move under way, the lock
STOPPED = "stopped"  # on the lock: its run in a request stopped on an outage, with no queue to go on
UNIT_COUNT, MOVES, LAST_MOVE = "unit_count", "moves", "last_move"
# On the tree item: when its latest unit was created (epoch seconds), which GSI1 may not show yet.
LAST_CREATED = "last_unit_created"
# On a unit: when a child or a user was last put under it (epoch seconds), which GSI1 or GSI2 may
# not show yet; on the tree item's ``LAST_MOVE``: when that move ended (``ENDED``), likewise.
LAST_PLACED, ENDED = "last_placed", "ended"
# On a unit marked ``DELETING``: which delete marked it, the only one that may delete or unmark it.
DELETION = "deletion_id"
# Seconds within which a request that marks a unit or stamps a placement (an API call, a job's step)
# has ended: more than any function's timeout (28 s, infra/constants.py). A delete's mark older than
# this is a dead request's; a placement stamped this long ago has committed, or never will.
REQUEST_LIFETIME = 60.0
# The condition of a unit that no live delete has marked (``:stale``: ``REQUEST_LIFETIME`` ago).
_NOT_DELETING = "(attribute_not_exists(#deleting) OR #deleting < :stale)"


def deleting(unit: Item, at: float) -> bool:
    """Whether a live delete has marked ``unit`` as of ``at`` (epoch seconds): a dead one's mark is none."""
    return DELETING in unit and unit[DELETING] >= iso(at - REQUEST_LIFETIME)


def placed_in(
    table: Table, unit: Key, path: str, at: float, version: int | None = None, bump: bool = False
) -> "TransactWriteItemTypeDef":
    """An update in a transaction: if the unit exists at ``path`` (and ``version``, if given) and no
    move or live delete has marked it, note that something was put under it ``at`` (epoch seconds,
    ``LAST_PLACED``; not a change of the unit: no version, no event; ``bump``: add 1 to its version,
    for a change accepted now that lands later). Refused, DynamoDB returns the unit (None if it is missing)."""
    names = {"#pk": PARTITION_KEY, "#path": "path", "#moving": MOVING, "#deleting": DELETING, "#placed": LAST_PLACED}
    values: dict[str, Any] = {":path": path, ":at": Decimal(str(at)), ":stale": iso(at - REQUEST_LIFETIME)}
    condition = f"attribute_exists(#pk) AND #path = :path AND attribute_not_exists(#moving) AND {_NOT_DELETING}"
    if version is not None:
        condition += " AND #version = :version"
        names["#version"], values[":version"] = "version", version
    if bump:
        names["#version"], values[":one"] = "version", 1
    return {
        "Update": {
            "TableName": table.name,
            "Key": to_dynamo(unit),
            "UpdateExpression": "SET #placed = :at" + (", #version = #version + :one" if bump else ""),
            "ConditionExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": to_dynamo(values),
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
    }


def put_unit(
    table: Table, org: Key, tree: Key, unit: Item, limit: int, parent: tuple[Key, str] | None, at: float
) -> None:
    """Create ``unit`` and count it on the org's ``tree`` item (with when: ``at``, ``LAST_CREATED``),
    in one transaction, if the org exists
    and is not being deleted, the tree has fewer than ``limit`` units and no move under way (a move
    reads its subtree once: a unit added behind it would keep a stale path), and the ``parent`` (key
    and path; None for the root) is ``placed_in``. Refused: action 0, the unit exists; 1, the tree
    (its item: full, or moving); 2, the org (its item, or None); 3, the parent (its item, or None)."""
    request: list[TransactWriteItemTypeDef] = [
        {
            "Put": {
                "TableName": table.name,
                "Item": to_dynamo(unit),
                "ConditionExpression": "attribute_not_exists(#pk)",
                "ExpressionAttributeNames": {"#pk": PARTITION_KEY},
            }
        },
        {
            "Update": {
                "TableName": table.name,
                "Key": to_dynamo(tree),
                "UpdateExpression": "ADD #count :one SET #entity = :tree, #created = :at",
                "ConditionExpression": "(attribute_not_exists(#count) OR #count < :limit)"
                " AND attribute_not_exists(#move)",
                "ExpressionAttributeNames": {
                    "#count": UNIT_COUNT,
                    "#entity": "entity",
                    "#move": MOVE,
                    "#created": LAST_CREATED,
                },
                "ExpressionAttributeValues": to_dynamo(
                    {":one": 1, ":limit": limit, ":tree": "tree", ":at": Decimal(str(at))}
                ),
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        },
        {
            "ConditionCheck": {
                "TableName": table.name,
                "Key": to_dynamo(org),
                "ConditionExpression": "attribute_exists(#pk) AND attribute_not_exists(#deleting)",
                "ExpressionAttributeNames": {"#pk": PARTITION_KEY, "#deleting": DELETING},
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        },
    ]
    if parent:
        request.append(placed_in(table, *parent, at))
    transact(table, request)


def mark_deleting(table: Table, unit: Key, deletion_id: str, at: float, version: int | None) -> Item:
    """Mark the unit for the delete ``deletion_id`` (``DELETING``: when, ``at``; ``DELETION``:
    which), if it exists, no other live delete has marked it (a dead one's mark is taken over), and
    (``version``) it is at that version: from then on nothing is placed in it (``placed_in``). The
    unit as marked; refused, ``ConditionFailed`` with the unit (None if it is missing)."""
    names = {"#pk": PARTITION_KEY, "#deleting": DELETING, "#deletion": DELETION}
    values: dict[str, Any] = {":at": iso(at), ":deletion": deletion_id, ":stale": iso(at - REQUEST_LIFETIME)}
    condition = f"attribute_exists(#pk) AND {_NOT_DELETING}"
    if version is not None:
        condition += " AND #version = :version"
        names["#version"], values[":version"] = "version", version
    with translate():
        response = table.client.update_item(
            TableName=table.name,
            Key=to_dynamo(unit),
            UpdateExpression="SET #deleting = :at, #deletion = :deletion",
            ConditionExpression=condition,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=to_dynamo(values),
            ReturnValues="ALL_NEW",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    return from_dynamo(response["Attributes"])


def unmark_deleting(table: Table, unit: Key, deletion_id: str) -> None:
    """Take back the mark of the delete ``deletion_id`` (a refused delete), if it is still that one's."""
    rewrite(table, unit, {DELETION: deletion_id}, {}, removed=(DELETING, DELETION))


def delete_unit(table: Table, unit: Key, tree: Key, deletion_id: str, path: str, version: int | None) -> None:
    """Delete a unit that the delete ``deletion_id`` has marked, still at ``path`` (where that delete
    found it empty) and not being moved, and uncount it, in one transaction, if no move is under way
    (one that began after the delete looked could be moving units under it) and the tree item is
    still there (an org's delete takes it first, and an ADD would make it again: a count of -1 for
    the next org of that id). Refused: action 0, the unit (its item, or None); 1, the tree (its
    item: moving; None: gone with its org)."""
    names = {"#pk": PARTITION_KEY, "#moving": MOVING, "#deletion": DELETION, "#path": "path"}
    values: dict[str, Any] = {":deletion": deletion_id, ":path": path}
    condition = "attribute_exists(#pk) AND #deletion = :deletion AND #path = :path AND attribute_not_exists(#moving)"
    if version is not None:
        condition += " AND #version = :version"
        names["#version"], values[":version"] = "version", version
    delete: Any = {
        "TableName": table.name,
        "Key": to_dynamo(unit),
        "ConditionExpression": condition,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": to_dynamo(values),
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    uncount: TransactWriteItemTypeDef = {
        "Update": {
            "TableName": table.name,
            "Key": to_dynamo(tree),
            "UpdateExpression": "ADD #count :minus_one",
            "ConditionExpression": "attribute_exists(#pk) AND attribute_not_exists(#move)",
            "ExpressionAttributeNames": {"#pk": PARTITION_KEY, "#count": UNIT_COUNT, "#move": MOVE},
            "ExpressionAttributeValues": to_dynamo({":minus_one": -1}),
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
    }
    transact(table, [{"Delete": delete}, uncount])


def lock_move(
    table: Table,
    tree: Key,
    move: Item,
    unit: tuple[Key, str],
    parent: tuple[Key, str] | None,
    at: float,
    version: int | None = None,
    bump: bool = False,
) -> None:
    """Take the org's move lock: set ``move`` and count it in ``moves``, if no move holds the lock,
    and the moved ``unit`` (at ``version``, if given; ``bump``: its version goes up by 1) and its new
    ``parent`` (key and path; None for the root) are ``placed_in``, in one transaction. Refused:
    action 0, the tree (its item); 1, the unit (its item, or None); 2, the parent (its item, or None)."""
    lock: TransactWriteItemTypeDef = {
        "Update": {
            "TableName": table.name,
            "Key": to_dynamo(tree),
            "UpdateExpression": "SET #move = :move ADD #moves :one",
            "ConditionExpression": "attribute_exists(#pk) AND attribute_not_exists(#move)",
            "ExpressionAttributeNames": {"#pk": PARTITION_KEY, "#move": MOVE, "#moves": MOVES},
            "ExpressionAttributeValues": to_dynamo({":move": move, ":one": 1}),
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
    }
    placed = [placed_in(table, *unit, at, version, bump), *([placed_in(table, *parent, at)] if parent else [])]
    transact(table, [lock, *placed])


def note_marked(table: Table, tree: Key, move_id: str, at: float) -> float:
    """When the move ``move_id`` had marked every unit of its subtree: ``at``, or the time a first
    run noted (a job delivered again keeps it)."""
    with translate():
        response = table.client.update_item(
            TableName=table.name,
            Key=to_dynamo(tree),
            UpdateExpression="SET #move.#at = if_not_exists(#move.#at, :at)",
            ConditionExpression="#move.#id = :id",
            ExpressionAttributeNames={"#move": MOVE, "#at": "marked_at", "#id": "id"},
            ExpressionAttributeValues=to_dynamo({":at": Decimal(str(at)), ":id": move_id}),
            ReturnValues="ALL_NEW",
        )
    return float(from_dynamo(response["Attributes"])[MOVE]["marked_at"])


def note_stopped(table: Table, tree: Key, move_id: str) -> None:
    """Say that the move ``move_id``'s run in its request stopped (an outage) and no queue goes on
    with it: the next request that meets its lock runs it on. Refused: the lock is gone or another's."""
    with translate():
        table.client.update_item(
            TableName=table.name,
            Key=to_dynamo(tree),
            UpdateExpression="SET #move.#stopped = :stopped",
            ConditionExpression="#move.#id = :id",
            ExpressionAttributeNames={"#move": MOVE, "#stopped": STOPPED, "#id": "id"},
            ExpressionAttributeValues=to_dynamo({":stopped": True, ":id": move_id}),
        )


def unlock_move(table: Table, tree: Key, move_id: str, last: Item, at: float) -> None:
    """Release the lock of move ``move_id`` and remember what it moved (``LAST_MOVE``) and when it
    ended (``at``); a lock already released (a job delivered again) is left alone."""
    with translate():
        table.client.update_item(
            TableName=table.name,
            Key=to_dynamo(tree),
            UpdateExpression="REMOVE #move SET #last = :last",
            ConditionExpression="#move.#id = :id",
            ExpressionAttributeNames={"#move": MOVE, "#id": "id", "#last": LAST_MOVE},
            ExpressionAttributeValues=to_dynamo({":id": move_id, ":last": {**last, ENDED: Decimal(str(at))}}),
        )


def rewrite(
    table: Table, key: Key, expected: Item, changes: Item, removed: tuple[str, ...] = (), bump: bool = False
) -> None:
    """Set ``changes`` (and remove ``removed``; ``bump``: add 1 to ``version``) if the stored item
    still holds ``expected``: a move's step, which a redelivered job may repeat (else
    ``ConditionFailed``, and the step is done)."""
    names: dict[str, str] = {"#pk": PARTITION_KEY}
    values: dict[str, Any] = {}
    clauses = ["attribute_exists(#pk)"]
    for i, (name, value) in enumerate(expected.items()):
        names[f"#e{i}"], values[f":e{i}"] = name, value
        clauses.append(f"#e{i} = :e{i}")
    assignments = []
    for i, (name, value) in enumerate(changes.items()):
        names[f"#c{i}"], values[f":c{i}"] = name, value
        assignments.append(f"#c{i} = :c{i}")
    if bump:
        names["#version"], values[":one"] = "version", 1
        assignments.append("#version = #version + :one")
    names |= {f"#r{i}": name for i, name in enumerate(removed)}
    expression = ("SET " + ", ".join(assignments)) if assignments else ""
    if removed:
        expression += " REMOVE " + ", ".join(f"#r{i}" for i in range(len(removed)))
    request: Any = {
        "TableName": table.name,
        "Key": to_dynamo(key),
        "UpdateExpression": expression.strip(),
        "ConditionExpression": " AND ".join(clauses),
        "ExpressionAttributeNames": names,
    }
    if values:
        request["ExpressionAttributeValues"] = to_dynamo(values)
    with translate():
        table.client.update_item(**request)
