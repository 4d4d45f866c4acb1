"""Organizations: build items from validated input, call the data layer, map back to models."""

from collections.abc import Callable

from aws_lambda_powertools.metrics import MetricUnit

from controlplane.dal import cursor, keys, stamps
from controlplane.dal.conditions import Expect, Item
from controlplane.dal.table import api_table
from controlplane.logic import refusals
from controlplane.logic.access import Caller, authorize_fields
from controlplane.models import errors, plans
from controlplane.models.errors import ApiError, QuotaExceeded
from controlplane.models.resources import (
    ACTIVE,
    SUSPENDED,
    Limits,
    Org,
    OrgCreate,
    OrgPage,
    OrgUpdate,
    OrgWithUsers,
    PlanList,
    PlanOffer,
    RequestLimits,
)
from controlplane.observability import metrics

SUSPENDED_AT, SUSPENSION_REASON = "suspended_at", "suspension_reason"


def list_plans() -> PlanList:
    """The catalogue itself: no request to DynamoDB."""
    return PlanList(
        items=[
            PlanOffer(
                plan=plan,
                limits=Limits(**limits),
                requests=RequestLimits(**plans.request_limits(plan)._asdict()),
            )
            for plan, limits in plans.CATALOGUE.items()
        ]
    )


def create_org(body: OrgCreate, caller: Caller) -> Org:
    seats = {plans.USER_COUNT: 0, plans.USER_LIMIT: plans.limit(body.plan)}
    attributes = {**body.model_dump(), "status": ACTIVE, **seats}
    item = stamps.new_item(keys.org_keys(body.org_id), keys.ORG, attributes, caller.subject)
    with refusals.refused_as(errors.org_exists(body.org_id)):
        api_table().put_new(item)
    metrics.add_metric(name="OrganizationCreated", unit=MetricUnit.Count, value=1)
    return Org.from_item(item)


def list_orgs(limit: int, cursor_token: str | None) -> OrgPage:
    scope = keys.orgs_scope()
    after = cursor.resume_after(scope, cursor_token)
    start = keys.org_keys(after) if after else None
    found, last = api_table().query(keys.ORGS_LISTING, on_index=True, limit=limit, start_key=start)
    orgs = [Org.from_item(item) for item in found]
    return OrgPage(items=orgs, next_cursor=cursor.next_cursor(scope, found, "org_id", last is not None))


def get_org(org_id: str, caller: Caller) -> Org:
    item = api_table().get(keys.org_key(org_id))
    if item is None:
        raise errors.org_missing(org_id)
    return Org.from_item(item).seen_by(caller.operator)


def get_org_with_users(org_id: str, limit: int, caller: Caller) -> OrgWithUsers:
    org, users, more = first_users(org_id, limit)
    next_cursor = cursor.next_cursor(keys.users_scope(org_id), users, "user_id", more)
    shown = Org.from_item(org).seen_by(caller.operator)
    return OrgWithUsers.model_validate({"org": shown, "users": users, "next_cursor": next_cursor})


def first_users(org_id: str, limit: int) -> tuple[Item, list[Item], bool]:
    """The org and its first users, in one request: METADATA# sorts before USER# in the partition
    (and after the org's ACTIVITY#, outside the range). Sweep markers of an org being deleted
    (SWEEP#) sort between them and are left out."""
    found = api_table().parent_first(keys.org_partition(org_id), keys.ORG, limit, between=keys.users_range(org_id))
    if found is None:
        raise errors.org_missing(org_id)
    org, rest, more = found
    return org, [item for item in rest if item["entity"] == keys.USER], more


def update_org(org_id: str, body: OrgUpdate, caller: Caller, version: int | None = None) -> Org:
    changes = body.changes()
    authorize_fields(caller, set(changes))
    rules = refusals.if_match(version)
    if "plan" in changes:
        # The new plan's limit goes on the item, on condition that the org's users fit in it. An org
        # not counted yet takes the limit too; the migration counts its users against it.
        limit = plans.limit(changes["plan"])
        changes[plans.USER_LIMIT] = limit
        rules += ((Expect(plans.USER_COUNT, limit, at_most=True), _downgrade_refused(changes["plan"], limit)),)
    stamp = stamps.now()
    kept: frozenset[str] = frozenset()
    removed: tuple[str, ...] = ()
    if changes.get("status") == SUSPENDED:
        # Suspended again (a new reason): still suspended since the first time.
        changes[SUSPENDED_AT] = stamp
        kept = frozenset({SUSPENDED_AT})
    elif changes.get("status") == ACTIVE:
        removed = (SUSPENDED_AT, SUSPENSION_REASON)
    with refusals.refused_as(errors.org_missing(org_id), rules):
        item = api_table().update(
            keys.org_key(org_id),
            stamps.written_by(changes, caller.subject),
            stamp,
            refusals.expects(rules),
            kept=kept,
            removed=removed,
        )
    if "status" in changes:
        from controlplane.logic import signins  # the rare path: the users function never loads it

        signins.start(org_id, enabled=changes["status"] == ACTIVE)
    return Org.from_item(item).seen_by(caller.operator)


def _downgrade_refused(plan: str, limit: int) -> Callable[[Item], ApiError]:
    return lambda org: QuotaExceeded("users", limit, int(org[plans.USER_COUNT]), plan)
