"""Tickets: what users open. Members reach only their own, by a condition on the write itself, and
none a deleted user of their user id left (``first_id_of``)."""

from datetime import datetime
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit

from controlplane.dal import cursor, keys, sealing, stamps, transactions
from controlplane.dal.conditions import ConditionFailed, Expect, Item
from controlplane.dal.table import api_table
from controlplane.logic import refusals
from controlplane.logic.access import Caller
from controlplane.models import errors
from controlplane.models.errors import Forbidden
from controlplane.models.ids import new_ulid, ulid_floor
from controlplane.models.resources import Ticket, TicketCreate, TicketPage, TicketUpdate
from controlplane.observability import metrics


def ticket_item(org_id: str, user_id: str, body: TicketCreate, actor: str | None = None) -> Item:
    """The stored item of a new ticket (also what the benchmarks bulk-load)."""
    ticket_id = new_ulid()
    attributes = {"org_id": org_id, "ticket_id": ticket_id, "user_id": user_id, **body.model_dump()}
    return stamps.new_item(keys.ticket_keys(org_id, user_id, ticket_id), keys.TICKET, attributes, actor)


def create_ticket(org_id: str, user_id: str, body: TicketCreate, caller: Caller) -> Ticket:
    item = ticket_item(org_id, user_id, body, caller.subject)
    ticket = Ticket.model_validate(item)
    try:
        with sealing.making(ticket):
            transactions.put_child(api_table(), keys.user_key(org_id, user_id), item)
    except ConditionFailed as failed:
        raise (_missing(org_id, user_id) if failed.action == 0 else errors.ticket_exists(ticket.ticket_id)) from None
    metrics.add_metric(name="TicketCreated", unit=MetricUnit.Count, value=1)
    return ticket


def list_tickets(org_id: str, user_id: str, limit: int, cursor_token: str | None) -> TicketPage:
    after = cursor.resume_after(keys.tickets_scope(org_id, user_id), cursor_token)
    if after is None:  # the first page comes with the user, so a missing user is a 404
        try:
            user, found, more = first_tickets(org_id, user_id, limit)
        except errors.NotFound:
            raise _missing(org_id, user_id) from None
        since = first_id_of(user)
    else:
        # the page's last ticket, and the first id the user can own (none in a cursor of before it was kept)
        position, _, since = after.partition("|")
        start = keys.ticket_keys(org_id, user_id, position) if position else None
        span: dict[str, Any] = {"between": keys.tickets_from(since)} if since else {"prefix": keys.TICKET_PREFIX}
        collection = keys.user_collection(org_id, user_id)
        found, last = api_table().query(
            collection, on_index=True, newest_first=True, limit=limit, start_key=start, **span
        )
        more = last is not None
    # One validation of the whole page, not one call per item: the same models, less Python per item.
    return TicketPage.model_validate({"items": found, "next_cursor": next_cursor(org_id, user_id, since, found, more)})


def first_tickets(org_id: str, user_id: str, limit: int) -> tuple[Item, list[Item], bool]:
    """The user and their newest tickets, in one request: on GSI1 the user item sorts after its
    tickets (USER# > TICKET#), so newest-first puts it first. A ticket older than the user is not
    theirs (``first_id_of``): it and all after it are left out, and the list ends there."""
    collection = keys.user_collection(org_id, user_id)
    found = api_table().parent_first(collection, keys.USER, limit, on_index=True, newest_first=True)
    if found is None:
        raise errors.user_missing(org_id, user_id)
    user, page, more = found
    since = first_id_of(user)
    owned = [ticket for ticket in page if ticket["ticket_id"] >= since]
    return user, owned, more and len(owned) == len(page)


def first_id_of(user: Item) -> str:
    """The smallest id a ticket of this user can have: none is opened before their item is written.
    An older one under their id is a deleted user's of that id (opened just before that delete, and
    shown by GSI1 only after it), left for the delete's sweep, which comes once GSI1 has settled: it
    is not this user's to see meanwhile, nor, if the sweep fails, after."""
    created = datetime.fromisoformat(user["created_at"])
    return ulid_floor(int(created.timestamp() * 1000))


def next_cursor(org_id: str, user_id: str, since: str, found: list[Item], more: bool) -> str | None:
    """A cursor after the page's last ticket that keeps ``since`` (``first_id_of`` the user), so the
    pages after it, which do not read the user, end where the user's own tickets do."""
    position = found[-1]["ticket_id"] if found else ""
    return cursor.next_cursor(keys.tickets_scope(org_id, user_id), [{"at": f"{position}|{since}"}], "at", more)


def _missing(org_id: str, user_id: str) -> errors.NotFound:
    """Why a user's tickets are not there: the user is missing, or their whole org is. One more read,
    on the 404's path only (the write's own condition cannot tell which)."""
    if api_table().get(keys.org_key(org_id)) is None:
        return errors.org_missing(org_id)
    return errors.user_missing(org_id, user_id)


def _not_yours(ticket_id: str) -> Forbidden:
    return Forbidden(f"Ticket {ticket_id} belongs to another user")


def _floor(caller: Caller) -> str | None:
    """The least id of a ticket a member reaches: ``first_id_of`` their user, whose ``created_at`` the
    authorizer hands on. An older one under their user id is a deleted namesake's, missing for them as
    in their list. None for admins and operators, who reach every ticket of the org (docs/SECURITY.md),
    and for a context without it (a decision API Gateway cached before the authorizer passed it on)."""
    if not (caller.is_member and caller.user_created_at):
        return None
    return first_id_of({"created_at": caller.user_created_at})


def _ticket_rules(caller: Caller, org_id: str, ticket_id: str, version: int | None) -> tuple[refusals.Rule, ...]:
    """Members may only touch their own tickets (403 first), not their deleted namesake's (404): the
    write's own condition checks both."""
    owner, floor = caller.owner_filter(), _floor(caller)
    rules: tuple[refusals.Rule, ...] = ((Expect("user_id", owner), lambda _: _not_yours(ticket_id)),) if owner else ()
    if floor:
        rules += ((Expect("ticket_id", floor, at_least=True), lambda _: errors.ticket_missing(org_id, ticket_id)),)
    return rules + refusals.if_match(version)


def get_ticket(org_id: str, ticket_id: str, caller: Caller) -> Ticket:
    item = api_table().get(keys.ticket_key(org_id, ticket_id))
    if item is None:
        raise errors.ticket_missing(org_id, ticket_id)
    if caller.owner_filter() not in (None, item["user_id"]):
        raise _not_yours(ticket_id)
    if item["ticket_id"] < (_floor(caller) or ""):  # a deleted namesake's: not there for this member
        raise errors.ticket_missing(org_id, ticket_id)
    return Ticket.model_validate(item)


def update_ticket(
    org_id: str, ticket_id: str, body: TicketUpdate, caller: Caller, version: int | None = None
) -> Ticket:
    rules = _ticket_rules(caller, org_id, ticket_id, version)
    with refusals.refused_as(errors.ticket_missing(org_id, ticket_id), rules):
        item = api_table().update(
            keys.ticket_key(org_id, ticket_id),
            stamps.written_by(body.changes(), caller.subject),
            stamps.now(),
            refusals.expects(rules),
        )
    return Ticket.model_validate(item)


def delete_ticket(org_id: str, ticket_id: str, caller: Caller, version: int | None = None) -> None:
    rules = _ticket_rules(caller, org_id, ticket_id, version)
    with refusals.refused_as(errors.ticket_missing(org_id, ticket_id), rules):
        api_table().delete(keys.ticket_key(org_id, ticket_id), refusals.expects(rules))
