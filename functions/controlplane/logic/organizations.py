"""Organizations: build items from validated input, call the data layer, map back to models."""

from collections.abc import Callable

from aws_lambda_powertools.metrics import MetricUnit

from controlplane import config
from controlplane.dal import cursor, keys, sealing, seats, stamps
from controlplane.dal.conditions import ABSENT, ConditionFailed, Expect, Item
from controlplane.dal.outage import is_outage
from controlplane.dal.table import api_table, update_request
from controlplane.logic import cascade, refusals
from controlplane.logic.access import Caller, authorize_fields
from controlplane.models import errors, plans
from controlplane.models.errors import ApiError, QuotaExceeded, ServiceUnavailable
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
)
from controlplane.observability import logger, metrics

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
    org = Org.from_item(item, seats.counter(body.org_id, 0, limit))
    with refusals.refused_as(errors.org_exists(body.org_id)), sealing.making(org):
        seats.create_org(api_table(), item, limit)
    metrics.add_metric(name="OrganizationCreated", unit=MetricUnit.Count, value=1)
    return org


def list_orgs(limit: int, cursor_token: str | None) -> OrgPage:
    scope = keys.orgs_scope()
    after = cursor.resume_after(scope, cursor_token)
    start = keys.org_keys(after) if after else None
    found, last = api_table().query(keys.ORGS_LISTING, on_index=True, limit=limit, start_key=start)
    orgs = [OrgSummary.from_item(item) for item in found]
    return OrgPage(items=orgs, next_cursor=cursor.next_cursor(scope, found, "org_id", last is not None))


def get_org(org_id: str, caller: Caller) -> Org:
    item, counter = seats.read(api_table(), org_id)
    if item is None or (stamps.DELETING in item and _deleted_in_line(org_id, item[stamps.DELETING])):
        raise errors.org_missing(org_id)
    return Org.from_item(item, counter).seen_by(caller.operator)


def _deleted_in_line(org_id: str, mark: str) -> bool:
    """With no queue (make run), a delete an outage stopped (or whose request died) goes on when the
    org is read, as its 202 asks, and the queue's job would have in the cloud: True once it is done.
    Stopped again by an outage, the org is answered as it is, still being deleted."""
    if config.settings().deletions_queue_url:
        return False
    try:
        return cascade.continue_delete(org_id, mark)
    except Exception as stopped:
        if not (isinstance(stopped, ServiceUnavailable) or is_outage(stopped)):
            raise
        logger.warning("Org delete: stopped again; its next read carries on", org_id=org_id, exc_info=stopped)
        return False


def get_org_with_users(org_id: str, limit: int, caller: Caller) -> OrgWithUsers:
    org, counter, users, more = first_users(org_id, limit)
    if stamps.DELETING in org and _deleted_in_line(org_id, org[stamps.DELETING]):
        raise errors.org_missing(org_id)
    next_cursor = cursor.next_cursor(keys.users_scope(org_id), users, "user_id", more)
    shown = Org.from_item(org, counter).seen_by(caller.operator)
    return OrgWithUsers.model_validate({"org": shown, "users": users, "next_cursor": next_cursor})


def first_users(org_id: str, limit: int) -> tuple[Item, Item | None, list[Item], bool]:
    """The org, its seat counter and its first users, in one request: METADATA#<org> and its #SEATS
    sort before USER# in the partition (and after the org's ACTIVITY#, outside the range). Sweep
    markers of an org being deleted (SWEEP#) sort between them and are left out."""
    # One more than the users asked for: the counter (absent on an org not migrated yet).
    partition = keys.org_partition(org_id)
    found = api_table().parent_first(partition, keys.ORG, limit + 1, between=keys.users_range(org_id))
    if found is None:
        raise errors.org_missing(org_id)
    org, rest, more = found
    counter = next((item for item in rest if item["entity"] == keys.SEATS), None)
    users = [item for item in rest if item["entity"] == keys.USER]
    return org, counter, users[:limit], more or len(users) > limit


def update_org(org_id: str, body: OrgUpdate, caller: Caller, version: int | None = None) -> Org:
    changes = body.changes()
    authorize_fields(caller, set(changes))
    # An org whose delete has begun takes no change, as it takes no new user: it is going.
    rules = ((Expect(stamps.DELETING, ABSENT), lambda _: errors.org_missing(org_id)), *refusals.if_match(version))
    table = api_table()
    counted = "plan" in changes and seats.move(table, org_id)
    if "plan" in changes and not counted:
        # An org not counted yet (or gone) takes the limit on its item; the user-count migration
        # counts its users against it.
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
    written, missing = stamps.written_by(changes, caller.subject), errors.org_missing(org_id)
    counter: Item | None = None
    if counted:
        # The new plan's limit goes on the counter, on condition that the org's users fit in it,
        # in the same transaction as the plan on the org item.
        item, counter = _change_plan(org_id, written, stamp, rules, kept, removed)
    elif "plan" in changes:
        # No counter was found: the limit goes on the org item, on condition that there is still no
        # counter (an org created or counted since the read is changed as a counted one: again).
        update = update_request(
            keys.org_key(org_id), written, stamp, refusals.expects(rules), kept=kept, removed=removed
        )
        try:
            seats.set_uncounted(table, org_id, update)
        except ConditionFailed as failed:
            if failed.action == 1:
                return update_org(org_id, body, caller, version)
            raise refusals.refusal(failed, missing, rules) from None
        found, counter = seats.read(table, org_id, consistent=True)
        if found is None:  # deleted right after the change
            raise missing
        item = found
    else:
        with refusals.refused_as(missing, rules):
            item = table.update(
                keys.org_key(org_id), written, stamp, refusals.expects(rules), kept=kept, removed=removed
            )
    if "status" in changes:
        from controlplane.logic import signins  # the rare path: the users function never loads it

        # In line where there is no queue; in the cloud, the status's lifecycle event starts the job.
        signins.start(org_id, enabled=changes["status"] == ACTIVE)
    if counter is None and plans.USER_COUNT not in item:  # a change that did not read the counter
        # Strongly consistent: the write's answer is the new state a client keeps, so its seats are
        # not the ones before a user created (or a plan changed) a moment ago.
        counter = seats.read(table, org_id, consistent=True)[1]
    return Org.from_item(item, counter).seen_by(caller.operator)


def _change_plan(
    org_id: str,
    written: Item,
    stamp: str,
    rules: tuple[refusals.Rule, ...],
    kept: frozenset[str],
    removed: tuple[str, ...],
) -> tuple[Item, Item | None]:
    """The org's changes and the new plan's limit on its counter, in one transaction; the org and
    its counter as they are now."""
    table, missing = api_table(), errors.org_missing(org_id)
    plan = written["plan"]
    limit = plans.limit(plan)
    update = update_request(keys.org_key(org_id), written, stamp, refusals.expects(rules), kept=kept, removed=removed)
    try:
        seats.resize(table, org_id, update, limit)
    except ConditionFailed as failed:
        if failed.action == 0:
            raise refusals.refusal(failed, missing, rules) from None
        raise (missing if failed.item is None else _downgrade_refused(plan, limit)(failed.item)) from None
    item, counter = seats.read(table, org_id, consistent=True)
    if item is None:  # deleted right after the change
        raise missing
    return item, counter


def _downgrade_refused(plan: str, limit: int) -> Callable[[Item], ApiError]:
    return lambda org: QuotaExceeded("users", limit, int(org[plans.USER_COUNT]), plan)
