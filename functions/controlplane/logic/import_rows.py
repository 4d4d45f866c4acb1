"""An import's rows as users (see ``logic.imports``): where each goes (the unit it names, at the path
read, which the transaction checks), how many one transaction takes, and the users a second
delivery put that the first's decision of their part did not count."""

import time

from controlplane import config
from controlplane.dal import imports, keys, seats, stamps, tree
from controlplane.dal.conditions import ConditionFailed, Expect, Item
from controlplane.dal.table import Table, api_table
from controlplane.logic import cascade
from controlplane.models.errors import ServiceUnavailable
from controlplane.models.ids import ulid_floor
from controlplane.models.units import ROOT, join, split


def unit_paths(org_id: str, rows: list[Item]) -> dict[str, str]:
    """The stored path of each unit the rows name that exists (one BatchGetItem, strongly
    consistent), and the root's: where their users go, and what the transaction checks
    (``tree.placed_in``), as a single create reads and checks its unit. A unit whose delete is under
    way, which may yet be refused, is a ``ServiceUnavailable``: the job runs again later, as for a move."""
    wanted = sorted({row["unit"] for row in rows} - {ROOT})
    found = api_table().get_many([keys.unit_key(org_id, unit) for unit in wanted]) if wanted else []
    paths, now = {ROOT: join(())}, time.time()
    for unit, item in zip(wanted, found, strict=True):
        if item is not None and tree.deleting(item, now):
            raise ServiceUnavailable(f"A delete of unit {unit} of organization {org_id} is under way; retry shortly")
        if item is not None:
            paths[unit] = item["path"]
    return paths


def batch(rows: list[Item], seats_left: int) -> list[Item]:
    """The first rows that one transaction takes: TransactWriteItems' 100 actions hold the users,
    the org's check, the counter, the part's check (``dal.imports.undecided``) and one check per
    unit they name (so 97 users in the root, a part's worth, fewer across several units), and no
    more users than the seats left."""
    units: set[str] = set()
    for taken, row in enumerate(rows):
        named = units | ({row["unit"]} - {ROOT})
        if taken == seats_left or taken + 1 + len(named) > imports.PART_ROWS:
            return rows[:taken]
        units = named
    return rows


def user(org_id: str, import_id: str, row: Item, unit_path: str, actor: str | None) -> Item:
    fields = {name: value for name, value in row.items() if name != "row"}
    # in the unit the row names (the root if none), at its path as read: the transaction checks it is still there
    attributes = {"org_id": org_id, **fields, "import_id": import_id, "unit_path": unit_path}
    if config.directory() is None:  # make run: no user pool, so a subject of its own, as a single create
        attributes[stamps.SIGN_IN_SUBJECT] = stamps.local_sign_in_subject()
    return stamps.new_item(keys.user_keys(org_id, row["user_id"], split(unit_path)), keys.USER, attributes, actor)


def give_back_unrecorded(org_id: str, import_id: str, part: Item, put: list[str]) -> None:
    """Delete the users ``put`` (and give their seats back) that the part, decided by another
    delivery of the job, does not count as created: its decision stands, and it refused them (for
    seats, or a unit, as it read them before this delivery put them), so they would hold seats
    unreported and never get a sign-in (this delivery put them before the decision was written).
    Only a user still this import's goes: read first (one
    BatchGetItem, as ``give_back_stranded``), so a user gone already (the import's end gave them
    back) gets no sweep marker nor queued sweep, as a user's delete of a missing user gets none."""
    table = api_table()
    stored = table.get(keys.base_key(part), consistent=True)
    if stored is None or not stored.get("decided"):  # gone with its org, whose delete takes the users too
        return
    unrecorded = sorted(set(put) - set(stored["created"]))
    for user_id, user in sorted(imports.users_present(table, org_id, unrecorded).items()):
        if user.get("import_id") == import_id:
            _give_back(table, org_id, import_id, user_id)


# Refusals a later put of the same row may have met: a seat, a unit or the org's status changed
# since, or the user of that id (another's) was deleted since.
_PUT_ELSEWHERE = ("quota_exceeded", "not_found", "org_suspended", "already_exists")


def give_back_stranded(org_id: str, import_id: str, parts: list[Item]) -> None:
    """Delete the users of this import that its decided ``parts`` refused (and give their seats
    back): a losing delivery put them before the part's decision (no user of a part is put after it:
    ``dal.imports.undecided``) and stopped (a timeout, a failed request) before
    ``give_back_unrecorded``. Run as the import ends, after every part's decision: it finds every
    such user, and none is put after it, so a delivery that finds the import ended has nothing to do.
    Only a user still this import's, and not counted as created, goes (one BatchGetItem per part
    with such refusals)."""
    table = api_table()
    for part in (part for part in parts if part["decided"]):
        refused = [r["user_id"] for r in part.get("refused", []) if r["code"] in _PUT_ELSEWHERE and r["user_id"]]
        for user_id, user in imports.users_present(table, org_id, refused).items():
            if user.get("import_id") == import_id and user_id not in part["created"]:
                _give_back(table, org_id, import_id, user_id)


def _give_back(table: Table, org_id: str, import_id: str, user_id: str) -> None:
    """Delete the user (if still this import's) and give their seat back, with their tickets, as a
    user's delete does (``logic.users.delete_user``): they were listed, as any user, while they held
    the seat, and a ticket opened for them meanwhile would outlive them."""
    marker = cascade.mark_for_sweep(table, org_id, user_id)
    queued = cascade.schedule_sweep(org_id, user_id)
    try:
        seats.give_back(table, org_id, keys.user_key(org_id, user_id), (Expect("import_id", import_id),))
    except ConditionFailed:  # gone already, or another's now: the sweep spares a successor's tickets
        pass
    else:
        cascade.delete_tickets_of(table, org_id, user_id, before=ulid_floor(int(time.time() * 1000) + 1))
    if not queued:
        cascade.sweep(table, org_id, marker)
