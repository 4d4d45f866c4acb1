"""An org's activity log, newest first: what the events function wrote (controlplane.lifecycle.activity).

One Query per page. The first page's range ends at the org item (``keys.activity_range``), so the org
comes first, newest-first, and a missing org is a 404 in that same request.

A deleted org's log stays until its entries' TTL, so an operator can still answer "who deleted it":
for an operator, a missing org with entries left answers them. An org created again with the same id
shows only what happened since its creation: older entries belong to the org that was deleted, and
the cursor carries that bound into the key condition of the later pages.
"""

from controlplane.dal import items, keys
from controlplane.http.auth import Caller
from controlplane.models.errors import InvalidCursor
from controlplane.models.resources import ActivityEntry, ActivityPage

_SEPARATOR = "|"  # between the bound and the position, in a cursor's id


def list_activity(org_id: str, limit: int, cursor_token: str | None, caller: Caller) -> ActivityPage:
    scope = keys.activity_scope(org_id)
    after = items.resume_after(scope, cursor_token)
    partition = keys.org_partition(org_id)
    if after is None:
        found, last = items.table().query(
            partition, limit=limit + 1, newest_first=True, between=keys.activity_range(org_id)
        )
        org = found.pop(0) if found and found[0]["entity"] == items.ORG else None
        if org is None and not (caller.operator and found):
            raise items.org_missing(org_id)
        since = org["created_at"][:19] if org else ""  # to the second, as the stream's times are
        kept = [entry for entry in found[:limit] if entry["position"] >= since]
        more = last is not None and len(kept) == len(found[:limit])
        page = kept
    else:
        since, _, position = after.partition(_SEPARATOR)
        if not position:
            raise InvalidCursor("The cursor is malformed, was altered, or belongs to another list")
        page, last = items.table().query(
            partition,
            limit=limit,
            newest_first=True,
            between=keys.activity_range(org_id, since),
            start_key=keys.activity_key(org_id, position),
        )
        more = last is not None
    for entry in page:
        entry["cursor_id"] = f"{since}{_SEPARATOR}{entry['position']}"
    return ActivityPage(
        items=[ActivityEntry.model_validate(entry) for entry in page],
        next_cursor=items.next_cursor(scope, page, "cursor_id", more),
    )
