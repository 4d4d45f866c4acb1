"""Organizations: build items from validated input, call the data layer, map back to models."""

from aws_lambda_powertools.metrics import MetricUnit

from controlplane import items, keys
from controlplane.auth import Caller, authorize_fields
from controlplane.errors import AlreadyExists
from controlplane.models import Org, OrgCreate, OrgPage, OrgUpdate, OrgWithUsers, User
from controlplane.observability import metrics


def create_org(body: OrgCreate, caller: Caller) -> Org:
    item = items.new_item(keys.org_keys(body.org_id), items.ORG, body.model_dump(), caller.subject)
    items.table().put_new(item, exists=AlreadyExists(f"Organization {body.org_id} already exists"))
    metrics.add_metric(name="OrganizationCreated", unit=MetricUnit.Count, value=1)
    return Org.model_validate(item)


def list_orgs(limit: int, cursor_token: str | None) -> OrgPage:
    found, last = items.table().query(
        keys.ORGS_LISTING, on_index=True, limit=limit, start_key=items.page(keys.orgs_scope(), cursor_token)
    )
    return OrgPage(
        items=[Org.model_validate(item) for item in found], next_cursor=items.next_cursor(keys.orgs_scope(), last)
    )


def get_org(org_id: str) -> Org:
    item = items.table().get(keys.org_key(org_id))
    if item is None:
        raise items.org_missing(org_id)
    return Org.model_validate(item)


def get_org_with_users(org_id: str, limit: int) -> OrgWithUsers:
    # The org item sorts first in its partition (METADATA# < USER#): one extra item buys it.
    found, last = items.table().query(keys.org_partition(org_id), limit=limit + 1)
    if not found or found[0]["entity"] != items.ORG:
        raise items.org_missing(org_id)
    return OrgWithUsers(
        org=Org.model_validate(found[0]),
        users=[User.model_validate(item) for item in found[1:] if item["entity"] == items.USER],  # not sweep markers
        next_cursor=items.next_cursor(keys.users_scope(org_id), last),
    )


def update_org(org_id: str, body: OrgUpdate, caller: Caller, version: int | None = None) -> Org:
    changes = body.changes()
    authorize_fields(caller, set(changes))
    item = items.table().update(
        keys.org_key(org_id),
        items.written_by(changes, caller.subject),
        items.now(),
        items.org_missing(org_id),
        items.version_is(version),
    )
    return Org.model_validate(item)
