"""Listings of an org's tree (issue 27): its units depth-first, and the users of a unit's subtree.
Each page is one Query of one index partition, all of whose items are returned, beside one
consistent BatchGetItem of the org, its tree item and the unit (which says where the unit is now).

A move rewrites stored paths one item at a time, so a listing it overlaps could show an item twice
(read at its old place, then at its new one) or never (moved behind the listing's cursor). So a
listing does not read through a move: while one overlaps it, it is 409 ``move_in_progress`` with
``Retry-After``; a cursor taken before a move that overlaps its listing is 409 ``conflict`` (start
again), because its position is a path the move changed. The tree item's move counter, in the
cursor, tells the two apart from unrelated moves.

A cursor also carries its unit's ``created_at``: a unit deleted and created again (elsewhere,
perhaps) is another unit with the same id, whose subtree a position in the old one is not part of,
and a delete changes no move counter. Nor does a position outside the unit's subtree ever become a
start key: DynamoDB refuses one that its key condition does not match.
"""

import time

from controlplane import config
from controlplane.dal import cursor, keys, tree
from controlplane.dal.conditions import Item
from controlplane.dal.schema import GSI1_NAME, GSI2_NAME
from controlplane.dal.table import api_table
from controlplane.logic import units
from controlplane.models import errors
from controlplane.models.resources import User, UserPage
from controlplane.models.units import Unit, UnitPage, split


def overlaps(path: tuple[str, ...], move: Item) -> bool:
    """Whether a move (its unit's old and new path) changes the subtree at ``path``."""
    ends = (split(move["from"]), split(move["to"]))
    return any(end[: len(path)] == path or path[: len(end)] == end for end in ends)


def _guard(org_id: str, tree_item: Item, path: tuple[str, ...], epoch: int | None) -> int:
    """The move count the next cursor carries, once no move stands in its way: the current one, as
    this page has checked the one move (at most) since its cursor. A move that ended less than
    ``gsi1_settle_seconds`` ago still stands in the way: the indexes may not show its last writes."""
    move = tree_item.get(tree.MOVE)
    if move and overlaps(path, move):
        raise errors.unit_moving(org_id)
    last = tree_item.get(tree.LAST_MOVE)
    settled = float(last.get(tree.ENDED, 0)) + config.settings().gsi1_settle_seconds if last else 0.0
    if last and overlaps(path, last) and settled > time.time():
        raise errors.unit_moving(org_id)
    moves = int(tree_item.get(tree.MOVES, 0))
    if epoch is not None and moves != epoch:
        latest = move or tree_item.get(tree.LAST_MOVE)  # the one move since the cursor, if just one
        if moves != epoch + 1 or latest is None or overlaps(path, latest):
            raise errors.units_moved_since()
    return moves


def _resume(scope: str, token: str | None) -> tuple[int | None, str, list[str]]:
    """A cursor's move count, its unit's ``created_at`` and its position (none: the first page)."""
    after = cursor.resume_after(scope, token)
    if after is None:
        return None, "", []
    epoch, _, rest = after.partition("|")
    created_at, *position = rest.split("|")
    if not epoch.isdigit():  # signed by us, so only a cursor of another version of this list
        raise errors.units_moved_since()
    return int(epoch), created_at, position


def _same_unit(unit_id: str, unit: Item, created_at: str, epoch: int | None) -> None:
    """A cursor continues the unit it was taken of, not an earlier unit of the same id."""
    if epoch is not None and created_at != unit["created_at"]:
        raise errors.unit_created_again_since(unit_id)


def _within(path: tuple[str, ...], position: str, direct: bool = False) -> str:
    """A cursor's position, a unit path, if it is in the listed subtree (``direct``: the unit)."""
    where = split(position)
    if where[: len(path)] != path or (direct and where != path):
        raise errors.units_moved_since()
    return position


def _cursor(scope: str, epoch: int, created_at: str, position: list[str]) -> str | None:
    return cursor.encode(scope, "|".join([str(epoch), created_at, *position]), config.settings().cursor_secret)


def list_units(org_id: str, under: str, limit: int, token: str | None) -> UnitPage:
    scope = keys.units_scope(org_id, under)
    epoch, created_at, position = _resume(scope, token)
    unit, tree_item = units.read(org_id, under)
    _same_unit(under, unit, created_at, epoch)
    path = split(unit["path"])
    epoch = _guard(org_id, tree_item, path, epoch)
    start = keys.unit_keys(org_id, split(_within(path, position[0]))) if position else None
    found, last = api_table().query(
        keys.units_partition(org_id), index=GSI1_NAME, prefix=keys.units_prefix(path), limit=limit, start_key=start
    )
    more = _cursor(scope, epoch, unit["created_at"], [found[-1]["path"]]) if last and found else None
    return UnitPage(items=[Unit.from_item(item) for item in found], next_cursor=more)


def list_unit_users(org_id: str, unit_id: str, direct: bool, limit: int, token: str | None) -> UserPage:
    scope = keys.unit_users_scope(org_id, unit_id, direct)
    epoch, created_at, position = _resume(scope, token)
    unit, tree_item = units.read(org_id, unit_id)
    _same_unit(unit_id, unit, created_at, epoch)
    path = split(unit["path"])
    epoch = _guard(org_id, tree_item, path, epoch)
    start = None
    if len(position) == 2:
        unit_path, user_id = position
        unit_path = _within(path, unit_path, direct)
        start = {**keys.user_key(org_id, user_id), **keys.member_keys(org_id, user_id, split(unit_path))}
    found, last = api_table().query(
        keys.members_partition(org_id),
        index=GSI2_NAME,
        prefix=keys.members_prefix(path, direct),
        limit=limit,
        start_key=start,
    )
    # A user written with the keys' default place (the root) and no ``unit_path`` is in the root.
    position = [found[-1].get("unit_path", "/"), found[-1]["user_id"]] if found else []
    more = _cursor(scope, epoch, unit["created_at"], position) if last and found else None
    return UserPage(items=[User.model_validate(item) for item in found], next_cursor=more)
