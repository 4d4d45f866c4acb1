"""Users: the people of an organization, kept in step with their Cognito sign-in."""

import time
from contextlib import suppress
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit

from controlplane import config
from controlplane.dal import cursor, keys, seats, stamps, transactions
from controlplane.dal.conditions import ConditionFailed, Expect, Item
from controlplane.dal.directory import SYNCED, Directory, NoSignIn
from controlplane.dal.table import api_table
from controlplane.logic import cascade, organizations, refusals, signins, tickets, units
from controlplane.logic.access import Caller, authorize_fields
from controlplane.models import errors, plans
from controlplane.models.errors import (
    AlreadyExists,
    ApiError,
    QuotaExceeded,
    ServiceUnavailable,
)
from controlplane.models.ids import ulid_floor
from controlplane.models.resources import User, UserCreate, UserPage, UserUpdate, UserWithTickets
from controlplane.models.units import join
from controlplane.observability import logger, metrics


def _not_counted(org_id: str) -> ServiceUnavailable:
    """An org stored before seats were counted: no user joins or leaves it until the migration has
    counted them, or the count would start wrong and stay wrong."""
    logger.warning("Organization has no user_count: run the user-count migration", org_id=org_id)
    return ServiceUnavailable(f"Organization {org_id}'s seats are being counted; retry shortly", retry_after=30)


def _org_refused(org_id: str, org: Item | None) -> ApiError:
    """Why the org refused a new user, from the org item the failed transaction returned."""
    if org is None or stamps.DELETING in org:  # an org being deleted takes no one new
        return errors.org_missing(org_id)
    return errors.suspended_for_users(org_id)


def _full(org_id: str, counter: Item | None) -> ApiError:
    """The quota refusal, from the counter the failed transaction returned (and the org's plan: a
    read on the refusal path only, strongly consistent: just after a plan change, an eventually
    consistent one may name the old plan beside the new limit); an org never counted has no counter."""
    if counter is None:
        return _not_counted(org_id)
    org = api_table().get(keys.org_key(org_id), consistent=True) or {"plan": "?"}
    return QuotaExceeded("users", int(counter[plans.USER_LIMIT]), int(counter[plans.USER_COUNT]), org["plan"])


def seat_refused(org_id: str, failed: ConditionFailed, users: int = 1) -> ApiError | None:
    """Why ``seats.take`` of ``users`` users was refused, if for the org or its seats; None when a
    user exists (action ``i < users``: the caller says which)."""
    if failed.action == users:
        return _org_refused(org_id, failed.item)
    if failed.action == users + 1:
        return _full(org_id, failed.item)
    return None


def _remove(org_id: str, user_id: str, rules: tuple[refusals.Rule, ...] = ()) -> None:
    """Delete the user's item and give their seat back, in one transaction."""
    missing = errors.user_missing(org_id, user_id)
    try:
        seats.give_back(api_table(), org_id, keys.user_key(org_id, user_id), refusals.expects(rules))
    except ConditionFailed as failed:
        if failed.action == 0:
            raise refusals.refusal(failed, missing, rules) from None
        raise _not_counted(org_id) from None


def create_user(org_id: str, body: UserCreate, caller: Caller) -> User:
    path, check = units.placement(org_id, body.unit)
    attributes = {"org_id": org_id, **body.model_dump(), "unit_path": join(path)}
    directory = config.directory()
    if directory is None:  # make run: no user pool, so a subject of its own, new per creation as Cognito's
        attributes[stamps.SIGN_IN_SUBJECT] = stamps.local_sign_in_subject()
    item = stamps.new_item(keys.user_keys(org_id, body.user_id, path), keys.USER, attributes, caller.subject)
    try:
        seats.take(api_table(), org_id, [item], checks=(check,) if check else ())
    except ConditionFailed as failed:
        if failed.action == 3:  # 0 the user, 1 the org, 2 its counter, 3 the unit (seats.take)
            raise units.refused_placement(org_id, body.unit, failed.item) from None
        raise (seat_refused(org_id, failed) or errors.user_exists(org_id, body.user_id)) from None
    # The table decides 404/409 first; only then the sign-in, whose subject the item then keeps (the
    # authorizer refuses the user until it does), set as the org's status is by then. If any of it
    # fails, the user (and their seat) goes too: this create's item and sign-in only, since a user of
    # that name may have been deleted and created again meanwhile, and both go by name.
    if directory is not None:
        made = _made_here(org_id, item)
        try:
            subject = _new_sign_in(directory, org_id, body, made)
        except Exception:
            _remove_made(org_id, body.user_id, made)
            raise
        try:
            # on this create's item only: a successor's (deleted and created again meanwhile) has a
            # sign-in of its own, whose subject it is to keep. Over whatever the item holds: only this
            # create knows its sign-in (a backfill meanwhile may have read a left-over's).
            with refusals.refused_as(errors.user_missing(org_id, body.user_id), made):
                key = keys.user_key(org_id, body.user_id)
                api_table().mark(key, stamps.SIGN_IN_SUBJECT, subject, refusals.expects(made), overwrite=True)
            signins.as_its_org_is(directory, org_id, body.user_id, subject)
        except Exception:
            # The user first: a sign-in left over (Cognito failing again) lets no one in, since no
            # item holds its subject, and the next create of that name replaces it.
            try:
                _remove_made(org_id, body.user_id, made)
            finally:
                signins.remove_if_made(directory, org_id, body.user_id, subject)
            raise
    metrics.add_metric(name="UserCreated", unit=MetricUnit.Count, value=1)
    return User.model_validate(item)


