"""Organizations: the tenants of the control plane."""

from typing import Annotated, Literal

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.logging import correlation_paths

from controlplane import jobs, organizations
from controlplane.api import (
    DEFAULT_LIMIT,
    Cursor,
    IdempotencyKey,
    IfMatch,
    Limit,
    OrgIdPath,
    create_app,
    create_once,
    current_caller,
    expected_version,
    no_content,
    responses,
    with_etag,
)
from controlplane.models import DeletionAccepted, Org, OrgCreate, OrgPage, OrgUpdate, OrgWithUsers
from controlplane.observability import logger, metrics, tracer

app = create_app()


@app.post("/orgs", summary="Create an organization", tags=["organizations"], responses=responses({201: Org}))
def create_org(body: OrgCreate, idempotency_key: IdempotencyKey = None) -> Response[Org]:
    return create_once(
        app,
        idempotency_key,
        body,
        lambda: organizations.create_org(body, current_caller(app)),
        lambda org: f"/orgs/{org.org_id}",
    )


@app.get("/orgs", summary="List organizations", tags=["organizations"], responses=responses({200: OrgPage}))
def list_orgs(limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> OrgPage:
    return organizations.list_orgs(limit, cursor)


@app.get(
    "/orgs/<org_id>",
    summary="Get an organization, optionally with its first users",
    tags=["organizations"],
    responses=responses({200: Org | OrgWithUsers}),
)
def get_org(
    org_id: OrgIdPath,
    include: Annotated[Literal["users"] | None, Query()] = None,
    limit: Limit = DEFAULT_LIMIT,
) -> Response[Org | OrgWithUsers]:
    if include == "users":
        return with_etag(organizations.get_org_with_users(org_id, limit))
    return with_etag(organizations.get_org(org_id))


@app.patch("/orgs/<org_id>", summary="Update an organization", tags=["organizations"], responses=responses({200: Org}))
def update_org(org_id: OrgIdPath, body: OrgUpdate, if_match: IfMatch = None) -> Response[Org]:
    return with_etag(organizations.update_org(org_id, body, current_caller(app), expected_version(if_match)))


@app.delete(
    "/orgs/<org_id>",
    summary="Delete an organization with all its users and tickets",
    tags=["organizations"],
    responses=responses({204: None, 202: DeletionAccepted}),
)
def delete_org(org_id: OrgIdPath, if_match: IfMatch = None) -> Response[DeletionAccepted | None]:
    if jobs.delete_org(org_id, expected_version(if_match), app.lambda_context, current_caller(app)):
        return no_content()
    return Response(202, content_types.APPLICATION_JSON, DeletionAccepted(org_id=org_id))


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict, context) -> dict:
    if "Records" in event:  # the deletions queue
        return jobs.handle_queue(event, context)
    return app.resolve(event, context)
