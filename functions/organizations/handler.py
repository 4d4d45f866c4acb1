"""Organizations: the tenants of the control plane."""

from aws_lambda_powertools.event_handler import Response

from controlplane.http import params, responses
from controlplane.http.resolver import Resolver
from controlplane.logic import activity, deletions, imports, moves, organizations, stopped_moves, tree_reads, units
from controlplane.models.activity import ActivityPage
from controlplane.models.imports import UserImport, UserImportCreate
from controlplane.models.resources import (
    DeletionAccepted,
    Org,
    OrgCreate,
    OrgPage,
    OrgUpdate,
    OrgWithUsers,
    PlanList,
    UserPage,
)
from controlplane.models.units import ROOT, MoveAccepted, Unit, UnitCreate, UnitPage, UnitUpdate

app = Resolver()


@app.operation("createOrg")
def create_org(body: OrgCreate, idempotency_key: params.IdempotencyKey = None) -> Response[Org]:
    return app.create_once(idempotency_key, body, lambda: organizations.create_org(body, app.caller))


@app.operation("listOrgs")
def list_orgs(limit: params.Limit = params.DEFAULT_LIMIT, cursor: params.Cursor = None) -> OrgPage:
    return organizations.list_orgs(limit, cursor)


@app.operation("getOrg")
def get_org(
    org_id: params.OrgIdPath,
    include: params.IncludeUsers = None,
    limit: params.UsersLimit = params.DEFAULT_LIMIT,
) -> Response[Org | OrgWithUsers]:
    if include == "users":
        return responses.with_etag(organizations.get_org_with_users(org_id, limit, app.caller))
    app.refuse_query("limit")  # the size of a page that only include=users has
    return responses.with_etag(organizations.get_org(org_id, app.caller))


@app.operation("updateOrg")
def update_org(org_id: params.OrgIdPath, body: OrgUpdate, if_match: params.IfMatch = None) -> Response[Org]:
    version = responses.expected_version(if_match)
    return responses.with_etag(organizations.update_org(org_id, body, app.caller, version))


@app.operation("deleteOrg")
def delete_org(org_id: params.OrgIdPath, if_match: params.IfMatch = None) -> Response[DeletionAccepted | None]:
    if deletions.delete_org(org_id, responses.expected_version(if_match), app.lambda_context, app.caller):
        return responses.no_content()
    return responses.accepted(DeletionAccepted(org_id=org_id))


@app.operation("listActivity")
def list_activity(
    org_id: params.OrgIdPath, limit: params.Limit = params.DEFAULT_LIMIT, cursor: params.Cursor = None
) -> ActivityPage:
    return activity.list_activity(org_id, limit, cursor, app.caller)


@app.operation("createUnit")
def create_unit(
    org_id: params.OrgIdPath, body: UnitCreate, idempotency_key: params.IdempotencyKey = None
) -> Response[Unit]:
    return app.create_once(idempotency_key, body, lambda: units.create_unit(org_id, body, app.caller))


@app.operation("listUnits")
def list_units(
    org_id: params.OrgIdPath,
    under: params.Under = ROOT,
    limit: params.Limit = params.DEFAULT_LIMIT,
    cursor: params.Cursor = None,
) -> UnitPage:
    return tree_reads.list_units(org_id, under, limit, cursor)


@app.operation("getUnit")
def get_unit(org_id: params.OrgIdPath, unit_id: params.UnitIdPath) -> Response[Unit]:
    return responses.with_etag(stopped_moves.get_unit(org_id, unit_id, app.time_left))


@app.operation("updateUnit")
def update_unit(
    org_id: params.OrgIdPath, unit_id: params.UnitIdPath, body: UnitUpdate, if_match: params.IfMatch = None
) -> Response[Unit | MoveAccepted]:
    version = responses.expected_version(if_match)
    unit = moves.update_unit(org_id, unit_id, body, app.caller, version)
    if unit is None:
        return responses.accepted(MoveAccepted(org_id=org_id, unit_id=unit_id))
    return responses.with_etag(unit)


@app.operation("deleteUnit")
def delete_unit(
    org_id: params.OrgIdPath, unit_id: params.UnitIdPath, if_match: params.IfMatch = None
) -> Response[None]:
    units.delete_unit(org_id, unit_id, responses.expected_version(if_match))
    return responses.no_content()


@app.operation("listUnitUsers")
def list_unit_users(
    org_id: params.OrgIdPath,
    unit_id: params.UnitIdPath,
    direct: params.Direct = False,
    limit: params.Limit = params.DEFAULT_LIMIT,
    cursor: params.Cursor = None,
) -> UserPage:
    return tree_reads.list_unit_users(org_id, unit_id, direct, limit, cursor)


@app.operation("importUsers")
def import_users(
    org_id: params.OrgIdPath, body: UserImportCreate, idempotency_key: params.IdempotencyKey = None
) -> Response[UserImport]:
    def start() -> UserImport:
        return imports.start_import(org_id, body, app.caller)

    return app.start_once(idempotency_key, body, start, lambda import_id: imports.get_import(org_id, import_id))


@app.operation("getUserImport")
def get_user_import(org_id: params.OrgIdPath, import_id: params.ImportIdPath) -> UserImport:
    return imports.get_import(org_id, import_id)


@app.operation("listPlans")
def list_plans() -> PlanList:
    return organizations.list_plans()


lambda_handler = app.entry_point(on_records=deletions.handle_queue)  # records: the deletions queue
