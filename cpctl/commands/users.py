"""``cpctl users``: the users of an organization."""

from typing import Annotated

import typer

from cpctl.commands import imports
from cpctl.commands.common import (
    All,
    CursorOption,
    IdempotencyKey,
    IfMatch,
    Limit,
    OrgArgument,
    RoleOption,
    UserArgument,
    Yes,
    api,
    changed,
    confirm,
    pages,
)
from cpctl.output import TICKET_COLUMNS, USER_COLUMNS, Output, next_page, show, show_pages, show_rows

app = typer.Typer(no_args_is_help=True, help="The users of an organization.")
app.command("import")(imports.users_import)
app.command("import-status")(imports.import_status)


@app.command("list")
def users_list(
    ctx: typer.Context, org_id: OrgArgument, limit: Limit = None, cursor: CursorOption = None, every: All = False
) -> None:
    """List the users of an organization."""
    with api(ctx) as client:
        found = pages(every, cursor, lambda c: client.list_users(org_id, limit, c))
        show_pages(ctx, client, found, USER_COLUMNS, every)


@app.command("get")
def users_get(
    ctx: typer.Context,
    org_id: OrgArgument,
    user_id: UserArgument,
    include_tickets: Annotated[bool, typer.Option("--include-tickets", help="With their newest tickets.")] = False,
) -> None:
    """Show a user."""
    with api(ctx) as client:
        if include_tickets:
            found = client.get_user_with_tickets(org_id, user_id)
            if ctx.obj.output is Output.json:
                show(ctx, client, found)
                return
            show(ctx, client, found.user)
            more = next_page(ctx, found.next_cursor, f"cpctl tickets list {org_id} {user_id}")
            show_rows(found.tickets, TICKET_COLUMNS, more)
        else:
            show(ctx, client, client.get_user(org_id, user_id))


@app.command("create")
def users_create(
    ctx: typer.Context,
    org_id: OrgArgument,
    user_id: UserArgument,
    name: Annotated[str, typer.Option()],
    email: Annotated[str, typer.Option()],
    role: RoleOption = None,
    unit: Annotated[str | None, typer.Option(help="Their unit; default: the organization's root.")] = None,
    idempotency_key: IdempotencyKey = None,
) -> None:
    """Create a user (in the cloud, Cognito e-mails them an invitation)."""
    with api(ctx) as client:
        user = client.create_user(org_id, user_id, name, email, role, unit=unit, idempotency_key=idempotency_key)
        show(ctx, client, user)


@app.command("update")
def users_update(
    ctx: typer.Context,
    org_id: OrgArgument,
    user_id: UserArgument,
    name: Annotated[str | None, typer.Option()] = None,
    email: Annotated[str | None, typer.Option(help="A new address (admins).")] = None,
    role: RoleOption = None,  # admins and operators only
    unit: Annotated[
        str | None, typer.Option(help="Move them to this unit (admins); not with --email or --role.")
    ] = None,
    if_match: IfMatch = None,
) -> None:
    """Change a user's name, e-mail or role, or move them to another unit."""
    with api(ctx) as client:
        changes = changed(name=name, email=email, role=role, unit=unit)
        show(ctx, client, client.update_user(org_id, user_id, if_match=if_match, **changes))


@app.command("delete")
def users_delete(
    ctx: typer.Context, org_id: OrgArgument, user_id: UserArgument, if_match: IfMatch = None, yes: Yes = False
) -> None:
    """Delete a user and all their tickets."""
    confirm(yes, f"Delete user {user_id} of {org_id} with all their tickets?")
    with api(ctx) as client:
        client.delete_user(org_id, user_id, if_match=if_match)
        show(ctx, client, None, done=f"Deleted {org_id}/{user_id}")
