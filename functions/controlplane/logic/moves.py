"""Moving a unit, with everything below it (issue 27): the price of a materialized path is that a
move rewrites the stored path of every unit and user of the subtree (docs/DATA_MODEL.md).

A move takes the org's move lock (the tree item's ``move``: one move per org at a time, so a second,
overlapping or not, is 409 ``move_in_progress`` with ``Retry-After``), then ``resume`` runs it:

1. each unit of the subtree gets its new path and is marked ``moving`` (no child or user may join
   it while marked: ``tree.placed_in``);
2. each user of the subtree gets its new path (looked for twice: GSI2 may show a user placed just
   before the units were marked only a moment later, ``gsi1_settle_seconds``);
3. the marks go, then the lock, which leaves ``last_move`` behind for the listings' cursors.

Every step is a conditional write on the value it replaces, so the job can stop anywhere and run
again, even at once (a redelivered message, a job out of time, requests that each meet a dead
request's lock: ``stopped_moves``), and finish with every path right. A subtree of at
most ``MOVE_IN_REQUEST`` units and users moves within its request; a larger one answers 202 and
moves from the deletions queue, as an org's delete does.
"""

import math
import time
from collections.abc import Callable
from contextlib import suppress
from datetime import UTC, datetime
from typing import Any

from controlplane import config
from controlplane.dal import keys, stamps, tree
from controlplane.dal.conditions import ConditionFailed, Item
from controlplane.dal.schema import GSI1_NAME, GSI1_SORT_KEY, GSI2_NAME, GSI2_SORT_KEY
from controlplane.dal.table import Table, api_table
from controlplane.logic import move_queue, refusals, units
from controlplane.logic.access import Caller
from controlplane.logic.move_queue import enqueue
from controlplane.models import errors
from controlplane.models.ids import new_ulid
from controlplane.models.units import MAX_DEPTH, MOVE_IN_REQUEST, ROOT, Unit, UnitUpdate, join, split

STEP_SECONDS = 5.0  # stop starting steps when less time is left, and queue the rest
# A lock older than this whose move ran within a request (so no message will finish it) was left
# by a request that died: the next request that meets it finishes it first (``stopped_moves``).
STALE_SECONDS = tree.REQUEST_LIFETIME


def move_unit(
    org_id: str, unit_id: str, parent_id: str, caller: Caller, version: int | None = None, name: str | None = None
) -> bool | None:
    """Move the unit under ``parent_id`` (and rename it ``name``, in the move's write of the unit).
    True when done; False when it continues from the queue; None when it is there already (nothing
    moved or renamed, the version is as checked)."""
    if unit_id == ROOT:
        raise units.root_refusal(org_id, "move")
    for _ in range(3):  # planned again after a move that finished meanwhile
        move = _plan(org_id, unit_id, parent_id, caller, version, name)
        if move is None:
            return None
        if _lock(org_id, move, move.get("version", version)):
            break
    else:
        raise errors.unit_moving(org_id)
    try:
        # Under the lock no unit is created, deleted or moved in the org: the depth counted now
        # holds, once GSI1 shows the units created just before.
        tree_item = api_table().get(keys.tree_key(org_id), consistent=True) or {}
        locked_by = time.time()  # the lock, read back, was taken by now
        _settle(tree_item, locked_by)
        _, deepest = _subtree(org_id, split(move["from"]), split(move["to"])[:-1])
        if deepest > MAX_DEPTH:
            raise errors.too_deep(MAX_DEPTH, parent_id, deepest, moving=True)
        if move["queued"]:
            enqueue(org_id, move["id"])
            return False
    except BaseException:  # refused or failed before its first write: the move leaves no lock behind
        _release(org_id, move)
        raise
    try:
        resume(org_id, locked_by=locked_by)
    except Exception as failed:  # an outage half-way: the lock stays; whoever takes the rest ends it
        if not move_queue.handed_over(org_id, move["id"], failed):
            raise
        return False
    return True


