"""What every resource module shares: the table, timestamps, new items, cursors, not-found errors
and the If-Match condition."""

from datetime import UTC, datetime
from typing import Any

from controlplane import config
from controlplane.dal import cursor
from controlplane.dal.table import Expect, Item, Table
from controlplane.models.errors import NotFound, PreconditionFailed

ORG, USER, TICKET, SWEEP, ACTIVITY = (
    "org",
    "user",
    "ticket",
    "sweep",
    "activity",
)  # the ``entity`` attribute of each item
DELETING = "deleting_since"  # set on an org whose cascade delete has begun
# Who wrote an item last, and who started an org's delete: the ``sub`` of the caller, so that the
# lifecycle events (controlplane.lifecycle.contract) can name their actor. Never part of a response.
CREATED_BY, UPDATED_BY, DELETED_BY = "created_by", "updated_by", "deleted_by"


def table() -> Table:
    return Table(config.dynamodb(), config.settings().table_name)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_item(item_keys: dict[str, str], entity: str, attributes: dict[str, Any], actor: str | None = None) -> Item:
    stamp = now()
    item = {**item_keys, "entity": entity, **attributes, "created_at": stamp, "updated_at": stamp, "version": 1}
    if actor:
        item |= {CREATED_BY: actor, UPDATED_BY: actor}
    return item


def written_by(changes: dict[str, Any], actor: str) -> dict[str, Any]:
    """A client's changes plus who made them, as one UpdateItem writes them."""
    return {**changes, UPDATED_BY: actor}


def resume_after(scope: str, cursor_token: str | None) -> str | None:
    """The id of the item a page resumes after; None for the first page."""
    return cursor.decode(scope, cursor_token, config.settings().cursor_secret)


def next_cursor(scope: str, page: list[Item], id_attribute: str, more: bool) -> str | None:
    """A cursor after the page's last item, if DynamoDB said there is more."""
    if not more:
        return None
    return cursor.encode(scope, page[-1][id_attribute] if page else "", config.settings().cursor_secret)


def parent_first(
    partition: str,
    parent: str,
    missing: NotFound,
    limit: int,
    on_index: bool = False,
    newest_first: bool = False,
    between: tuple[str, str] | None = None,
) -> tuple[Item, list[Item], bool]:
    """A parent item and the first ``limit`` items after it in its collection (or in the sort-key
    range ``between``), in one request: the parent sorts first (an org before its users, a user
    before its tickets newest-first). The parent's absence is ``missing``; the flag says whether
    more items follow."""
    found, last = table().query(
        partition, limit=limit + 1, on_index=on_index, newest_first=newest_first, between=between
    )
    if not found or found[0]["entity"] != parent:
        raise missing
    return found[0], found[1:], last is not None


def org_missing(org_id: str) -> NotFound:
    return NotFound(f"Organization {org_id} not found")


def user_missing(org_id: str, user_id: str) -> NotFound:
    return NotFound(f"User {user_id} not found in organization {org_id}")


def ticket_missing(org_id: str, ticket_id: str) -> NotFound:
    return NotFound(f"Ticket {ticket_id} not found in organization {org_id}")


def version_is(version: int | None) -> tuple[Expect, ...]:
    """The If-Match condition: the stored version must be the one the client last saw."""
    if version is None:
        return ()
    return (Expect("version", version, _version_changed(version)),)


def check_version(item: Item, version: int | None) -> None:
    """The same check, for the cascade deletes, before their first write."""
    if version is not None and item["version"] != version:
        raise _version_changed(version)


def _version_changed(version: int) -> PreconditionFailed:
    return PreconditionFailed(f"The resource changed; its version is no longer {version}")
