"""Org units (issue 27): each org's teams as a tree under an implicit root, kept as materialized
paths (docs/DATA_MODEL.md, "Org units"). Creating, reading, renaming and deleting a unit; moves are
``moves``', listings ``tree_reads``'.

Every write that puts something under a unit (a child, a user) carries the condition that the unit
is still at the path read and is not being moved or deleted (``tree.placed_in``), so nothing lands
on a stale path.
"""

from __future__ import annotations

import time
from contextlib import suppress
from typing import TYPE_CHECKING

from controlplane import config
from controlplane.dal import keys, sealing, stamps, tree
from controlplane.dal.conditions import ConditionFailed, Item
from controlplane.dal.schema import GSI1_NAME, GSI1_SORT_KEY, GSI2_NAME, GSI2_SORT_KEY
from controlplane.dal.table import api_table
from controlplane.logic import refusals
from controlplane.logic.access import Caller
from controlplane.models import errors
from controlplane.models.errors import ApiError
from controlplane.models.ids import new_ulid
from controlplane.models.units import MAX_DEPTH, MAX_UNITS, ROOT, Unit, UnitCreate, join, split

if TYPE_CHECKING:
    from types_boto3_dynamodb.type_defs import TransactWriteItemTypeDef


def root_of(org: Item) -> Item:
    """The implicit root, as a unit: it has the org's name and lives as long as the org."""
    return {
        "org_id": org["org_id"],
        "unit_id": ROOT,
        "name": org["name"],
        "parent_id": None,
        "path": "/",
        "depth": 0,
        "created_at": org["created_at"],
        "updated_at": org["created_at"],
        "version": 1,
    }


def read(org_id: str, unit_id: str) -> tuple[Item, Item]:
    """The unit (the root, made from its org) and the org's tree item (empty before its first unit),
    in one consistent BatchGetItem; 404 for a missing org or unit."""
    wanted = [keys.org_key(org_id), keys.tree_key(org_id)]
    if unit_id != ROOT:
        wanted.append(keys.unit_key(org_id, unit_id))
    org, tree_item, *unit = api_table().get_many(wanted)
    if org is None or stamps.DELETING in org:
        raise errors.org_missing(org_id)
    found = root_of(org) if unit_id == ROOT else unit[0]
    if found is None:
        raise errors.unit_missing(org_id, unit_id)
    return found, tree_item or {}


def root_refusal(org_id: str, action: str) -> ApiError:
    """Why the root refuses ``action``: in a missing org, the 404 any of its units gets (one read, on
    this refusal only); else the root's 409."""
    org = api_table().get(keys.org_key(org_id), consistent=True)
    if org is None or stamps.DELETING in org:
        return errors.org_missing(org_id)
    return errors.root_refuses(action)


def placement(org_id: str, unit_id: str) -> tuple[tuple[str, ...], TransactWriteItemTypeDef | None]:
    """Where a user in ``unit_id`` goes: the unit's path, and the check their write must carry
    (None for the root, which never moves)."""
    if unit_id == ROOT:
        return (), None
    unit = api_table().get(keys.unit_key(org_id, unit_id), consistent=True)
    if unit is None:
        raise errors.unit_missing(org_id, unit_id)
    check = tree.placed_in(api_table(), keys.unit_key(org_id, unit_id), unit["path"], time.time())
    return split(unit["path"]), check


def refused_placement(org_id: str, unit_id: str, unit: Item | None) -> ApiError:
    """Why a unit refused something placed in it (``tree.placed_in`` failed on ``unit``): gone; its
    delete under way, which may still be refused (the unit has users or units): retry shortly; or
    being moved, or moved since it was read: retry."""
    if unit is None:
        return errors.unit_missing(org_id, unit_id)
    if tree.deleting(unit, time.time()):
        return errors.unit_being_deleted(unit_id)
    return errors.unit_moving(org_id)


def get_unit(org_id: str, unit_id: str) -> Unit:
    """The unit; ``moving`` from its mark, or from the org's move under way when the unit is in the
    subtree it moves, at the old path or the new: a queued move marks it only once its job gets there."""
    unit, tree_item = read(org_id, unit_id)
    move = tree_item.get(tree.MOVE)
    if move and any(f"{unit['path']}/".startswith(f"{move[end]}/") for end in ("from", "to")):
        unit = {**unit, tree.MOVING: move["id"]}
    return Unit.from_item(unit)


def create_unit(org_id: str, body: UnitCreate, caller: Caller) -> Unit:
    parent, _ = read(org_id, body.parent_id)
    if parent["depth"] >= MAX_DEPTH:
        raise errors.too_deep(MAX_DEPTH, body.parent_id, parent["depth"])
    path = (*split(parent["path"]), body.unit_id)
    attributes = {
        "org_id": org_id,
        "unit_id": body.unit_id,
        "name": body.name,
        "parent_id": body.parent_id,
        "path": join(path),
        "depth": len(path),
    }
    item = stamps.new_item(keys.unit_keys(org_id, path), keys.UNIT, attributes, caller.subject)
    check = None if body.parent_id == ROOT else (keys.unit_key(org_id, body.parent_id), parent["path"])
    unit = Unit.from_item(item)
    try:
        with sealing.making(unit):
            tree.put_unit(api_table(), keys.org_key(org_id), keys.tree_key(org_id), item, MAX_UNITS, check, time.time())
    except ConditionFailed as failed:
        if failed.action == 1 and tree.MOVE in (failed.item or {}):
            raise errors.unit_moving(org_id) from None
        raise {
            0: errors.unit_exists(org_id, body.unit_id),
            1: errors.too_many_units(MAX_UNITS),
            2: errors.org_missing(org_id),
        }.get(failed.action) or refused_placement(org_id, body.parent_id, failed.item) from None
    return unit


