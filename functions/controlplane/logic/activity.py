"""An org's activity log, newest first: what the events function wrote (controlplane.lifecycle.activity).

One Query per page. The first page's range ends at the org item (``keys.activity_range``), so the org
comes first, newest-first, and a missing org is a 404 in that same request.

A deleted org's log stays until its entries' TTL, so an operator can still answer "who deleted it":
for an operator, a missing org with entries left answers them. An org created again with the same id
shows only its own log: the list ends at the newest ``Organization Created`` entry, as what sorts
before it belongs to the org deleted before (that page may read more items than it returns). Until
that entry is written (the stream's lag), the first page ends before the first entry older than the
org's ``created_at`` (or any ``Organization Created``), with no cursor if it ends there: the org's own
records come in stream order, its Created first, but a ticket's or a unit's partition is another
shard, whose entries can be written before it. Not covered (docs/ACTIVITY.md): a first page full of
this org's entries gives a cursor, and a later page, which does not read the org, could reach the
earlier org's entries while the Created entry is still not written. Once it is, an entry of this org
stamped a few milliseconds before it by another host's clock is not dropped (nor the entries after
it). A later page's cursor is bound to the caller who took it: the users of an org created again
have new sign-ins, and their cursors start in their org's log.
"""

from controlplane.dal import cursor, keys
from controlplane.dal.conditions import Item
from controlplane.dal.table import api_table
from controlplane.logic.access import Caller
from controlplane.models import errors
from controlplane.models.activity import ActivityEntry, ActivityPage

_ORG_CREATED = "Organization Created"  # lifecycle.contract's, not imported: it builds its models at import


def list_activity(org_id: str, limit: int, cursor_token: str | None, caller: Caller) -> ActivityPage:
    scope = keys.activity_scope(org_id, caller.subject)
    after = cursor.resume_after(scope, cursor_token)
    table, partition = api_table(), keys.org_partition(org_id)
    if after is None:
        found, last = table.query(partition, limit=limit + 1, newest_first=True, between=keys.activity_range(org_id))
        org = found.pop(0) if found and found[0]["entity"] == keys.ORG else None
        if org is None and not (caller.operator and found):
            raise errors.org_missing(org_id)
        found, more = found[:limit], last is not None
        if org is not None and not _has_own_created(found, org):
            own = _since_org(found, org)  # this org's Created entry is not written yet (the stream's lag)
            found, more = own, more and len(own) == len(found)
    else:
        start = keys.activity_key(org_id, after) if after else None
        found, last = table.query(
            partition, limit=limit, newest_first=True, between=keys.activity_range(org_id), start_key=start
        )
        more = last is not None
    page = _since_created(found)
    if page and page[-1]["type"] == _ORG_CREATED:  # the org's first entry: nothing of its log is older
        more = False
    return ActivityPage(
        items=[ActivityEntry.model_validate(entry).seen_by(caller.operator) for entry in page],
        next_cursor=cursor.next_cursor(scope, page, "position", more),
    )


def _has_own_created(found: list[Item], org: Item) -> bool:
    return any(entry["type"] == _ORG_CREATED and entry["occurred_at"] == org["created_at"] for entry in found)


def _since_org(found: list[Item], org: Item) -> list[Item]:
    """Before the org's own Created entry is written, the entries up to the first one older than the
    org: a ticket's or a unit's partition is another shard of the stream, whose entries can be written
    first, and what sorts below them is an earlier org's of that id (its Created, its Deleted...)."""
    for index, entry in enumerate(found):
        if entry["occurred_at"] < org["created_at"] or entry["type"] == _ORG_CREATED:
            return found[:index]
    return found


def _since_created(found: list[Item]) -> list[Item]:
    """Entries up to the org's creation, newest first: older ones are an earlier org's of that id."""
    for index, entry in enumerate(found):
        if entry["type"] == _ORG_CREATED:
            return found[: index + 1]
    return found
