"""An org's activity log, newest first: what the events function wrote (controlplane.lifecycle.activity).

One Query per page. The first page's range ends at the org item (``keys.activity_range``), so the org
comes first, newest-first, and a missing org is a 404 in that same request.

A deleted org's log stays until its entries' TTL, so an operator can still answer "who deleted it":
for an operator, a missing org with entries left answers them. An org created again with the same id
shows only its own log: the list ends at the newest ``Organization Created`` entry, as what sorts
before it belongs to the org deleted before (that page may read more items than it returns). While
the first page does not hold that entry (not written yet: the stream's lag; or further on), the log
ends at the first entry of an earlier org (``_since_org``; its cascade's removals are left out, not
the end), with no cursor if it ends there: the
org's own records come in stream order, its Created first, but a ticket's or a unit's partition is
another shard, whose entries can be written before it. That page's cursor carries the org's
``created_at``, and the pages after it, which do not read the org, end at the same place. A later
page's cursor is bound to the caller who took it: the users of an org created again have new
sign-ins, and their cursors start in their org's log.
"""

from controlplane.dal import cursor, keys
from controlplane.dal.conditions import Item
from controlplane.dal.table import api_table
from controlplane.logic.access import Caller
from controlplane.models import errors
from controlplane.models.activity import ActivityEntry, ActivityPage

# lifecycle.contract's, not imported: it builds its models at import
_ORG_CREATED, _ORG_DELETED = "Organization Created", "Organization Deleted"
_CASCADED = ("User Deleted", "Ticket Deleted", "Unit Deleted")  # what an org's cascade delete removes


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
        # this org's Created entry is not written yet (the stream's lag): its log ends at its created_at
        since = org["created_at"] if org is not None and not _has_own_created(found, org) else ""
    else:
        position, _, since = after.partition("|")  # the position, and the created_at the first page found
        start = keys.activity_key(org_id, position) if position else None
        found, last = table.query(
            partition, limit=limit, newest_first=True, between=keys.activity_range(org_id), start_key=start
        )
        more = last is not None
    read = found  # up to where this org's log ends: the next page starts after it
    if since:
        read = _since_org(found, since)
        found, more = [e for e in read if not _earlier_removal(e, since)], more and len(read) == len(found)
    page = _since_created(found)
    if page and page[-1]["type"] == _ORG_CREATED:  # the org's first entry: nothing of its log is older
        more = False
    position = read[-1]["position"] if read else ""
    seen = (ActivityEntry.model_validate(entry).seen_by(caller.operator) for entry in page)
    return ActivityPage(
        items=[entry for entry in seen if entry is not None],
        next_cursor=cursor.next_cursor(scope, [{"at": f"{position}|{since}" if since else position}], "at", more),
    )


def _has_own_created(found: list[Item], org: Item) -> bool:
    return any(entry["type"] == _ORG_CREATED and entry["occurred_at"] == org["created_at"] for entry in found)


def _since_org(found: list[Item], created_at: str) -> list[Item]:
    """While the org's own Created entry may not be written yet, its entries: up to the first that
    is older than the org or an earlier org's Created or Deleted (its own Created is kept). A
    ticket's or a unit's partition is another shard of the stream, whose entries can be written
    before this org's Created. The stream orders records by the second, so an earlier org's entry
    of this org's second may sort among this org's: the cut is the org's own stamp, not a margin
    for the hosts' clocks (an entry of this org stamped a few milliseconds early by another host
    ends the log there, and hides what is older: only while the Created entry is beyond the page).
    An earlier org's cascade removal (``_earlier_removal``) is not the end: it can sort above this
    org's Created, as in ``_since_created``, and the caller leaves it out."""
    for index, entry in enumerate(found):
        if _earlier_removal(entry, created_at):
            continue
        own = entry["type"] == _ORG_CREATED and entry["occurred_at"] == created_at
        earlier = entry["type"] in (_ORG_CREATED, _ORG_DELETED) and not own
        if earlier or entry["occurred_at"] < created_at:
            return found[:index]
    return found


def _earlier_removal(entry: Item, created_at: str) -> bool:
    """A removal stamped before the org was created: an earlier org's cascade (``_since_created``)."""
    return entry["type"] in _CASCADED and entry["occurred_at"] < created_at


def _since_created(found: list[Item]) -> list[Item]:
    """Entries up to the org's creation, newest first: older ones are an earlier org's of that id.
    So are the removals above it stamped before it: the stream orders the records of one second by
    number within a shard only, and an earlier org's last records are its cascade's removals of
    units, users and tickets (other shards), which can sort after the Created entry of an org made
    again in that second. (An entry of this org stamped a moment early by another host's clock is a
    create or a change, and stays.)"""
    for index, entry in enumerate(found):
        if entry["type"] == _ORG_CREATED:
            newer = [e for e in found[:index] if not _earlier_removal(e, entry["occurred_at"])]
            return [*newer, entry]
    return found
