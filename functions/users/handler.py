"""Users: the people of an organization."""

from aws_lambda_powertools.event_handler import Response

from controlplane.http.api import (
    DEFAULT_LIMIT,
    Cursor,
    IdempotencyKey,
    IfMatch,
    IncludeTickets,
    Limit,
    OrgIdPath,
    UserIdPath,
    create_app,
    create_once,
    current_caller,
    entry_point,
    expected_version,
    no_content,
    operation,
    with_etag,
)
from controlplane.logic import users
from controlplane.models.resources import User, UserCreate, UserPage, UserUpdate, UserWithTickets

app = create_app()


@operation(app, "createUser")
def create_user(org_id: OrgIdPath, body: UserCreate, idempotency_key: IdempotencyKey = None) -> Response[User]:
    return create_once(app, idempotency_key, body, lambda: users.create_user(org_id, body, current_caller(app)))


@operation(app, "listUsers")
def list_users(org_id: OrgIdPath, limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> UserPage:
    return users.list_users(org_id, limit, cursor)


@operation(app, "getUser")
def get_user(
    org_id: OrgIdPath,
    user_id: UserIdPath,
    include: IncludeTickets = None,
    limit: Limit = DEFAULT_LIMIT,
) -> Response[User | UserWithTickets]:
    if include == "tickets":
        return with_etag(users.get_user_with_tickets(org_id, user_id, limit))
    return with_etag(users.get_user(org_id, user_id))


@operation(app, "updateUser")
def update_user(org_id: OrgIdPath, user_id: UserIdPath, body: UserUpdate, if_match: IfMatch = None) -> Response[User]:
    return with_etag(users.update_user(org_id, user_id, body, current_caller(app), expected_version(if_match)))


@operation(app, "deleteUser")
def delete_user(org_id: OrgIdPath, user_id: UserIdPath, if_match: IfMatch = None) -> Response[None]:
    users.delete_user(org_id, user_id, expected_version(if_match))
    return no_content()


lambda_handler = entry_point(app)
