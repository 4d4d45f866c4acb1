"""Users: the people of an organization."""

from typing import Annotated, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.logging import correlation_paths

from controlplane import users
from controlplane.api import (
    DEFAULT_LIMIT,
    Cursor,
    IdempotencyKey,
    IfMatch,
    Limit,
    OrgIdPath,
    UserIdPath,
    create_app,
    create_once,
    current_caller,
    expected_version,
    no_content,
    responses,
    with_etag,
)
from controlplane.models import User, UserCreate, UserPage, UserUpdate, UserWithTickets
from controlplane.observability import logger, metrics, tracer

app = create_app()


@app.post("/orgs/<org_id>/users", summary="Create a user", tags=["users"], responses=responses({201: User}))
def create_user(org_id: OrgIdPath, body: UserCreate, idempotency_key: IdempotencyKey = None) -> Response[User]:
    return create_once(
        app,
        idempotency_key,
        body,
        lambda: users.create_user(org_id, body, current_caller(app)),
        lambda user: f"/orgs/{org_id}/users/{user.user_id}",
    )


@app.get(
    "/orgs/<org_id>/users",
    summary="List the users of an organization",
    tags=["users"],
    responses=responses({200: UserPage}),
)
def list_users(org_id: OrgIdPath, limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> UserPage:
    return users.list_users(org_id, limit, cursor)


@app.get(
    "/orgs/<org_id>/users/<user_id>",
    summary="Get a user, optionally with their newest tickets",
    tags=["users"],
    responses=responses({200: User | UserWithTickets}),
)
def get_user(
    org_id: OrgIdPath,
    user_id: UserIdPath,
    include: Annotated[Literal["tickets"] | None, Query()] = None,
    limit: Limit = DEFAULT_LIMIT,
) -> Response[User | UserWithTickets]:
    if include == "tickets":
        return with_etag(users.get_user_with_tickets(org_id, user_id, limit))
    return with_etag(users.get_user(org_id, user_id))


@app.patch("/orgs/<org_id>/users/<user_id>", summary="Update a user", tags=["users"], responses=responses({200: User}))
def update_user(org_id: OrgIdPath, user_id: UserIdPath, body: UserUpdate, if_match: IfMatch = None) -> Response[User]:
    return with_etag(users.update_user(org_id, user_id, body, current_caller(app), expected_version(if_match)))


@app.delete(
    "/orgs/<org_id>/users/<user_id>",
    summary="Delete a user and all their tickets",
    tags=["users"],
    responses=responses({204: None}),
)
def delete_user(org_id: OrgIdPath, user_id: UserIdPath, if_match: IfMatch = None) -> Response[None]:
    users.delete_user(org_id, user_id, expected_version(if_match))
    return no_content()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict, context) -> dict:
    return app.resolve(event, context)
