"""Tickets: what users open. Read and changed through their organization, listed per user."""

from aws_lambda_powertools.event_handler import Response

from controlplane.http import params, responses
from controlplane.http.resolver import Resolver
from controlplane.logic import tickets
from controlplane.models.resources import Ticket, TicketCreate, TicketPage, TicketUpdate

app = Resolver()


@app.operation("openTicket")
def create_ticket(
    org_id: params.OrgIdPath,
    user_id: params.UserIdPath,
    body: TicketCreate,
    idempotency_key: params.IdempotencyKey = None,
) -> Response[Ticket]:
    return app.create_once(idempotency_key, body, lambda: tickets.create_ticket(org_id, user_id, body, app.caller))


@app.operation("listTickets")
def list_tickets(
    org_id: params.OrgIdPath,
    user_id: params.UserIdPath,
    limit: params.Limit = params.DEFAULT_LIMIT,
    cursor: params.Cursor = None,
) -> TicketPage:
    return tickets.list_tickets(org_id, user_id, limit, cursor)


@app.operation("getTicket")
def get_ticket(org_id: params.OrgIdPath, ticket_id: params.TicketIdPath) -> Response[Ticket]:
    return responses.with_etag(tickets.get_ticket(org_id, ticket_id, app.caller))


@app.operation("updateTicket")
def update_ticket(
    org_id: params.OrgIdPath, ticket_id: params.TicketIdPath, body: TicketUpdate, if_match: params.IfMatch = None
) -> Response[Ticket]:
    version = responses.expected_version(if_match)
    return responses.with_etag(tickets.update_ticket(org_id, ticket_id, body, app.caller, version))


@app.operation("deleteTicket")
def delete_ticket(
    org_id: params.OrgIdPath, ticket_id: params.TicketIdPath, if_match: params.IfMatch = None
) -> Response[None]:
    tickets.delete_ticket(org_id, ticket_id, app.caller, responses.expected_version(if_match))
    return responses.no_content()


lambda_handler = app.entry_point()
