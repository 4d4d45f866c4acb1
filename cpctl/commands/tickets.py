"""``cpctl tickets``: the tickets users open."""

from typing import Annotated

import typer

from cpctl.commands.common import (
    All,
    CursorOption,
    IdempotencyKey,
    IfMatch,
    Limit,
    OrgArgument,
    PriorityOption,
    StatusOption,
    TicketArgument,
    UserArgument,
    Yes,
    api,
    changed,
    confirm,
    pages,
    usage_error,
)
from cpctl.output import TICKET_COLUMNS, show, show_pages

app = typer.Typer(no_args_is_help=True, help="The tickets users open.")

TagOption = Annotated[list[str] | None, typer.Option("--tag", help="Repeat for several tags.")]


@app.command("list")
def tickets_list(
    ctx: typer.Context,
    org_id: OrgArgument,
    user_id: UserArgument,
    limit: Limit = None,
    cursor: CursorOption = None,
    every: All = False,
) -> None:
    """List a user's tickets, newest first."""
    with api(ctx) as client:
        found = pages(every, cursor, lambda c: client.list_tickets(org_id, user_id, limit, c))
        show_pages(ctx, client, found, TICKET_COLUMNS, every)


@app.command("get")
def tickets_get(ctx: typer.Context, org_id: OrgArgument, ticket_id: TicketArgument) -> None:
    """Show a ticket."""
    with api(ctx) as client:
        show(ctx, client, client.get_ticket(org_id, ticket_id))


@app.command("open")
def tickets_open(
    ctx: typer.Context,
    org_id: OrgArgument,
    user_id: UserArgument,
    subject: Annotated[str, typer.Option()],
    description: Annotated[str | None, typer.Option()] = None,
    priority: PriorityOption = None,
    tag: TagOption = None,
    idempotency_key: IdempotencyKey = None,
) -> None:
    """Open a ticket for a user."""
    with api(ctx) as client:
        fields = changed(description=description, priority=priority, tags=tag or None)
        show(ctx, client, client.create_ticket(org_id, user_id, subject, idempotency_key=idempotency_key, **fields))


@app.command("update")
def tickets_update(
    ctx: typer.Context,
    org_id: OrgArgument,
    ticket_id: TicketArgument,
    subject: Annotated[str | None, typer.Option()] = None,
    description: Annotated[str | None, typer.Option()] = None,
    status: StatusOption = None,
    priority: PriorityOption = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Replaces the tags; repeat for several.")] = None,
    clear_tags: Annotated[bool, typer.Option("--clear-tags", help="Remove every tag.")] = False,
    if_match: IfMatch = None,
) -> None:
    """Change a ticket."""
    if tag and clear_tags:
        raise usage_error("--tag and --clear-tags exclude each other")
    with api(ctx) as client:
        changes = changed(subject=subject, description=description, status=status, priority=priority, tags=tag or None)
        if clear_tags:
            changes["tags"] = []
        show(ctx, client, client.update_ticket(org_id, ticket_id, if_match=if_match, **changes))


@app.command("delete")
def tickets_delete(
    ctx: typer.Context, org_id: OrgArgument, ticket_id: TicketArgument, if_match: IfMatch = None, yes: Yes = False
) -> None:
    """Delete a ticket."""
    confirm(yes, f"Delete ticket {ticket_id} of {org_id}?")
    with api(ctx) as client:
        client.delete_ticket(org_id, ticket_id, if_match=if_match)
        show(ctx, client, None, done=f"Deleted ticket {ticket_id}")
