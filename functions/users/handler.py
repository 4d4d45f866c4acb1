"""Users: the people of an organization."""

from aws_lambda_powertools.event_handler import Response

from controlplane.http import params, responses
from controlplane.http.resolver import Resolver
from controlplane.logic import users
from controlplane.models.resources import User, UserCreate, UserPage, UserUpdate, UserWithTickets

app = Resolver()


@app.operation("createUser")
def create_user(
    org_id: params.OrgIdPath, body: UserCreate, idempotency_key: params.IdempotencyKey = None
) -> Response[User]:
    return app.create_once(idempotency_key, body, lambda: users.create_user(org_id, body, app.caller))


@app.operation("listUsers")
def list_users(
    org_id: params.OrgIdPath, limit: params.Limit = params.DEFAULT_LIMIT, cursor: params.Cursor = None
) -> UserPage:
    return users.list_users(org_id, limit, cursor)


@app.operation("getUser")
def get_user(
    org_id: params.OrgIdPath,
    user_id: params.UserIdPath,
    include: params.IncludeTickets = None,
    limit: params.TicketsLimit = params.DEFAULT_LIMIT,
) -> Response[User | UserWithTickets]:
    if include == "tickets":
        return responses.with_etag(users.get_user_with_tickets(org_id, user_id, limit))
    app.refuse_query("limit")  # the size of a page that only include=tickets has
    return responses.with_etag(users.get_user(org_id, user_id))


@app.operation("updateUser")
def update_user(
    org_id: params.OrgIdPath, user_id: params.UserIdPath, body: UserUpdate, if_match: params.IfMatch = None
) -> Response[User]:
    version = responses.expected_version(if_match)
    return responses.with_etag(users.update_user(org_id, user_id, body, app.caller, version))


@app.operation("deleteUser")
def delete_user(
    org_id: params.OrgIdPath, user_id: params.UserIdPath, if_match: params.IfMatch = None
) -> Response[None]:
    users.delete_user(org_id, user_id, responses.expected_version(if_match))
    return responses.no_content()


lambda_handler = app.entry_point()