def _remove_made(org_id: str, user_id: str, made: tuple[refusals.Rule, ...]) -> None:
    """A failed create's clean-up: its item, if still there (``made``). One gone, or a successor's,
    is not this create's to remove, and the create's own error stands, not a 404 for a user who may
    well be there (deleted and created again meanwhile). The user was listed while the create ran,
    so a ticket may have been opened for them: it goes with them, as a user's delete's do
    (``delete_user``), or it would outlive them, into the next user of that id, and past the org's
    delete, which finds tickets through their users and sweep markers only."""
    table = api_table()
    marker = cascade.mark_for_sweep(table, org_id, user_id)
    try:
        queued = cascade.schedule_sweep(org_id, user_id)
    except Exception:  # the create's own error stands, and the user still goes: swept here instead
        logger.warning("Could not queue a failed create's sweep", org_id=org_id, user_id=user_id, exc_info=True)
        queued = False
    with suppress(errors.NotFound):
        _remove(org_id, user_id, made)
        cascade.delete_tickets_of(table, org_id, user_id, before=ulid_floor(int(time.time() * 1000) + 1))
    if not queued:
        cascade.sweep(table, org_id, marker)


def _made_here(org_id: str, item: Item) -> tuple[refusals.Rule, ...]:
    """A failed create removes only the item it put: one of that name whose ``created_at`` differs
    is a successor's (the user deleted and created again meanwhile), which stays."""
    gone = errors.user_missing(org_id, item["user_id"])
    return ((Expect("created_at", item["created_at"]), lambda _: gone),)


def _new_sign_in(directory: Directory, org_id: str, body: UserCreate, made: tuple[refusals.Rule, ...]) -> str:
    """The user's new sign-in, and its subject. A sign-in of that name already there is a new user's
    of that id if the item (read consistently, on this path only) is not this create's (``made``):
    this one's user was deleted and created again, whole, before it got here; it stays, and this
    user is missing. Otherwise it has no user item (the table took this one as new): it is left over
    from a create or delete that failed half-way, no token of it passes the authorizer (no item holds
    its subject), and it is replaced."""
    try:
        return directory.create(org_id, body.user_id, body.email, body.role)
    except AlreadyExists:
        stored = api_table().get(keys.user_key(org_id, body.user_id), consistent=True)
        if stored is None or not all(expect.met_by(stored) for expect in refusals.expects(made)):
            raise errors.user_missing(org_id, body.user_id) from None
        logger.warning("Replacing a left-over sign-in", org_id=org_id, user_id=body.user_id)
        directory.delete(org_id, body.user_id)
        return directory.create(org_id, body.user_id, body.email, body.role)


def list_users(org_id: str, limit: int, cursor_token: str | None) -> UserPage:
    scope = keys.users_scope(org_id)
    after = cursor.resume_after(scope, cursor_token)
    if after is None:  # the first page comes with the org, so a missing org is a 404
        _, _, found, more = organizations.first_users(org_id, limit)
    else:
        start = keys.user_key(org_id, after) if after else None
        found, last = api_table().query(
            keys.org_partition(org_id), prefix=keys.USER_PREFIX, limit=limit, start_key=start
        )
        more = last is not None
    next_cursor = cursor.next_cursor(scope, found, "user_id", more)
    return UserPage.model_validate({"items": found, "next_cursor": next_cursor})  # the page in one validation


def get_user(org_id: str, user_id: str) -> User:
    item = api_table().get(keys.user_key(org_id, user_id))
    if item is None:
        raise errors.user_missing(org_id, user_id)
    return User.model_validate(item)


def get_user_with_tickets(org_id: str, user_id: str, limit: int) -> UserWithTickets:
    user, found, more = tickets.first_tickets(org_id, user_id, limit)
    next_cursor = tickets.next_cursor(org_id, user_id, tickets.first_id_of(user), found, more)
    return UserWithTickets.model_validate({"user": user, "tickets": found, "next_cursor": next_cursor})


