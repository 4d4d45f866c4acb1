"""The user import's job (see ``logic.imports``): one pass decides every part's rows, then tries
their sign-ins; a pass stops early when time runs short, and the rest is queued (on the deletions
queue, as ``{"kind": "user-import", ...}``)."""

import json
import math
import time
from collections.abc import Callable
from typing import Any

from controlplane import config
from controlplane.dal import imports, keys, seats, stamps, tree
from controlplane.dal.conditions import ConditionFailed, Expect, Item
from controlplane.dal.directory import Directory, SignInRefused
from controlplane.dal.imports import DONE, RUNNING
from controlplane.dal.table import api_table
from controlplane.logic import import_rows, signins
from controlplane.models import errors, plans
from controlplane.models.errors import AlreadyExists, ServiceUnavailable
from controlplane.models.imports import MESSAGE_CHARS, echoed, refusal
from controlplane.models.resources import SUSPENDED
from controlplane.models.units import ROOT
from controlplane.observability import logger
from controlplane.pacing import Throttle

KIND = "user-import"

# AdminCreateUser is in Cognito's UserCreation category: 50 a second per account and Region by default ("Quotas in
# Amazon Cognito"). An import takes a fifth; infra caps the jobs at once (DELETIONS_MAX_CONCURRENCY) for the rest.
USER_CREATION_PER_SECOND = 50
IMPORT_SIGNINS_PER_SECOND = 10.0
SIGN_IN_ATTEMPTS = 3
RETRY_SECONDS = 60
STEP_SECONDS = 5.0  # stop starting steps when less time than this is left, and queue the rest
PROGRESS_EVERY = 10  # sign-ins per write of a part's progress
# Reads of the org and its counter in a row found out of date (others kept moving it) before giving up.
_REREADS = 10


def enqueue(org_id: str, import_id: str, delay: int = 0) -> None:
    body = json.dumps({"kind": KIND, "org_id": org_id, "import_id": import_id})
    config.sqs().send_message(QueueUrl=config.deletions_queue(), MessageBody=body, DelaySeconds=min(delay, 900))


def resume(job: dict[str, Any], time_left: Callable[[], float]) -> None:
    """A job from the queue: work until time runs short, then queue the rest."""
    delay = run(job["org_id"], job["import_id"], time_left)
    if delay is not None:
        enqueue(job["org_id"], job["import_id"], delay)


def run(
    org_id: str, import_id: str, time_left: Callable[[], float] = lambda: math.inf, throttle: Throttle | None = None
) -> int | None:
    """One pass: decide every part's rows, then try their sign-ins. None once the import is done (or
    gone); else the seconds after which to continue (0: time ran short; ``RETRY_SECONDS``: failed
    sign-ins to try again)."""
    try:
        return _pass(org_id, import_id, time_left, throttle or Throttle(IMPORT_SIGNINS_PER_SECOND))
    except imports.Superseded:
        logger.info("User import: another delivery is ahead; it carries on", org_id=org_id, import_id=import_id)
        return None


def _pass(org_id: str, import_id: str, time_left: Callable[[], float], pace: Throttle) -> int | None:
    table = api_table()
    record, parts = imports.load(table, org_id, import_id)
    if record is None or record["status"] != RUNNING:  # done, or gone: its end gave back what was left
        return None
    for i, part in enumerate(parts):
        if not part["decided"]:
            decided = _decide(org_id, import_id, part, record.get("created_by"), time_left)
            if decided is None:
                return 0
            parts[i] = decided
    org, _ = seats.read(table, org_id, consistent=True)
    if org is None or stamps.DELETING in org:  # its users go with it: no sign-in to make
        return None
    for part in parts:
        if not _sign_in(org_id, import_id, part, time_left, pace):
            return 0
    record, parts = imports.load(table, org_id, import_id)
    if record is None:
        return None
    if any(int(f["attempts"]) < SIGN_IN_ATTEMPTS for part in parts for f in part.get("failures", {}).values()):
        return RETRY_SECONDS
    for part in parts:  # done with the rows: drop them, keep what became of them
        imports.advance(table, part, {}, removed=("rows",))
    import_rows.give_back_stranded(org_id, import_id, parts)
    imports.advance(table, record, {"status": DONE, "updated_at": stamps.now()})
    logger.info("User import done", org_id=org_id, import_id=import_id)
    return None