def _release(org_id: str, move: Item) -> None:
    """Give up the lock of a move that moved nothing (a listing may start again; one the last move changed
    waits on it while it settles). Failing too (an outage), the lock stays, for once it is abandoned."""
    # A move and rename's lock added 1 to the unit's version: that stays (a GET may have shown it).
    last, at = (api_table().get(keys.tree_key(org_id), consistent=True) or {}).get(tree.LAST_MOVE), time.time()
    if not last or float(last[tree.ENDED]) + config.settings().gsi1_settle_seconds <= at:
        last = {"from": move["from"], "to": move["to"], tree.ENDED: at}
    with suppress(ConditionFailed):  # released already
        tree.unlock_move(api_table(), keys.tree_key(org_id), move["id"], last, float(last[tree.ENDED]))


def _plan(
    org_id: str, unit_id: str, parent_id: str, caller: Caller, version: int | None, name: str | None
) -> Item | None:
    """The move, from what is stored now (None: the unit is under ``parent_id`` already). The
    lock checks that the unit and the new parent are still where they were read."""
    unit, tree_item = units.read(org_id, unit_id)
    refusals.check_version(unit, version)
    parent, _ = units.read(org_id, parent_id)
    old, base = split(unit["path"]), split(parent["path"])
    if base[: len(old)] == old:
        raise errors.unit_under_itself(unit_id)
    if unit["parent_id"] == parent_id:
        held = tree_item.get(tree.MOVE) or {}
        # put there by a move that has not finished, or still there for one that has not reached it yet
        if tree.MOVING in unit or held.get("unit_id") == unit_id:
            _refuse_while_held(org_id)
            if held.get("parent_id", parent_id) != parent_id:  # which took it elsewhere: planned from there
                return _plan(org_id, unit_id, parent_id, caller, version, name)
        return None
    subtree, deepest = _subtree(org_id, old, base)
    if deepest > MAX_DEPTH:  # refused before it takes the lock; checked again under it
        raise errors.too_deep(MAX_DEPTH, parent_id, deepest, moving=True)
    users, _ = api_table().query(
        keys.members_partition(org_id), index=GSI2_NAME, prefix=keys.members_prefix(old), limit=MOVE_IN_REQUEST + 1
    )
    return {
        "id": new_ulid(),
        "unit_id": unit_id,
        "parent_id": parent_id,
        "from": unit["path"],
        "to": join((*base, unit_id)),
        "started_at": stamps.now(),
        "actor": caller.subject,
        "queued": len(subtree) + len(users) > MOVE_IN_REQUEST and bool(config.settings().deletions_queue_url),
        # A rename too: its lock adds 1 to the unit's version (a rename at the version checked is 412);
        # done in the move's write of the unit, if it is still at that version + 1.
        **({"name": name, "version": unit["version"]} if name is not None else {}),
    }


def _subtree(org_id: str, old: tuple[str, ...], base: tuple[str, ...]) -> tuple[list[Item], int]:
    """The units of the subtree at ``old``, and the depth its deepest would have under ``base``.
    GSI1 may not show a unit just created yet: the unit itself is at ``old`` all the same."""
    pages = api_table().query_all(keys.units_partition(org_id), index=GSI1_NAME, prefix=keys.units_prefix(old))
    subtree = [unit for page in pages for unit in page]
    deepest = max((int(unit["depth"]) for unit in subtree), default=len(old))
    return subtree, deepest - len(old) + len(base) + 1


