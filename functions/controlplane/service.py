"""What each route does: build items from validated input, call the data layer, map back to models."""

import math
import time
from collections.abc import Callable
from datetime import UTC, datetime

from aws_lambda_powertools.metrics import MetricUnit

from controlplane import config, cursor, keys
from controlplane.auth import Caller, authorize_fields
from controlplane.directory import SYNCED
from controlplane.errors import AlreadyExists, Forbidden, NotFound, PreconditionFailed
from controlplane.ids import new_ulid
from controlplane.models import (
    Org,
    OrgCreate,
    OrgPage,
    OrgUpdate,
    OrgWithUsers,
    Ticket,
    TicketCreate,
    TicketPage,
    TicketUpdate,
    User,
    UserCreate,
    UserPage,
    UserUpdate,
    UserWithTickets,
)
from controlplane.observability import metrics
from controlplane.table import Expect, Table

ORG, USER, TICKET, SWEEP = "org", "user", "ticket", "sweep"  # the ``entity`` attribute of each item
DELETING = "deleting_since"  # set on an org whose cascade delete has begun
# Stop starting new steps of a cascade delete when less time than this is left.
DELETE_STEP_SECONDS = 5.0


def _table() -> Table:
    return Table(config.dynamodb(), config.settings().table_name)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _new_item(item_keys: dict, entity: str, attributes: dict) -> dict:
    now = _now()
    return {**item_keys, "entity": entity, **attributes, "created_at": now, "updated_at": now, "version": 1}


def _page(scope: str, cursor_token: str | None) -> dict | None:
    return cursor.decode(scope, cursor_token, config.settings().cursor_secret)


def _next(scope: str, last_key: dict | None) -> str | None:
    return cursor.encode(scope, last_key, config.settings().cursor_secret)


# Cursor scopes: a cursor only continues the list it came from.
def _orgs_scope() -> str:
    return "orgs"


def _users_scope(org_id: str) -> str:
    return f"users:{org_id}"


def _tickets_scope(org_id: str, user_id: str) -> str:
    return f"tickets:{org_id}:{user_id}"


def _org_missing(org_id: str) -> NotFound:
    return NotFound(f"Organization {org_id} not found")


def _user_missing(org_id: str, user_id: str) -> NotFound:
    return NotFound(f"User {user_id} not found in organization {org_id}")


def _ticket_missing(org_id: str, ticket_id: str) -> NotFound:
    return NotFound(f"Ticket {ticket_id} not found in organization {org_id}")


def _version_is(version: int | None) -> tuple[Expect, ...]:
    """The If-Match condition: the stored version must be the one the client last saw."""
    if version is None:
        return ()
    return (
        Expect("version", version, PreconditionFailed(f"The resource changed; its version is no longer {version}")),
    )


def _check_version(item: dict, version: int | None) -> None:
    """The same check, for the cascade deletes, before their first write."""
    for expect in _version_is(version):
        if item["version"] != expect.value:
            raise expect.error


# Organizations


def create_org(body: OrgCreate) -> Org:
    item = _new_item(keys.org_keys(body.org_id), ORG, body.model_dump())
    _table().put_new(item, exists=AlreadyExists(f"Organization {body.org_id} already exists"))
    metrics.add_metric(name="OrganizationCreated", unit=MetricUnit.Count, value=1)
    return Org.model_validate(item)


def list_orgs(limit: int, cursor_token: str | None) -> OrgPage:
    items, last = _table().query(
        keys.ORGS_LISTING, on_index=True, limit=limit, start_key=_page(_orgs_scope(), cursor_token)
    )
    return OrgPage(items=[Org.model_validate(item) for item in items], next_cursor=_next(_orgs_scope(), last))


def get_org(org_id: str) -> Org:
    item = _table().get(keys.org_key(org_id))
    if item is None:
        raise _org_missing(org_id)
    return Org.model_validate(item)


def get_org_with_users(org_id: str, limit: int) -> OrgWithUsers:
    # The org item sorts first in its partition (METADATA# < USER#): one extra item buys it.
    items, last = _table().query(keys.org_partition(org_id), limit=limit + 1)
    if not items or items[0]["entity"] != ORG:
        raise _org_missing(org_id)
    return OrgWithUsers(
        org=Org.model_validate(items[0]),
        users=[User.model_validate(item) for item in items[1:] if item["entity"] == USER],  # not sweep markers
        next_cursor=_next(_users_scope(org_id), last),
    )


def update_org(org_id: str, body: OrgUpdate, caller: Caller, version: int | None = None) -> Org:
    changes = body.changes()
    authorize_fields(caller, set(changes))
    item = _table().update(keys.org_key(org_id), changes, _now(), _org_missing(org_id), _version_is(version))
    return Org.model_validate(item)


