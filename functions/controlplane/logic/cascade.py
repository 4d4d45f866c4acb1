"""Cascade deletes: an organization, or a user, with everything under it."""

import json
import math
import time
import uuid
from collections.abc import Callable
from contextlib import suppress
from datetime import datetime
from decimal import Decimal

from controlplane import config
from controlplane.dal import batches, keys, stamps, transactions
from controlplane.dal.conditions import ConditionFailed, Expect, Item
from controlplane.dal.table import Table, api_table
from controlplane.logic import refusals
from controlplane.models import errors
from controlplane.models.ids import ulid_floor

# The deletions queue's job that sweeps a deleted user's tickets once GSI1 has caught up.
SWEEP_KIND = "ticket-sweep"

# Stop starting new steps of a cascade delete when less time than this is left.
DELETE_STEP_SECONDS = 5.0


def delete_org(
    org_id: str,
    version: int | None = None,
    time_left: Callable[[], float] = lambda: math.inf,
    actor: str | None = None,
) -> bool:
    """Delete an org with all its users and tickets; True when done, False when ``time_left`` (in
    seconds) ran short and the caller must continue later (``continue_delete``). Every step can be
    run again.

    1. Mark the org ``deleting_since`` (and ``deleted_by``, the ``actor``): no user can be added from
       then on. A delete of an org being deleted goes on with the first delete's mark.
    2. Per user: leave a sweep marker, delete their sign-in and their item (no ticket can be added
       from then on), then the tickets GSI1 shows. Then any sign-in of the org left (one no item
       names: a failed create's), found by name in the user pool.
    3. Per marker, once GSI1 has had ``gsi1_settle_seconds`` (GSI1 is updated asynchronously) to show
       every ticket written before the user went: delete the tickets it shows now, then the marker.
    4. Delete the org's units (no user is left in them), its idempotency records, then the org.

    Every query of the base table here is strongly consistent: an eventually consistent one may miss
    an item written just before the mark (a user, with their sign-in, or a marker), which would then
    outlive the org and belong to the next org of that id. GSI1's queries cannot be; the sweeps
    cover them.
    """
    table = api_table()
    rules = refusals.if_match(version)
    with refusals.refused_as(errors.org_missing(org_id), rules):
        org = table.mark(
            keys.org_key(org_id),
            stamps.DELETING,
            stamps.now(),
            refusals.expects(rules),
            alongside={stamps.DELETED_BY: actor} if actor else None,
        )
    return _cascade(table, org_id, org[stamps.DELETING], time_left)


def deletion_mark(org_id: str) -> str | None:
    """The mark of the org's delete under way (None: none is, or there is no such org)."""
    org = api_table().get(keys.org_key(org_id), consistent=True)
    return None if org is None else org.get(stamps.DELETING)


def continue_delete(org_id: str, mark: str, time_left: Callable[[], float] = lambda: math.inf) -> bool:
    """Go on with the delete marked ``mark`` (``deleting_since``); a job never starts one. Done
    (True) at once if that org is gone: an org of that id created since is another tenant's."""
    return _cascade(api_table(), org_id, mark, time_left)


def _cascade(table: Table, org_id: str, mark: str, time_left: Callable[[], float]) -> bool:
    """Steps 2 to 4 of ``delete_org`` for the org marked ``mark``. Each user, and each page of the
    rest, first checks that the org is still that one (strongly consistent): a run that another
    finished, after which the id was taken again, stops instead of deleting the new org's items
    (a page of users read before that is the old org's, and takes minutes to go through)."""
    removed: set[str] = set()  # sign-ins this run removed, which a lagging pool listing may still show
    for users in table.query_all(keys.org_partition(org_id), prefix=keys.USER_PREFIX, consistent=True):
        for user in users:
            if time_left() < DELETE_STEP_SECONDS:
                return False
            if not _marked(table, org_id, mark):
                return True
            mark_for_sweep(table, org_id, user["user_id"])
            remove_sign_in(org_id, user["user_id"])
            removed.add(user["user_id"])
            batches.delete_all(table, [user])
            if not delete_tickets_of(table, org_id, user["user_id"], time_left, _ulid_after(mark)):
                return False  # the user's sweep marker brings the rest of their tickets back
    if (directory := config.directory()) is not None:
        # Sign-ins no user item names (a create whose clean-up failed too, or never learnt Cognito
        # made one): found by name in the pool, each checked, as a user is, to be still this org's
        if time_left() < DELETE_STEP_SECONDS:
            return False
        for user_id in sorted(set(directory.user_ids(org_id)) - removed):
            if time_left() < DELETE_STEP_SECONDS:
                return False
            if not _marked(table, org_id, mark):
                return True
            directory.delete(org_id, user_id)
    for sweeps in table.query_all(keys.org_partition(org_id), prefix=keys.SWEEP_PREFIX, consistent=True):
        for marker in sweeps:
            if not _marked(table, org_id, mark):
                return True
            if not sweep(table, org_id, marker, time_left):
                return False
    for partition, prefix in (
        (keys.units_partition(org_id), None),  # its units and their tree item
        (keys.org_partition(org_id), keys.IMPORT_PREFIX),  # user imports (a running one's job then finds it gone)
        (keys.idempotency_partition(org_id), None),
    ):
        for found in table.query_all(partition, prefix=prefix, consistent=True):
            if not _marked(table, org_id, mark):
                return True
            batches.delete_all(table, found)
    with suppress(ConditionFailed):  # another run deleted it first
        transactions.delete_with(table, keys.org_key(org_id), (Expect(stamps.DELETING, mark),), keys.seats_key(org_id))
    return True


