"""Organizations: the tenants of the control plane."""

from aws_lambda_powertools.event_handler import Response, content_types

from controlplane.http.api import (
    DEFAULT_LIMIT,
    Cursor,
    IdempotencyKey,
    IfMatch,
    IncludeUsers,
    Limit,
    OrgIdPath,
    create_app,
    create_once,
    current_caller,
    entry_point,
    expected_version,
    no_content,
    operation,
    with_etag,
)
from controlplane.logic import activity, deletions, organizations
from controlplane.models.resources import (
    ActivityPage,
    DeletionAccepted,
    Org,
    OrgCreate,
    OrgPage,
    OrgUpdate,
    OrgWithUsers,
    PlanList,
)

app = create_app()


@operation(app, "createOrg")
def create_org(body: OrgCreate, idempotency_key: IdempotencyKey = None) -> Response[Org]:
    return create_once(app, idempotency_key, body, lambda: organizations.create_org(body, current_caller(app)))


@operation(app, "listOrgs")
def list_orgs(limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> OrgPage:
    return organizations.list_orgs(limit, cursor)


@operation(app, "getOrg")
def get_org(
    org_id: OrgIdPath,
    include: IncludeUsers = None,
    limit: Limit = DEFAULT_LIMIT,
) -> Response[Org | OrgWithUsers]:
    if include == "users":
        return with_etag(organizations.get_org_with_users(org_id, limit))
    return with_etag(organizations.get_org(org_id))


@operation(app, "updateOrg")
def update_org(org_id: OrgIdPath, body: OrgUpdate, if_match: IfMatch = None) -> Response[Org]:
    return with_etag(organizations.update_org(org_id, body, current_caller(app), expected_version(if_match)))


@operation(app, "deleteOrg")
def delete_org(org_id: OrgIdPath, if_match: IfMatch = None) -> Response[DeletionAccepted | None]:
    if deletions.delete_org(org_id, expected_version(if_match), app.lambda_context, current_caller(app)):
        return no_content()
    return Response(202, content_types.APPLICATION_JSON, DeletionAccepted(org_id=org_id))


@operation(app, "listActivity")
def list_activity(org_id: OrgIdPath, limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> ActivityPage:
    return activity.list_activity(org_id, limit, cursor, current_caller(app))


@operation(app, "listPlans")
def list_plans() -> PlanList:
    return organizations.list_plans()


lambda_handler = entry_point(app, on_records=deletions.handle_queue)  # records: the deletions queue