def update_user(org_id: str, user_id: str, body: UserUpdate, caller: Caller, version: int | None = None) -> User:
    changes = body.changes()
    authorize_fields(caller, set(changes))
    missing, rules = errors.user_missing(org_id, user_id), refusals.if_match(version)
    if "unit" in changes:  # a move, in a transaction with its new unit: no role or e-mail comes with it
        return _move_user(org_id, user_id, changes, caller, rules)
    written = stamps.written_by(changes, caller.subject)
    synced = {SYNCED[field]: value for field, value in changes.items() if field in SYNCED}
    directory = config.directory() if synced else None
    if directory is None:
        with refusals.refused_as(missing, rules):
            item = api_table().update(keys.user_key(org_id, user_id), written, stamps.now(), refusals.expects(rules))
        return User.model_validate(item)
    # The table first: a missing user or a stale If-Match is refused before Cognito is touched. Then
    # the sign-in, put back as the item is if the table's write still fails (a race, throttling).
    # (The authorizer takes the role from the item; the sign-in's copy is for the token's readers.)
    _existing(org_id, user_id, version)
    try:
        stored = directory.attributes(org_id, user_id)
    except NoSignIn:
        raise errors.no_sign_in(user_id) from None
    try:
        directory.set_attributes(org_id, user_id, synced)
    except NoSignIn:  # gone since it was read: the user's delete, which removes the sign-in first, is under way
        raise missing from None
    try:
        with refusals.refused_as(missing, rules):
            item = api_table().update(keys.user_key(org_id, user_id), written, stamps.now(), refusals.expects(rules))
    except Exception:
        # Put back what the table holds now: a change that overtook this one may have set the same field
        # (its sign-in, then its item). What the sign-in held before, if the table cannot say.
        back = {name: stored[name] for name in synced if name in stored}
        with suppress(Exception):
            now = api_table().get(keys.user_key(org_id, user_id), consistent=True) or {}
            back |= {name: now[field] for field, name in SYNCED.items() if name in synced and field in now}
        with suppress(NoSignIn):  # deleted meanwhile, sign-in first: no claim to put back, and its error stands
            directory.set_attributes(org_id, user_id, back)
        raise
    return User.model_validate(item)


def _move_user(
    org_id: str, user_id: str, changes: dict[str, Any], caller: Caller, rules: tuple[refusals.Rule, ...]
) -> User:
    """Put the user in another unit (with their other changes, if they need no sign-in change)."""
    path, check = units.placement(org_id, changes["unit"])
    unit_id, table, key = changes["unit"], api_table(), keys.user_key(org_id, user_id)
    written = stamps.written_by({**changes, "unit_path": join(path)}, caller.subject)
    written |= keys.member_keys(org_id, user_id, path)
    try:
        if check is None:  # into the root: no unit to check
            item = table.update(key, written, stamps.now(), refusals.expects(rules))
            return User.model_validate(item)
        transactions.update_with_check(table, key, written, stamps.now(), check, refusals.expects(rules))
    except ConditionFailed as failed:
        if failed.action == 1:
            raise units.refused_placement(org_id, unit_id, failed.item) from None
        raise refusals.refusal(failed, errors.user_missing(org_id, user_id), rules) from None
    moved = table.get(key, consistent=True)
    if moved is None:  # deleted right after the move
        raise errors.user_missing(org_id, user_id)
    return User.model_validate(moved)


def _existing(org_id: str, user_id: str, version: int | None) -> None:
    """Fail closed before anything outside the table changes: the user exists (one consistent read),
    at the If-Match version when one is given."""
    user = api_table().get(keys.user_key(org_id, user_id), consistent=True)
    if user is None:
        raise errors.user_missing(org_id, user_id)
    if version is not None:
        refusals.check_version(user, version)


def delete_user(org_id: str, user_id: str, version: int | None = None) -> None:
    """The sign-in, then the item (no ticket can be opened for the user from then on), then their
    tickets; and a sweep of the tickets GSI1 did not show yet, when it has caught up.

    A missing user or a stale If-Match fails before anything goes; once the sign-in is gone the
    delete goes through, even if a PATCH changed the user since that check (a 412 then would leave
    a user who can never sign in again). The sweep's marker is written
    and its job queued before the item goes, so whatever stops the request after that, the tickets
    go: the queue's job sweeps them (or, where there is no queue, this request; stopped after the
    item went, the delete asked again, before its 404; or the org's delete, which sweeps every
    marker left)."""
    table = api_table()
    try:
        _existing(org_id, user_id, version)
    except errors.NotFound:
        if not config.settings().deletions_queue_url:  # make run: what the queue's job would have swept
            cascade.sweep_user(org_id, user_id)
        raise
    cascade.remove_sign_in(org_id, user_id)
    marker = cascade.mark_for_sweep(table, org_id, user_id)
    queued = cascade.schedule_sweep(org_id, user_id)
    try:
        _remove(org_id, user_id, ())  # If-Match was checked before the sign-in went (_existing)
    except errors.NotFound:
        # Overtaken since it was found (another delete of the user, the org's): its marker, written
        # after theirs were swept, is this delete's to sweep (with a queue, its job does)
        if not queued:
            cascade.sweep(table, org_id, marker)
        raise
    # Only tickets opened before the item went (none can be after): a user of that id created again
    # while these pages go keeps their own.
    cascade.delete_tickets_of(table, org_id, user_id, before=ulid_floor(int(time.time() * 1000) + 1))
    if not queued:
        cascade.sweep(table, org_id, marker)