def delete_org(org_id: str, version: int | None = None, time_left: Callable[[], float] = lambda: math.inf) -> bool:
    """Delete an org with all its users and tickets; True when done, False when ``time_left`` (in
    seconds) ran short and the caller must continue later. Every step can be run again.

    1. Mark the org ``deleting_since``: no user can be added from then on.
    2. Per user: leave a sweep marker, delete their sign-in and their item (no ticket can be added
       from then on), then the tickets GSI1 shows.
    3. Per marker, once GSI1 has had ``gsi1_settle_seconds`` (GSI1 is updated asynchronously) to show
       every ticket written before the user went: delete the tickets it shows now, then the marker.
    4. Delete the org's idempotency records, then the org.
    """
    table = _table()
    table.mark(keys.org_key(org_id), DELETING, _now(), _org_missing(org_id), _version_is(version))
    for users in table.query_all(keys.org_partition(org_id), prefix=keys.USER_PREFIX):
        for user in users:
            if time_left() < DELETE_STEP_SECONDS:
                return False
            sweep = {**keys.sweep_key(org_id, user["user_id"]), "entity": SWEEP, "user_id": user["user_id"]}
            table.put({**sweep, "sweep_after": math.ceil(time.time() + config.settings().gsi1_settle_seconds)})
            _remove_sign_in(org_id, user["user_id"])
            table.delete_all([user])
            if not _delete_tickets_of(table, org_id, user["user_id"], time_left):
                return False  # the user's sweep marker brings the rest of their tickets back
    for sweeps in table.query_all(keys.org_partition(org_id), prefix=keys.SWEEP_PREFIX):
        for sweep in sweeps:
            wait = float(sweep["sweep_after"]) - time.time()  # 0 where GSI1 is synchronous (moto, Local)
            if time_left() < DELETE_STEP_SECONDS + max(wait, 0):
                return False
            time.sleep(max(wait, 0))
            if not _delete_tickets_of(table, org_id, sweep["user_id"], time_left):
                return False
            table.delete_all([sweep])
    for records in table.query_all(keys.idempotency_partition(org_id)):
        table.delete_all(records)
    table.delete_all([keys.org_key(org_id)])
    return True


# Users


def create_user(org_id: str, body: UserCreate) -> User:
    item = _new_item(keys.user_keys(org_id, body.user_id), USER, {"org_id": org_id, **body.model_dump()})
    table = _table()
    table.put_child(
        keys.org_key(org_id),
        item,
        parent_missing=_org_missing(org_id),
        exists=AlreadyExists(f"User {body.user_id} already exists in organization {org_id}"),
        parent_unmarked=DELETING,
    )
    # The table decides 404/409 first; only then the sign-in. If that fails, the user goes too.
    if directory := config.directory():
        try:
            directory.create(org_id, body.user_id, body.email, body.role)
        except Exception:
            table.delete(keys.user_key(org_id, body.user_id), _user_missing(org_id, body.user_id))
            raise
    metrics.add_metric(name="UserCreated", unit=MetricUnit.Count, value=1)
    return User.model_validate(item)


def list_users(org_id: str, limit: int, cursor_token: str | None) -> UserPage:
    scope = _users_scope(org_id)
    items, last = _table().query(
        keys.org_partition(org_id), prefix=keys.USER_PREFIX, limit=limit, start_key=_page(scope, cursor_token)
    )
    return UserPage(items=[User.model_validate(item) for item in items], next_cursor=_next(scope, last))


def get_user(org_id: str, user_id: str) -> User:
    item = _table().get(keys.user_key(org_id, user_id))
    if item is None:
        raise _user_missing(org_id, user_id)
    return User.model_validate(item)


def get_user_with_tickets(org_id: str, user_id: str, limit: int) -> UserWithTickets:
    # On GSI1 the user item sorts after its tickets (USER# > TICKET#), so newest-first puts it first.
    items, last = _table().query(
        keys.user_collection(org_id, user_id), on_index=True, newest_first=True, limit=limit + 1
    )
    if not items or items[0]["entity"] != USER:
        raise _user_missing(org_id, user_id)
    return UserWithTickets(
        user=User.model_validate(items[0]),
        tickets=[Ticket.model_validate(item) for item in items[1:]],
        next_cursor=_next(_tickets_scope(org_id, user_id), last),
    )


def update_user(org_id: str, user_id: str, body: UserUpdate, caller: Caller, version: int | None = None) -> User:
    changes = body.changes()
    authorize_fields(caller, set(changes))
    missing = _user_missing(org_id, user_id)
    synced = {SYNCED[field]: value for field, value in changes.items() if field in SYNCED}
    directory = config.directory() if synced else None
    if directory is None:
        item = _table().update(keys.user_key(org_id, user_id), changes, _now(), missing, _version_is(version))
        return User.model_validate(item)
    # The role a token carries is the one that authorizes: change the sign-in first, and put it
    # back if the table refuses the change (missing user, stale If-Match, throttling).
    stored = directory.attributes(org_id, user_id)
    directory.set_attributes(org_id, user_id, synced)
    try:
        item = _table().update(keys.user_key(org_id, user_id), changes, _now(), missing, _version_is(version))
    except Exception:
        directory.set_attributes(org_id, user_id, {name: stored[name] for name in synced if name in stored})
        raise
    return User.model_validate(item)


