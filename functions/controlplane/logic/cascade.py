"""Cascade deletes: an organization, or a user, with everything under it."""

import math
import time
from collections.abc import Callable

from controlplane import config
from controlplane.dal import batches, keys, stamps
from controlplane.dal.table import Table, api_table
from controlplane.logic import refusals
from controlplane.models import errors

# Stop starting new steps of a cascade delete when less time than this is left.
DELETE_STEP_SECONDS = 5.0


def delete_org(
    org_id: str,
    version: int | None = None,
    time_left: Callable[[], float] = lambda: math.inf,
    actor: str | None = None,
) -> bool:
    """Delete an org with all its users and tickets; True when done, False when ``time_left`` (in
    seconds) ran short and the caller must continue later. Every step can be run again.

    1. Mark the org ``deleting_since`` (and ``deleted_by``, the ``actor``): no user can be added from
       then on.
    2. Per user: leave a sweep marker, delete their sign-in and their item (no ticket can be added
       from then on), then the tickets GSI1 shows.
    3. Per marker, once GSI1 has had ``gsi1_settle_seconds`` (GSI1 is updated asynchronously) to show
       every ticket written before the user went: delete the tickets it shows now, then the marker.
    4. Delete the org's units (no user is left in them), its idempotency records, then the org.
    """
    table = api_table()
    rules = refusals.if_match(version)
    with refusals.refused_as(errors.org_missing(org_id), rules):
        table.mark(
            keys.org_key(org_id),
            stamps.DELETING,
            stamps.now(),
            refusals.expects(rules),
            alongside={stamps.DELETED_BY: actor} if actor else None,
        )
    for users in table.query_all(keys.org_partition(org_id), prefix=keys.USER_PREFIX):
        for user in users:
            if time_left() < DELETE_STEP_SECONDS:
                return False
            sweep = {**keys.sweep_key(org_id, user["user_id"]), "entity": keys.SWEEP, "user_id": user["user_id"]}
            table.put({**sweep, "sweep_after": math.ceil(time.time() + config.settings().gsi1_settle_seconds)})
            remove_sign_in(org_id, user["user_id"])
            batches.delete_all(table, [user])
            if not delete_tickets_of(table, org_id, user["user_id"], time_left):
                return False  # the user's sweep marker brings the rest of their tickets back
    for sweeps in table.query_all(keys.org_partition(org_id), prefix=keys.SWEEP_PREFIX):
        for sweep in sweeps:
            wait = float(sweep["sweep_after"]) - time.time()  # 0 where GSI1 is synchronous (moto, Local)
            if time_left() < DELETE_STEP_SECONDS + max(wait, 0):
                return False
            time.sleep(max(wait, 0))
            if not delete_tickets_of(table, org_id, sweep["user_id"], time_left):
                return False
            batches.delete_all(table, [sweep])
    for units in table.query_all(keys.units_partition(org_id)):  # its units and their tree item
        batches.delete_all(table, units)
    for found in table.query_all(keys.org_partition(org_id), prefix=keys.IMPORT_PREFIX):
        batches.delete_all(table, found)  # user imports (a running one's job then finds it gone and stops)
    for records in table.query_all(keys.idempotency_partition(org_id)):
        batches.delete_all(table, records)
    batches.delete_all(table, [keys.seats_key(org_id), keys.org_key(org_id)])
    return True


def remove_sign_in(org_id: str, user_id: str) -> None:
    """First, so no one can sign in as a user being deleted. The table's item goes last, so a
    delete that fails half-way is answered with an error and completes when retried."""
    if directory := config.directory():
        directory.delete(org_id, user_id)


def delete_tickets_of(
    table: Table, org_id: str, user_id: str, time_left: Callable[[], float] = lambda: math.inf
) -> bool:
    """Delete the tickets GSI1 shows for a user, a page (1,000) at a time; False if time ran short."""
    for tickets in table.query_all(keys.user_collection(org_id, user_id), on_index=True, prefix=keys.TICKET_PREFIX):
        if time_left() < DELETE_STEP_SECONDS:
            return False
        batches.delete_all(table, tickets)
    return True
