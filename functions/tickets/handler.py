"""Tickets: what users open. Read and changed through their organization, listed per user."""

from aws_lambda_powertools.event_handler import Response

from controlplane.http.api import (
    DEFAULT_LIMIT,
    Cursor,
    IdempotencyKey,
    IfMatch,
    Limit,
    OrgIdPath,
    TicketIdPath,
    UserIdPath,
    create_app,
    create_once,
    current_caller,
    entry_point,
    expected_version,
    no_content,
    operation,
    with_etag,
)
from controlplane.logic import tickets
from controlplane.models.resources import Ticket, TicketCreate, TicketPage, TicketUpdate

app = create_app()


@operation(app, "openTicket")
def create_ticket(
    org_id: OrgIdPath, user_id: UserIdPath, body: TicketCreate, idempotency_key: IdempotencyKey = None
) -> Response[Ticket]:
    return create_once(
        app, idempotency_key, body, lambda: tickets.create_ticket(org_id, user_id, body, current_caller(app))
    )


@operation(app, "listTickets")
def list_tickets(
    org_id: OrgIdPath, user_id: UserIdPath, limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None
) -> TicketPage:
    return tickets.list_tickets(org_id, user_id, limit, cursor)


@operation(app, "getTicket")
def get_ticket(org_id: OrgIdPath, ticket_id: TicketIdPath) -> Response[Ticket]:
    return with_etag(tickets.get_ticket(org_id, ticket_id, current_caller(app)))


@operation(app, "updateTicket")
def update_ticket(
    org_id: OrgIdPath, ticket_id: TicketIdPath, body: TicketUpdate, if_match: IfMatch = None
) -> Response[Ticket]:
    caller = current_caller(app)
    return with_etag(tickets.update_ticket(org_id, ticket_id, body, caller, expected_version(if_match)))


@operation(app, "deleteTicket")
def delete_ticket(org_id: OrgIdPath, ticket_id: TicketIdPath, if_match: IfMatch = None) -> Response[None]:
    tickets.delete_ticket(org_id, ticket_id, current_caller(app), expected_version(if_match))
    return no_content()


lambda_handler = entry_point(app)