def _lock(org_id: str, move: Item, version: int | None) -> bool:
    """Take the org's move lock, with the unit (at ``version``, if given) and its new parent where
    the move was planned. False: plan it again, as the unit moved or changed meanwhile, or a lock a
    dead request left was there and is gone now (finished: it may have moved the unit, the parent, or
    units into the subtree)."""
    parent_id = move["parent_id"]
    parent = None if parent_id == ROOT else (keys.unit_key(org_id, parent_id), join(split(move["to"])[:-1]))
    unit = (keys.unit_key(org_id, move["unit_id"]), move["from"])
    try:
        tree.lock_move(api_table(), keys.tree_key(org_id), move, unit, parent, time.time(), version, "name" in move)
        return True
    except ConditionFailed as failed:
        if failed.action == 2:
            raise units.refused_placement(org_id, parent_id, failed.item) from None
        if failed.action == 1:
            stored = failed.item
            changed = version is not None and stored is not None and stored["version"] != version
            if stored is not None and (stored["path"] != move["from"] or changed):
                return False  # planned again from what is stored: a changed version is 412 there
            raise units.refused_placement(org_id, move["unit_id"], stored) from None
    _refuse_while_held(org_id)
    return False


def _refuse_while_held(org_id: str) -> None:
    """409 ``move_in_progress`` while a move holds the org's lock. One that a request left that
    died (``abandoned``) the resolver then runs on within this request's time, and asks again
    (``stopped_moves``): short of time, no step is begun that Lambda could cut half-way."""
    if tree.MOVE in (api_table().get(keys.tree_key(org_id), consistent=True) or {}):
        raise errors.unit_moving(org_id)


def abandoned(move: Item) -> bool:
    """A lock no run holds: its request stopped it with no queue to go on (make run), or died. Any
    number of runs may finish it at once: each step is conditional on the value it replaces."""
    started = datetime.fromisoformat(move["started_at"].replace("Z", "+00:00"))
    stale = (datetime.now(UTC) - started).total_seconds() > STALE_SECONDS
    return not move.get("queued") and (bool(move.get(tree.STOPPED)) or stale)


def _settle(tree_item: Item, read_at: float, time_left: Callable[[], float] = lambda: math.inf) -> bool:
    """Wait until GSI1 (updated asynchronously) has had ``gsi1_settle_seconds`` to show the org's
    latest unit; a move that read its subtree sooner could miss it, and leave it at a stale path.
    That unit's create was stamped before its transaction, which committed before the lock that
    ``tree_item``, read by ``read_at``, holds (a create checks that no move is under way) and within
    ``tree.REQUEST_LIFETIME`` of its stamp (retries included). False if there is not that much time left."""
    created = float(tree_item.get(tree.LAST_CREATED, 0))
    committed = min(created + tree.REQUEST_LIFETIME, read_at)
    wait = committed + config.settings().gsi1_settle_seconds - time.time()
    if wait <= 0:
        return True
    if time_left() < STEP_SECONDS + wait:
        return False
    time.sleep(wait)
    return True