def rename(org_id: str, unit_id: str, name: str, caller: Caller, version: int | None) -> Unit:
    if unit_id == ROOT:
        raise root_refusal(org_id, "rename")
    rules = refusals.if_match(version)
    with refusals.refused_as(errors.unit_missing(org_id, unit_id), rules):
        item = api_table().update(
            keys.unit_key(org_id, unit_id),
            stamps.written_by({"name": name}, caller.subject),
            stamps.now(),
            refusals.expects(rules),
        )
    return Unit.from_item(item)


def delete_unit(org_id: str, unit_id: str, version: int | None = None) -> None:
    """Mark the unit (no child or user may join it from then on), make sure it has none, delete it.
    A delete refused or failed after its mark takes it back."""
    if unit_id == ROOT:
        raise root_refusal(org_id, "delete")
    table, key, deletion = api_table(), keys.unit_key(org_id, unit_id), new_ulid()
    try:
        unit = tree.mark_deleting(table, key, deletion, time.time(), version)
    except ConditionFailed as failed:
        if failed.item is not None and tree.deleting(failed.item, time.time()):
            raise errors.unit_being_deleted(unit_id) from None
        raise refusals.refusal(failed, errors.unit_missing(org_id, unit_id), refusals.if_match(version)) from None
    marked_at = time.time()
    try:
        _make_sure_it_is_empty(org_id, unit, marked_at)
        tree.delete_unit(table, key, keys.tree_key(org_id), deletion, unit["path"], version)
    except BaseException as failed:  # refused, or an outage: the unit takes children and users again
        _unmark(key, deletion)
        if not isinstance(failed, ConditionFailed):
            raise
        stored = failed.item
        if failed.action == 1 and stored is None:  # the tree item went first, with its org
            raise errors.org_missing(org_id) from None
        if failed.action == 1 or (stored is not None and (tree.MOVING in stored or stored["path"] != unit["path"])):
            raise errors.unit_moving(org_id) from None
        # Still there: renamed since the version was checked (If-Match), else gone.
        raise refusals.refusal(failed, errors.unit_missing(org_id, unit_id), refusals.if_match(version)) from None


def _make_sure_it_is_empty(org_id: str, unit: Item, marked_at: float) -> None:
    """Refuse the delete of a unit marked at ``marked_at`` whose org is gone, while a move is under
    way, or if anything is under it, as the indexes show once they have had ``gsi1_settle_seconds``
    to show what was put there last (a child or a user placed, or a move ended, just before the mark)."""
    org, tree_item = api_table().get_many([keys.org_key(org_id), keys.tree_key(org_id)])
    if org is None or stamps.DELETING in org:
        raise errors.org_missing(org_id)
    tree_item = tree_item or {}
    if tree.MOVE in tree_item:
        raise errors.unit_moving(org_id)
    # A placement is stamped before its transaction, which committed before the mark (none commits
    # after it) and within REQUEST_LIFETIME of the stamp (retries included); a move's end is stamped
    # after its writes.
    placed = float(unit.get(tree.LAST_PLACED, 0))
    ended = float(tree_item.get(tree.LAST_MOVE, {}).get(tree.ENDED, 0))
    last = max(min(placed + tree.REQUEST_LIFETIME, marked_at), ended)
    time.sleep(max(0.0, last + config.settings().gsi1_settle_seconds - time.time()))
    path = split(unit["path"])
    found = _under(org_id, unit["unit_id"], path)
    if found and not _still_under(found):  # the indexes lag a removal: what they show has gone
        time.sleep(config.settings().gsi1_settle_seconds)
        found = _under(org_id, unit["unit_id"], path)
    if found:
        raise errors.unit_not_empty(unit["unit_id"], "units" if found[0][0] == GSI1_SORT_KEY else "users")


def _under(org_id: str, unit_id: str, path: tuple[str, ...]) -> list[tuple[str, str, Item]]:
    """A child and a user the indexes show under the unit, each with its index sort key and prefix."""
    table, units_at, members_at = api_table(), keys.units_prefix(path), keys.members_prefix(path)
    children, _ = table.query(keys.units_partition(org_id), index=GSI1_NAME, prefix=units_at, limit=2)
    users, _ = table.query(keys.members_partition(org_id), index=GSI2_NAME, prefix=members_at, limit=1)
    found = [(GSI1_SORT_KEY, units_at, child) for child in children if child["unit_id"] != unit_id]
    return found + [(GSI2_SORT_KEY, members_at, user) for user in users]


def _still_under(found: list[tuple[str, str, Item]]) -> bool:
    """Whether any of ``found`` is still under the unit in the table (one consistent BatchGetItem,
    on the refusal path only): a child deleted or a user moved out or deleted a moment before the
    mark may still be in the index, and a delete just after emptying a unit would be refused."""
    stored = api_table().get_many([keys.base_key(item) for _, _, item in found])
    return any(
        item is not None and str(item.get(name, "")).startswith(prefix)
        for (name, prefix, _), item in zip(found, stored, strict=True)
    )


def _unmark(key: dict[str, str], deletion: str) -> None:
    """Take back the delete ``deletion``'s mark. If this fails too (an outage), the mark stays until
    it is ``tree.REQUEST_LIFETIME`` old, then counts for none."""
    with suppress(ConditionFailed):  # gone meanwhile
        tree.unmark_deleting(api_table(), key, deletion)
