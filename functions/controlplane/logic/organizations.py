"""Organizations: build items from validated input, call the data layer, map back to models."""

from collections.abc import Callable

from aws_lambda_powertools.metrics import MetricUnit

from controlplane.dal import cursor, keys, seats, stamps
from controlplane.dal.conditions import Expect, Item, refused, version_is
from controlplane.dal.table import api_table, update_request
from controlplane.http.auth import Caller, authorize_fields
from controlplane.models import errors, plans
from controlplane.models.errors import AlreadyExists, ApiError, QuotaExceeded
from controlplane.models.resources import (
    ACTIVE,
    SUSPENDED,
    Limits,
    Org,
    OrgCreate,
    OrgPage,
    OrgSummary,
    OrgUpdate,
    OrgWithUsers,
    PlanList,
    PlanOffer,
    RequestLimits,
    User,
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
    item = stamps.new_item(
        keys.org_keys(body.org_id), keys.ORG, {**body.model_dump(), "status": ACTIVE}, caller.subject
    )
    limit = plans.limit(body.plan)
    seats.create_org(api_table(), item, limit, exists=AlreadyExists(f"Organization {body.org_id} already exists"))
    metrics.add_metric(name="OrganizationCreated", unit=MetricUnit.Count, value=1)
    return Org.from_item(item, seats.counter(body.org_id, 0, limit))


def list_orgs(limit: int, cursor_token: str | None) -> OrgPage:
    scope = keys.orgs_scope()
    after = cursor.resume_after(scope, cursor_token)
    start = keys.org_keys(after) if after else None
    found, last = api_table().query(keys.ORGS_LISTING, on_index=True, limit=limit, start_key=start)
    orgs = [OrgSummary.from_item(item) for item in found]
    return OrgPage(items=orgs, next_cursor=cursor.next_cursor(scope, found, "org_id", last is not None))


def get_org(org_id: str, caller: Caller) -> Org:
    item, counter = seats.read(api_table(), org_id)
    if item is None:
        raise errors.org_missing(org_id)
    return Org.from_item(item, counter).seen_by(caller.operator)


def get_org_with_users(org_id: str, limit: int, caller: Caller) -> OrgWithUsers:
    org, counter, users, more = first_users(org_id, limit)
    return OrgWithUsers(
        org=Org.from_item(org, counter).seen_by(caller.operator),
        users=[User.model_validate(item) for item in users],
        next_cursor=cursor.next_cursor(keys.users_scope(org_id), users, "user_id", more),
    )


def first_users(org_id: str, limit: int) -> tuple[Item, Item | None, list[Item], bool]:
    """The org, its seat counter and its first users, in one request: METADATA#<org> and its #SEATS
    sort before USER# in the partition (and after the org's ACTIVITY#, outside the range). Sweep
    markers of an org being deleted (SWEEP#) sort between them and are left out."""
    partition, missing = keys.org_partition(org_id), errors.org_missing(org_id)
    # One more than the users asked for: the counter (absent on an org not migrated yet).
    org, rest, more = api_table().parent_first(
        partition, keys.ORG, missing, limit + 1, between=keys.users_range(org_id)
    )
    counter = next((item for item in rest if item["entity"] == keys.SEATS), None)
    users = [item for item in rest if item["entity"] == keys.USER]
    return org, counter, users[:limit], more or len(users) > limit


def update_org(org_id: str, body: OrgUpdate, caller: Caller, version: int | None = None) -> Org:
    changes = body.changes()
    authorize_fields(caller, set(changes))
    expects = version_is(version)
    table = api_table()
    counted = "plan" in changes and seats.move(table, org_id)
    if "plan" in changes and not counted:
        # An org not counted yet (or gone) takes the limit on its item; the user-count migration
        # counts its users against it.
        limit = plans.limit(changes["plan"])
        changes[plans.USER_LIMIT] = limit
        expects += (Expect(plans.USER_COUNT, limit, _downgrade_refused(changes["plan"], limit), at_most=True),)
    stamp = stamps.now()
    kept: frozenset[str] = frozenset()
    removed: tuple[str, ...] = ()
    if changes.get("status") == SUSPENDED:
        # Suspended again (a new reason): still suspended since the first time.
        changes[SUSPENDED_AT] = stamp
        kept = frozenset({SUSPENDED_AT})
    elif changes.get("status") == ACTIVE:
        removed = (SUSPENDED_AT, SUSPENSION_REASON)
    written = stamps.written_by(changes, caller.subject)
    if counted:
        # The new plan's limit goes on the counter, on condition that the org's users fit in it,
        # in the same transaction as the plan on the org item.
        limit = plans.limit(changes["plan"])
        update = update_request(keys.org_key(org_id), written, stamp, expects, kept=kept, removed=removed)
        missing = errors.org_missing(org_id)
        full = _downgrade_refused(changes["plan"], limit)
        seats.resize(table, org_id, update, lambda org: refused(missing, expects, org), limit, full, lambda: missing)
        item, counter = seats.read(table, org_id, consistent=True)
        if item is None:  # deleted right after the change
            raise missing
    else:
        item, counter = (
            table.update(
                keys.org_key(org_id), written, stamp, errors.org_missing(org_id), expects, kept=kept, removed=removed
            ),
            None,
        )
    if "status" in changes:
        from controlplane.logic import signins  # the rare path: the users function never loads it

        signins.start(org_id, enabled=changes["status"] == ACTIVE)
    if counter is None and plans.USER_COUNT not in item:  # a change that did not read the counter
        counter = seats.read(table, org_id)[1]
    return Org.from_item(item, counter).seen_by(caller.operator)


def _downgrade_refused(plan: str, limit: int) -> Callable[[Item], ApiError]:
    return lambda org: QuotaExceeded("users", limit, int(org[plans.USER_COUNT]), plan)
