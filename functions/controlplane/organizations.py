"""Organizations: build items from validated input, call the data layer, map back to models."""

from aws_lambda_powertools.metrics import MetricUnit

from controlplane import items, keys
from controlplane.auth import Caller, authorize_fields
from controlplane.errors import AlreadyExists
from controlplane.models import Org, OrgCreate, OrgPage, OrgUpdate, OrgWithUsers, User
from controlplane.observability import metrics


def create_org(body: OrgCreate) -> Org:
    item = items.new_item(keys.org_keys(body.org_id), items.ORG, body.model_dump())
    items.table().put_new(item, exists=AlreadyExists(f"Organization {body.org_id} already exists"))
    metrics.add_metric(name="OrganizationCreated", unit=MetricUnit.Count, value=1)
    return Org.model_validate(item)


def list_orgs(limit: int, cursor_token: str | None) -> OrgPage:
    scope = keys.orgs_scope()
    after = items.resume_after(scope, cursor_token)
    start = keys.org_keys(after) if after else None
    found, last = items.table().query(keys.ORGS_LISTING, on_index=True, limit=limit, start_key=start)
    orgs = [Org.model_validate(item) for item in found]
    return OrgPage(items=orgs, next_cursor=items.next_cursor(scope, found, "org_id", last is not None))


def get_org(org_id: str) -> Org:
    item = items.table().get(keys.org_key(org_id))
    if item is None:
        raise items.org_missing(org_id)
    return Org.model_validate(item)


def get_org_with_users(org_id: str, limit: int) -> OrgWithUsers:
    org, users, more = first_users(org_id, limit)
    return OrgWithUsers(
        org=Org.model_validate(org),
        users=[User.model_validate(item) for item in users],
        next_cursor=items.next_cursor(keys.users_scope(org_id), users, "user_id", more),
    )


def first_users(org_id: str, limit: int) -> tuple[dict, list[dict], bool]:
    """The org and its first users, in one request: METADATA# sorts before USER# in the partition.
    Sweep markers of an org being deleted (SWEEP#) sort between them and are left out."""
    org, rest, more = items.parent_first(keys.org_partition(org_id), items.ORG, items.org_missing(org_id), limit)
    return org, [item for item in rest if item["entity"] == items.USER], more


def update_org(org_id: str, body: OrgUpdate, caller: Caller, version: int | None = None) -> Org:
    changes = body.changes()
    authorize_fields(caller, set(changes))
    item = items.table().update(
        keys.org_key(org_id), changes, items.now(), items.org_missing(org_id), items.version_is(version)
    )
    return Org.model_validate(item)