def resume(
    org_id: str, time_left: Callable[[], float] = lambda: math.inf, locked_by: float | None = None, only: str = ""
) -> bool:
    """Run the org's move under way, if any, from wherever it stopped; False if time ran short.
    ``locked_by``: when the move's lock was known to be taken (else when it is read here). ``only``: the
    id of a move read as abandoned; a newer one that took the lock since is its own run's, not ours."""
    table = api_table()
    tree_item = table.get(keys.tree_key(org_id), consistent=True) or {}
    read_at, move = time.time(), tree_item.get(tree.MOVE)
    if move is None or move["id"] != (only or move["id"]):
        return True
    if not _settle(tree_item, locked_by or read_at, time_left):
        return False
    old, new, move_id = split(move["from"]), split(move["to"]), move["id"]

    def moved(path: str) -> tuple[str, ...]:
        return (*new, *split(path)[len(old) :])

    # Before each page, the run checks that its move still holds the lock: one that read a lock a
    # dead request left, which another run finished (and a new move may have begun since), stops.
    for page in table.query_all(keys.units_partition(org_id), index=GSI1_NAME, prefix=keys.units_prefix(old)):
        if not _holds(table, org_id, move_id):
            return True
        for unit in page:
            if time_left() < STEP_SECONDS:
                return False
            path = moved(unit["path"])
            changes = {
                GSI1_SORT_KEY: keys.units_prefix(path),
                "path": join(path),
                "depth": len(path),
                tree.MOVING: move_id,
            }
            mine = unit["unit_id"] == move["unit_id"]
            if mine:  # the move is the moved unit's change: its parent, stamp and version
                changes |= {"parent_id": move["parent_id"], "updated_at": stamps.now()}
                changes[stamps.UPDATED_BY] = move["actor"]
            if mine and "name" in move:  # and its rename, unless a rename since the lock came after it
                with suppress(ConditionFailed):
                    expected = {"path": unit["path"], "version": move["version"] + 1}
                    tree.rewrite(table, keys.base_key(unit), expected, changes | {"name": move["name"]}, bump=True)
                    continue
            _step(tree.rewrite, table, keys.base_key(unit), {"path": unit["path"]}, changes, bump=mine)
    # Every unit is marked: no user joins the subtree from now. GSI2 is eventually consistent, so the
    # users are looked for twice: now, and once it has had time to show those placed just before.
    try:
        marked_at = tree.note_marked(table, keys.tree_key(org_id), move_id, time.time())
    except ConditionFailed:  # the lock is gone: another run finished this move, or the org was deleted
        return True
    for second_pass in (False, True):
        if second_pass:
            wait = marked_at + config.settings().gsi1_settle_seconds - time.time()
            if time_left() < STEP_SECONDS + max(wait, 0):
                return False
            time.sleep(max(wait, 0))
        for page in table.query_all(keys.members_partition(org_id), index=GSI2_NAME, prefix=keys.members_prefix(old)):
            if not _holds(table, org_id, move_id):
                return True
            for user in page:
                if time_left() < STEP_SECONDS:
                    return False
                path = moved(user["unit_path"])
                sort_key = keys.member_keys(org_id, user["user_id"], path)[GSI2_SORT_KEY]
                changes = {"unit_path": join(path), GSI2_SORT_KEY: sort_key}
                _step(tree.rewrite, table, keys.base_key(user), {"unit_path": user["unit_path"]}, changes)
    for page in table.query_all(keys.units_partition(org_id), index=GSI1_NAME, prefix=keys.units_prefix(new)):
        if not _holds(table, org_id, move_id):
            return True
        for unit in page:
            if unit.get(tree.MOVING) == move_id:
                _step(tree.rewrite, table, keys.base_key(unit), {tree.MOVING: move_id}, {}, (tree.MOVING,))
    last = {"from": move["from"], "to": move["to"]}
    _step(tree.unlock_move, table, keys.tree_key(org_id), move_id, last, time.time())
    return True


def _holds(table: Table, org_id: str, move_id: str) -> bool:
    """Whether the move ``move_id`` still holds the org's move lock (a strongly consistent read)."""
    tree_item = table.get(keys.tree_key(org_id), consistent=True) or {}
    return (tree_item.get(tree.MOVE) or {}).get("id") == move_id


def _step(write: Callable[..., None], *args: Any, **options: Any) -> None:
    """A step of a move; refused, it was done before (a job delivered again)."""
    with suppress(ConditionFailed):
        write(*args, **options)


def update_unit(org_id: str, unit_id: str, body: UnitUpdate, caller: Caller, version: int | None = None) -> Unit | None:
    """Rename and/or move a unit; a move renames in its own write of the unit (a refused one renames
    nothing). None when the move continues from the queue."""
    changes = body.changes()
    if "parent_id" in changes:
        moved = move_unit(org_id, unit_id, changes["parent_id"], caller, version, changes.get("name"))
        if moved is not None:
            return units.get_unit(org_id, unit_id) if moved else None
    if "name" in changes:  # nothing moved: the rename checks the version as it writes
        return units.rename(org_id, unit_id, changes["name"], caller, version)
    return units.get_unit(org_id, unit_id)