def delete_user(org_id: str, user_id: str, version: int | None = None) -> None:
    table = _table()
    if version is not None:  # a stale If-Match must fail before the first ticket goes
        user = table.get(keys.user_key(org_id, user_id))
        if user is None:
            raise _user_missing(org_id, user_id)
        _check_version(user, version)
    _remove_sign_in(org_id, user_id)
    _delete_tickets_of(table, org_id, user_id)
    table.delete(keys.user_key(org_id, user_id), _user_missing(org_id, user_id), _version_is(version))


def _remove_sign_in(org_id: str, user_id: str) -> None:
    """First, so no one can sign in as a user being deleted. The table's item goes last, so a
    delete that fails half-way is answered with an error and completes when retried."""
    if directory := config.directory():
        directory.delete(org_id, user_id)


def _delete_tickets_of(
    table: Table, org_id: str, user_id: str, time_left: Callable[[], float] = lambda: math.inf
) -> bool:
    """Delete the tickets GSI1 shows for a user, a page (1,000) at a time; False if time ran short."""
    for tickets in table.query_all(keys.user_collection(org_id, user_id), on_index=True, prefix=keys.TICKET_PREFIX):
        if time_left() < DELETE_STEP_SECONDS:
            return False
        table.delete_all(tickets)
    return True


# Tickets


def ticket_item(org_id: str, user_id: str, body: TicketCreate) -> dict:
    """The stored item of a new ticket (also what the benchmarks bulk-load)."""
    ticket_id = new_ulid()
    attributes = {"org_id": org_id, "ticket_id": ticket_id, "user_id": user_id, **body.model_dump()}
    return _new_item(keys.ticket_keys(org_id, user_id, ticket_id), TICKET, attributes)


def create_ticket(org_id: str, user_id: str, body: TicketCreate) -> Ticket:
    item = ticket_item(org_id, user_id, body)
    ticket_id = item["ticket_id"]
    _table().put_child(
        keys.user_key(org_id, user_id),
        item,
        parent_missing=_user_missing(org_id, user_id),
        exists=AlreadyExists(f"Ticket {ticket_id} already exists"),
    )
    metrics.add_metric(name="TicketCreated", unit=MetricUnit.Count, value=1)
    return Ticket.model_validate(item)


def list_tickets(org_id: str, user_id: str, limit: int, cursor_token: str | None) -> TicketPage:
    scope = _tickets_scope(org_id, user_id)
    items, last = _table().query(
        keys.user_collection(org_id, user_id),
        on_index=True,
        prefix=keys.TICKET_PREFIX,
        newest_first=True,
        limit=limit,
        start_key=_page(scope, cursor_token),
    )
    return TicketPage(items=[Ticket.model_validate(item) for item in items], next_cursor=_next(scope, last))


def _not_yours(ticket_id: str) -> Forbidden:
    return Forbidden(f"Ticket {ticket_id} belongs to another user")


def _ticket_expects(caller: Caller, ticket_id: str, version: int | None) -> tuple[Expect, ...]:
    """Members may only touch their own tickets; the write's own condition checks it (403 first)."""
    owner = caller.owner_filter()
    mine = (Expect("user_id", owner, _not_yours(ticket_id)),) if owner else ()
    return mine + _version_is(version)


def get_ticket(org_id: str, ticket_id: str, caller: Caller) -> Ticket:
    item = _table().get(keys.ticket_key(org_id, ticket_id))
    if item is None:
        raise _ticket_missing(org_id, ticket_id)
    if caller.owner_filter() not in (None, item["user_id"]):
        raise _not_yours(ticket_id)
    return Ticket.model_validate(item)


def update_ticket(
    org_id: str, ticket_id: str, body: TicketUpdate, caller: Caller, version: int | None = None
) -> Ticket:
    item = _table().update(
        keys.ticket_key(org_id, ticket_id),
        body.changes(),
        _now(),
        _ticket_missing(org_id, ticket_id),
        _ticket_expects(caller, ticket_id, version),
    )
    return Ticket.model_validate(item)


def delete_ticket(org_id: str, ticket_id: str, caller: Caller, version: int | None = None) -> None:
    _table().delete(
        keys.ticket_key(org_id, ticket_id),
        _ticket_missing(org_id, ticket_id),
        _ticket_expects(caller, ticket_id, version),
    )
