"""Users: the people of an organization, kept in step with their Cognito sign-in."""

from aws_lambda_powertools.metrics import MetricUnit

from controlplane import cascade, config, items, keys
from controlplane.auth import Caller, authorize_fields
from controlplane.directory import SYNCED
from controlplane.errors import AlreadyExists
from controlplane.models import Ticket, User, UserCreate, UserPage, UserUpdate, UserWithTickets
from controlplane.observability import metrics


def create_user(org_id: str, body: UserCreate, caller: Caller) -> User:
    attributes = {"org_id": org_id, **body.model_dump()}
    item = items.new_item(keys.user_keys(org_id, body.user_id), items.USER, attributes, caller.subject)
    table = items.table()
    table.put_child(
        keys.org_key(org_id),
        item,
        parent_missing=items.org_missing(org_id),
        exists=AlreadyExists(f"User {body.user_id} already exists in organization {org_id}"),
        parent_unmarked=items.DELETING,
    )
    # The table decides 404/409 first; only then the sign-in. If that fails, the user goes too.
    if directory := config.directory():
        try:
            directory.create(org_id, body.user_id, body.email, body.role)
        except Exception:
            table.delete(keys.user_key(org_id, body.user_id), items.user_missing(org_id, body.user_id))
            raise
    metrics.add_metric(name="UserCreated", unit=MetricUnit.Count, value=1)
    return User.model_validate(item)


def list_users(org_id: str, limit: int, cursor_token: str | None) -> UserPage:
    scope = keys.users_scope(org_id)
    found, last = items.table().query(
        keys.org_partition(org_id), prefix=keys.USER_PREFIX, limit=limit, start_key=items.page(scope, cursor_token)
    )
    return UserPage(items=[User.model_validate(item) for item in found], next_cursor=items.next_cursor(scope, last))


def get_user(org_id: str, user_id: str) -> User:
    item = items.table().get(keys.user_key(org_id, user_id))
    if item is None:
        raise items.user_missing(org_id, user_id)
    return User.model_validate(item)


def get_user_with_tickets(org_id: str, user_id: str, limit: int) -> UserWithTickets:
    # On GSI1 the user item sorts after its tickets (USER# > TICKET#), so newest-first puts it first.
    found, last = items.table().query(
        keys.user_collection(org_id, user_id), on_index=True, newest_first=True, limit=limit + 1
    )
    if not found or found[0]["entity"] != items.USER:
        raise items.user_missing(org_id, user_id)
    return UserWithTickets(
        user=User.model_validate(found[0]),
        tickets=[Ticket.model_validate(item) for item in found[1:]],
        next_cursor=items.next_cursor(keys.tickets_scope(org_id, user_id), last),
    )


def update_user(org_id: str, user_id: str, body: UserUpdate, caller: Caller, version: int | None = None) -> User:
    changes = body.changes()
    authorize_fields(caller, set(changes))
    missing = items.user_missing(org_id, user_id)
    written = items.written_by(changes, caller.subject)
    synced = {SYNCED[field]: value for field, value in changes.items() if field in SYNCED}
    directory = config.directory() if synced else None
    if directory is None:
        item = items.table().update(
            keys.user_key(org_id, user_id), written, items.now(), missing, items.version_is(version)
        )
        return User.model_validate(item)
    # The role a token carries is the one that authorizes: change the sign-in first, and put it
    # back if the table refuses the change (missing user, stale If-Match, throttling).
    stored = directory.attributes(org_id, user_id)
    directory.set_attributes(org_id, user_id, synced)
    try:
        item = items.table().update(
            keys.user_key(org_id, user_id), written, items.now(), missing, items.version_is(version)
        )
    except Exception:
        directory.set_attributes(org_id, user_id, {name: stored[name] for name in synced if name in stored})
        raise
    return User.model_validate(item)


def delete_user(org_id: str, user_id: str, version: int | None = None) -> None:
    table = items.table()
    if version is not None:  # a stale If-Match must fail before the first ticket goes
        user = table.get(keys.user_key(org_id, user_id))
        if user is None:
            raise items.user_missing(org_id, user_id)
        items.check_version(user, version)
    cascade.remove_sign_in(org_id, user_id)
    cascade.delete_tickets_of(table, org_id, user_id)
    table.delete(keys.user_key(org_id, user_id), items.user_missing(org_id, user_id), items.version_is(version))
