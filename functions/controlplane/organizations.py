"""Organizations: build items from validated input, call the data layer, map back to models."""

from aws_lambda_powertools.metrics import MetricUnit

from controlplane import items, keys, plans
from controlplane.auth import Caller, authorize_fields
from controlplane.errors import AlreadyExists, QuotaExceeded
from controlplane.models import Limits, Org, OrgCreate, OrgPage, OrgUpdate, OrgWithUsers, PlanList, PlanOffer, User
from controlplane.observability import metrics
from controlplane.table import Expect


def list_plans() -> PlanList:
    """The catalogue itself: no request to DynamoDB."""
    return PlanList(items=[PlanOffer(plan=plan, limits=Limits(**limits)) for plan, limits in plans.CATALOGUE.items()])


def create_org(body: OrgCreate) -> Org:
    seats = {plans.USER_COUNT: 0, plans.USER_LIMIT: plans.limit(body.plan)}
    item = items.new_item(keys.org_keys(body.org_id), items.ORG, {**body.model_dump(), **seats})
    items.table().put_new(item, exists=AlreadyExists(f"Organization {body.org_id} already exists"))
    metrics.add_metric(name="OrganizationCreated", unit=MetricUnit.Count, value=1)
    return Org.from_item(item)


def list_orgs(limit: int, cursor_token: str | None) -> OrgPage:
    found, last = items.table().query(
        keys.ORGS_LISTING, on_index=True, limit=limit, start_key=items.page(keys.orgs_scope(), cursor_token)
    )
    return OrgPage(
        items=[Org.from_item(item) for item in found], next_cursor=items.next_cursor(keys.orgs_scope(), last)
    )


def get_org(org_id: str) -> Org:
    item = items.table().get(keys.org_key(org_id))
    if item is None:
        raise items.org_missing(org_id)
    return Org.from_item(item)


def get_org_with_users(org_id: str, limit: int) -> OrgWithUsers:
    # The org item sorts first in its partition (METADATA# < USER#): one extra item buys it.
    found, last = items.table().query(keys.org_partition(org_id), limit=limit + 1)
    if not found or found[0]["entity"] != items.ORG:
        raise items.org_missing(org_id)
    return OrgWithUsers(
        org=Org.from_item(found[0]),
        users=[User.model_validate(item) for item in found[1:] if item["entity"] == items.USER],  # not sweep markers
        next_cursor=items.next_cursor(keys.users_scope(org_id), last),
    )


def update_org(org_id: str, body: OrgUpdate, caller: Caller, version: int | None = None) -> Org:
    changes = body.changes()
    authorize_fields(caller, set(changes))
    expects = items.version_is(version)
    if "plan" in changes:
        # The new plan's limit goes on the item, on condition that the org's users fit in it. An org
        # not counted yet takes the limit too; the migration counts its users against it.
        limit = plans.limit(changes["plan"])
        changes[plans.USER_LIMIT] = limit
        expects += (Expect(plans.USER_COUNT, limit, _downgrade_refused(changes["plan"], limit), at_most=True),)
    item = items.table().update(keys.org_key(org_id), changes, items.now(), items.org_missing(org_id), expects)
    return Org.from_item(item)


def _downgrade_refused(plan: str, limit: int):
    return lambda org: QuotaExceeded("users", limit, int(org[plans.USER_COUNT]), plan)