def _decide(org_id: str, import_id: str, part: Item, actor: str | None, time_left: Callable[[], float]) -> Item | None:
    """Create the part's users, or refuse each with its reason: the part as it is now, or None if
    time ran short first."""
    if time_left() < STEP_SECONDS:
        return None
    table = api_table()
    rows = part["rows"]
    present = imports.users_present(table, org_id, [row["user_id"] for row in rows])
    # this import's users: present, or put by a delivery that died before the decision (and deleted since)
    ours = {*part.get("taken", []), *(u for u, user in present.items() if user.get("import_id") == import_id)}
    created = [row["user_id"] for row in rows if row["user_id"] in ours]
    refused = [
        refusal(row["row"], row["user_id"], "already_exists", f"User {row['user_id']} already exists")
        for row in rows
        if row["user_id"] in present and row["user_id"] not in created
    ]
    put: list[str] = []  # the users this delivery put itself (not another's, found existing)
    try:
        new_created, new_refused = _take(
            org_id, import_id, part, [row for row in rows if row["user_id"] not in {*present, *created}], actor, put
        )
        refused = sorted(refused + new_refused, key=lambda r: int(r["row"]))
        return imports.advance(
            table, part, {"decided": True}, appended={"created": created + new_created, "refused": refused}
        )
    except imports.Superseded:  # another delivery decided the part: what it did not count goes
        if put:
            import_rows.give_back_unrecorded(org_id, import_id, part, put)
        raise


def _take(
    org_id: str, import_id: str, part: Item, rows: list[Item], actor: str | None, put: list[str]
) -> tuple[list[str], list[Item]]:
    """Put as many of ``rows`` as the org has seats for, each in its unit, in one transaction (more
    if one is found to exist meanwhile), while ``part`` is not decided; refuse the rest, each with
    the reason. Each user this call puts is added to ``put`` as it goes in. ``Superseded`` once
    another delivery decided the part: no user is put after that."""
    table = api_table()
    created: list[str] = []
    refused: list[Item] = []
    paths = import_rows.unit_paths(org_id, rows)
    pending, rereads = list(rows), 0
    while pending:
        # a row whose unit does not exist is refused, as a single create in it is 404
        refused += [
            refusal(row["row"], row["user_id"], "not_found", str(errors.unit_missing(org_id, row["unit"])))
            for row in pending
            if row["unit"] not in paths
        ]
        pending = [row for row in pending if row["unit"] in paths]
        if not pending:
            break
        org, counter = seats.read(table, org_id, consistent=True)
        if org is None or stamps.DELETING in org or org.get("status") == SUSPENDED:
            gone = org is None or stamps.DELETING in org
            code, message = (
                ("not_found", "The organization is being deleted")
                if gone
                else ("org_suspended", "The organization was suspended")
            )
            return created, refused + [refusal(row["row"], row["user_id"], code, message) for row in pending]
        if counter is None and not seats.move(table, org_id):
            raise ServiceUnavailable(f"Organization {org_id}'s seats are being counted; retry shortly", retry_after=30)
        if counter is None:
            continue
        limit, count = int(counter[plans.USER_LIMIT]), int(counter[plans.USER_COUNT])
        if count >= limit:
            # the seats may be this import's own: another delivery put rows read missing here since
            left = _sort_out(org_id, import_id, pending, created, refused)
            if len(left) < len(pending):
                pending = left
                continue
            message = str(errors.QuotaExceeded("users", limit, count, org["plan"]))
            refused += [refusal(row["row"], row["user_id"], "quota_exceeded", message) for row in pending]
            return created, refused
        batch = import_rows.batch(pending, limit - count)
        rest = pending[len(batch) :]
        units = sorted({row["unit"] for row in batch} - {ROOT})
        users = [import_rows.user(org_id, import_id, row, paths[row["unit"]], actor) for row in batch]
        now = time.time()
        checks = (
            imports.undecided(table, part, [row["user_id"] for row in batch]),
            *(tree.placed_in(table, keys.unit_key(org_id, unit), paths[unit], now) for unit in units),
        )
        try:
            seats.take(table, org_id, users, limit=limit, checks=checks)
        except ConditionFailed as failed:
            if failed.action == len(batch) + 2:  # the part (checks: after the org and the counter) is decided
                raise imports.Superseded() from None
            if failed.action >= len(batch) + 3:  # a unit changed
                if tree.MOVING in (failed.item or {}):  # a move is rewriting its path: the queue tries later
                    raise ServiceUnavailable(f"Units of organization {org_id} are being moved; retry shortly") from None
                rereads += 1  # moved or gone since the read: read again (a row whose unit went is refused)
                if rereads >= _REREADS:
                    raise ServiceUnavailable(f"Organization {org_id}'s units kept changing; retry shortly") from None
                paths = import_rows.unit_paths(org_id, pending)
                continue
            if failed.action >= len(batch):  # the org or its counter changed since the read: read again
                rereads += 1
                if rereads >= _REREADS:
                    raise ServiceUnavailable(f"Organization {org_id}'s seats kept changing; retry shortly") from None
                continue
            # A user of the batch exists now: another delivery of this job got there first (or a
            # create of the same id). Read which of the batch exist, in one request, and go on without them.
            pending = _sort_out(org_id, import_id, batch, created, refused) + rest
            continue
        created += [row["user_id"] for row in batch]
        put += [row["user_id"] for row in batch]
        pending, rereads = rest, 0
    return created, refused