def _marked(table: Table, org_id: str, mark: str) -> bool:
    org = table.get(keys.org_key(org_id), consistent=True)
    return org is not None and org.get(stamps.DELETING) == mark


def _ulid_after(stamp: str) -> str:
    """The smallest ticket id of the millisecond after ``stamp`` (an ISO time): every ticket of the
    org before its mark sorts before it, and a ticket opened after (another org's) does not."""
    return ulid_floor(int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000) + 1)


def remove_sign_in(org_id: str, user_id: str) -> None:
    """First, so no one can sign in as a user being deleted. The table's item goes last, so a
    delete that fails half-way is answered with an error and completes when retried."""
    if directory := config.directory():
        directory.delete(org_id, user_id)


def delete_tickets_of(
    table: Table,
    org_id: str,
    user_id: str,
    time_left: Callable[[], float] = lambda: math.inf,
    before: str | None = None,
) -> bool:
    """Delete the tickets GSI1 shows for a user (those whose id sorts before ``before``, if given), a
    page (1,000) at a time; False if time ran short."""
    options: dict[str, object] = {"prefix": keys.TICKET_PREFIX}
    if before is not None:
        options = {"between": (keys.TICKET_PREFIX, f"{keys.TICKET_PREFIX}{before}")}
    for tickets in table.query_all(keys.user_collection(org_id, user_id), on_index=True, **options):
        if time_left() < DELETE_STEP_SECONDS:
            return False
        batches.delete_all(table, tickets)
    return True


def mark_for_sweep(table: Table, org_id: str, user_id: str) -> Item:
    """Before a user's item goes: a marker that their tickets are swept again once GSI1 (updated
    asynchronously) has had ``gsi1_settle_seconds`` to show every ticket written before the user went.

    A later delete of a user of that id writes its own marker over this one: ``sweep_id`` says whose
    it is, so an older sweep never deletes the newer delete's marker (``sweep``)."""
    # To the millisecond: a whole second (math.ceil) made every user delete wait up to 1 s for nothing
    sweep_after = Decimal(str(round(time.time() + config.settings().gsi1_settle_seconds, 3)))
    marker: Item = {
        **keys.sweep_key(org_id, user_id),
        "entity": keys.SWEEP,
        "user_id": user_id,
        "sweep_after": sweep_after,
        "sweep_id": uuid.uuid4().hex,
    }
    table.put(marker)
    return marker


def sweep_user(org_id: str, user_id: str, time_left: Callable[[], float] = lambda: math.inf) -> bool:
    """A deleted user's sweep (``mark_for_sweep``), if it is still to do; False if time ran short."""
    table = api_table()
    marker = table.get(keys.sweep_key(org_id, user_id), consistent=True)
    return marker is None or sweep(table, org_id, marker, time_left)


def sweep(table: Table, org_id: str, marker: Item, time_left: Callable[[], float] = lambda: math.inf) -> bool:
    """Wait out the marker's settle time, delete the tickets GSI1 shows now, then the marker if it is
    still this one. A user of that id created again since keeps their own: only tickets older than
    their item go. A marker a newer delete of that id wrote meanwhile stays for that delete's sweep,
    which alone waits long enough for the tickets its user opened."""
    wait = float(marker["sweep_after"]) - time.time()  # 0 where GSI1 is synchronous (moto, Local)
    if time_left() < DELETE_STEP_SECONDS + max(wait, 0):
        return False
    time.sleep(max(wait, 0))
    user_id = marker["user_id"]
    successor = table.get(keys.user_key(org_id, user_id), consistent=True)
    before = None
    if successor is not None:
        created = datetime.fromisoformat(successor["created_at"])
        before = ulid_floor(int(created.timestamp() * 1000))
    if not delete_tickets_of(table, org_id, user_id, time_left, before):
        return False
    # A marker written before sweep_id existed is named by its settle time (to the millisecond)
    owner = "sweep_id" if "sweep_id" in marker else "sweep_after"
    # Refused: gone (another delivery of this sweep), or a newer delete's, which its own sweep deletes
    with suppress(ConditionFailed):
        table.delete(keys.sweep_key(org_id, user_id), (Expect(owner, marker[owner]),))
    return True


def schedule_sweep(org_id: str, user_id: str) -> bool:
    """Queue a deleted user's sweep for when GSI1 has settled; False where there is no queue."""
    queue_url = config.settings().deletions_queue_url
    if not queue_url:
        return False
    body = {"kind": SWEEP_KIND, "org_id": org_id, "user_id": user_id}
    delay = min(math.ceil(config.settings().gsi1_settle_seconds), 900)  # SQS delays a message 15 min at most
    config.sqs().send_message(QueueUrl=queue_url, MessageBody=json.dumps(body), DelaySeconds=delay)
    return True
