"""Tickets: what users open. Read and changed through their organization, listed per user."""

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.logging import correlation_paths

from controlplane import tickets
from controlplane.api import (
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
    expected_version,
    no_content,
    responses,
    with_etag,
)
from controlplane.models import Ticket, TicketCreate, TicketPage, TicketUpdate
from controlplane.observability import logger, metrics, tracer

app = create_app()


@app.post(
    "/orgs/<org_id>/users/<user_id>/tickets",
    summary="Open a ticket for a user",
    tags=["tickets"],
    responses=responses({201: Ticket}),
)
def create_ticket(
    org_id: OrgIdPath, user_id: UserIdPath, body: TicketCreate, idempotency_key: IdempotencyKey = None
) -> Response[Ticket]:
    return create_once(
        app,
        idempotency_key,
        body,
        lambda: tickets.create_ticket(org_id, user_id, body, current_caller(app)),
        lambda ticket: f"/orgs/{org_id}/tickets/{ticket.ticket_id}",
    )


@app.get(
    "/orgs/<org_id>/users/<user_id>/tickets",
    summary="List a user's tickets, newest first",
    tags=["tickets"],
    responses=responses({200: TicketPage}),
)
def list_tickets(
    org_id: OrgIdPath, user_id: UserIdPath, limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None
) -> TicketPage:
    return tickets.list_tickets(org_id, user_id, limit, cursor)


@app.get(
    "/orgs/<org_id>/tickets/<ticket_id>", summary="Get a ticket", tags=["tickets"], responses=responses({200: Ticket})
)
def get_ticket(org_id: OrgIdPath, ticket_id: TicketIdPath) -> Response[Ticket]:
    return with_etag(tickets.get_ticket(org_id, ticket_id, current_caller(app)))


@app.patch(
    "/orgs/<org_id>/tickets/<ticket_id>",
    summary="Update a ticket",
    tags=["tickets"],
    responses=responses({200: Ticket}),
)
def update_ticket(
    org_id: OrgIdPath, ticket_id: TicketIdPath, body: TicketUpdate, if_match: IfMatch = None
) -> Response[Ticket]:
    caller = current_caller(app)
    return with_etag(tickets.update_ticket(org_id, ticket_id, body, caller, expected_version(if_match)))


@app.delete(
    "/orgs/<org_id>/tickets/<ticket_id>", summary="Delete a ticket", tags=["tickets"], responses=responses({204: None})
)
def delete_ticket(org_id: OrgIdPath, ticket_id: TicketIdPath, if_match: IfMatch = None) -> Response[None]:
    tickets.delete_ticket(org_id, ticket_id, current_caller(app), expected_version(if_match))
    return no_content()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict, context) -> dict:
    return app.resolve(event, context)