def _sort_out(org_id: str, import_id: str, rows: list[Item], created: list[str], refused: list[Item]) -> list[Item]:
    """The ``rows`` whose users do not exist (one consistent BatchGetItem); one that does is this
    import's creation (another delivery of the job put it), added to ``created``, or another's, refused."""
    present = imports.users_present(api_table(), org_id, [row["user_id"] for row in rows])
    for user_id, row in ((row["user_id"], row) for row in rows if row["user_id"] in present):
        if present[user_id].get("import_id") == import_id:
            created.append(user_id)
        else:
            refused.append(refusal(row["row"], user_id, "already_exists", f"User {user_id} already exists"))
    return [row for row in rows if row["user_id"] not in present]


def _sign_in(org_id: str, import_id: str, part: Item, time_left: Callable[[], float], pace: Throttle) -> bool:
    """Create the sign-ins of the part's new users, then try its failed ones again (each failure counted,
    with why); False if time ran short first. Progress is written every few sign-ins."""
    directory = config.directory()
    table = api_table()
    created, failures = part["created"], dict(part.get("failures", {}))
    if directory is None:  # make run: no user pool, nothing to create
        if int(part["signed"]) < len(created):
            imports.advance(table, part, {"signed": len(created)})
        return True
    rows = {row["user_id"]: row for row in part.get("rows", [])}
    new = created[int(part["signed"]) :]
    retried = [u for u, f in failures.items() if int(f["attempts"]) < SIGN_IN_ATTEMPTS and u not in new]
    signed, tried = int(part["signed"]), 0
    for user_id in new + retried:
        if time_left() < STEP_SECONDS:
            break
        pace.wait()
        reason = _create_sign_in(directory, org_id, import_id, rows[user_id])
        if reason is None:
            failures.pop(user_id, None)
        else:
            failures[user_id] = {"reason": reason, "attempts": int(failures.get(user_id, {}).get("attempts", 0)) + 1}
        signed += user_id in new
        tried += 1
        if tried % PROGRESS_EVERY == 0:
            part = imports.advance(table, part, {"signed": signed, "failures": failures})
    if tried % PROGRESS_EVERY:
        imports.advance(table, part, {"signed": signed, "failures": failures})
    return tried == len(new) + len(retried)


def _create_sign_in(directory: Directory, org_id: str, import_id: str, row: Item) -> str | None:
    """None once the user's sign-in exists and their item keeps its subject (the authorizer allows no token
    until it does), as a single create does, or once the user is gone (no invitation is sent to someone
    deleted since the import put them); else why not."""
    user_id = row["user_id"]
    if (api_table().get(keys.user_key(org_id, user_id), consistent=True) or {}).get("import_id") != import_id:
        return None
    try:
        subject, replaced = _new_sign_in(directory, org_id, import_id, row)
    except ServiceUnavailable as busy:
        return busy.message
    except ConditionFailed:  # the user went, and one of that id is being created: theirs, not a left-over
        return None
    except SignInRefused as refused:  # Cognito's refusal (a bad address, the e-mail quota...): the row's outcome
        logger.warning("Sign-in not created", org_id=org_id, user_id=row["user_id"], error=str(refused))
        return echoed(str(refused), MESSAGE_CHARS)
    try:
        # this import's user only; a replacement over whatever they hold (another delivery's, now gone)
        ours = (Expect("import_id", import_id),)
        api_table().mark(keys.user_key(org_id, user_id), stamps.SIGN_IN_SUBJECT, subject, ours, overwrite=replaced)
    except ConditionFailed:  # the user was deleted meanwhile: their sign-in goes too (not a successor's)
        signins.remove_if_made(directory, org_id, user_id, subject)
        return None
    signins.as_its_org_is(directory, org_id, user_id, subject)
    return None


def _new_sign_in(directory: Directory, org_id: str, import_id: str, row: Item) -> tuple[str, bool]:
    """The user's sign-in, its subject, and whether it replaced one. One of that name already there is a
    new user's of that id if the item is not this import's (``ConditionFailed``: it stays); this job's
    own from before a crash if the item keeps its subject; otherwise no token of it passes the
    authorizer and it is replaced, as a single create replaces a left-over. It may also be another
    delivery's, not yet stored: the item may take it after this read, and this one must overwrite it. A
    replacement is made from the item, not the row: while the sign-in existed, an admin could change the
    user's e-mail or role (the guard is the sign-in), and the item holds that change."""
    user_id = row["user_id"]
    try:
        return directory.create_or_refusal(org_id, user_id, row["email"], row["role"]), False
    except AlreadyExists:
        subject = directory.subject(org_id, user_id)
        stored = api_table().get(keys.user_key(org_id, user_id), consistent=True) or {}
        if stored.get("import_id") != import_id:
            raise ConditionFailed(stored or None, 0) from None
        if stored.get(stamps.SIGN_IN_SUBJECT) == subject:
            return subject, False
        logger.warning("Replacing a left-over sign-in", org_id=org_id, user_id=user_id)
        directory.delete(org_id, user_id)
        return directory.create_or_refusal(org_id, user_id, stored["email"], stored["role"]), True
