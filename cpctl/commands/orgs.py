"""``cpctl orgs``: organizations (tenants)."""

from typing import Annotated

import typer

from cpctl.commands.common import (
    All,
    CursorOption,
    IdempotencyKey,
    IfMatch,
    Limit,
    OrgArgument,
    PlanOption,
    Yes,
    api,
    changed,
    confirm,
    pages,
)
from cpctl.output import ACTIVITY_COLUMNS, ORG_COLUMNS, USER_COLUMNS, Output, next_page, show, show_pages, show_rows

app = typer.Typer(no_args_is_help=True, help="Organizations (tenants).")


@app.command("list")
def orgs_list(ctx: typer.Context, limit: Limit = None, cursor: CursorOption = None, every: All = False) -> None:
    """List organizations (operators)."""
    with api(ctx) as client:
        found = pages(every, cursor, lambda c: client.list_orgs(limit, c))
        show_pages(ctx, client, found, ORG_COLUMNS, every)


@app.command("get")
def orgs_get(
    ctx: typer.Context,
    org_id: OrgArgument,
    include_users: Annotated[bool, typer.Option("--include-users", help="With its first users.")] = False,
) -> None:
    """Show an organization."""
    with api(ctx) as client:
        if include_users:
            found = client.get_org_with_users(org_id)
            if ctx.obj.output is Output.json:
                show(ctx, client, found)
                return
            show(ctx, client, found.org)
            show_rows(found.users, USER_COLUMNS, next_page(ctx, found.next_cursor, f"cpctl users list {org_id}"))
        else:
            show(ctx, client, client.get_org(org_id))


@app.command("create")
def orgs_create(
    ctx: typer.Context,
    org_id: OrgArgument,
    name: Annotated[str, typer.Option(help="Display name.")],
    plan: PlanOption = None,
    idempotency_key: IdempotencyKey = None,
) -> None:
    """Create an organization (operators)."""
    with api(ctx) as client:
        show(ctx, client, client.create_org(org_id, name, plan, idempotency_key=idempotency_key))


@app.command("update")
def orgs_update(
    ctx: typer.Context,
    org_id: OrgArgument,
    name: Annotated[str | None, typer.Option()] = None,
    plan: PlanOption = None,
    if_match: IfMatch = None,
) -> None:
    """Rename an organization or change its plan."""
    with api(ctx) as client:
        show(ctx, client, client.update_org(org_id, if_match=if_match, **changed(name=name, plan=plan)))


# How soon a suspension, and a reactivation, reaches every request of the org's users: the bound the
# API keeps (docs/SECURITY.md#when-access-ends).
TAKES_EFFECT_SECONDS = 5


@app.command(
    "suspend",
    short_help=f"Suspend an organization (operators): its users are refused within {TAKES_EFFECT_SECONDS} s.",
    help=f"Suspend an organization (operators): within {TAKES_EFFECT_SECONDS} seconds its admins and members "
    "are refused on every request (403 org_suspended), tokens they already hold included, and their sign-ins "
    "are disabled. Nothing is deleted; `cpctl orgs activate` lets them back in.",
)
def orgs_suspend(
    ctx: typer.Context,
    org_id: OrgArgument,
    reason: Annotated[str, typer.Option(help="Why (at most 500 characters); shown to operators only.")],
    if_match: IfMatch = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Suspend without asking.")] = False,
) -> None:
    confirm(
        yes,
        f"Suspend organization {org_id}? Within {TAKES_EFFECT_SECONDS} seconds its users are refused on every "
        "request, and they cannot sign in until it is activated.",
        "suspended",
    )
    with api(ctx) as client:
        show(ctx, client, client.suspend_org(org_id, reason, if_match=if_match))
    typer.echo(
        f"Suspended {org_id}: within {TAKES_EFFECT_SECONDS} s its users are refused (403 org_suspended), and "
        f"their sign-ins are being disabled. Nothing is deleted; cpctl orgs activate {org_id} lets them back in.",
        err=True,
    )


@app.command(
    "activate",
    short_help=f"Reactivate an organization (operators): its users are served within {TAKES_EFFECT_SECONDS} s.",
    help=f"Reactivate a suspended organization (operators): within {TAKES_EFFECT_SECONDS} seconds its users' "
    "requests are served again, and they may sign in again.",
)
def orgs_activate(ctx: typer.Context, org_id: OrgArgument, if_match: IfMatch = None) -> None:
    with api(ctx) as client:
        show(ctx, client, client.activate_org(org_id, if_match=if_match))
    typer.echo(
        f"Activated {org_id}: within {TAKES_EFFECT_SECONDS} s its users are served again, and their "
        "sign-ins are being enabled.",
        err=True,
    )


@app.command("delete")
def orgs_delete(ctx: typer.Context, org_id: OrgArgument, if_match: IfMatch = None, yes: Yes = False) -> None:
    """Delete an organization with all its users and tickets (operators)."""
    confirm(yes, f"Delete organization {org_id} with all its users and tickets?")
    with api(ctx) as client:
        accepted = client.delete_org(org_id, if_match=if_match)
        show(ctx, client, accepted, done=f"Deleted {org_id}")


@app.command("activity")
def orgs_activity(
    ctx: typer.Context, org_id: OrgArgument, limit: Limit = None, cursor: CursorOption = None, every: All = False
) -> None:
    """Who did what in an organization, newest first (its admins, operators)."""
    with api(ctx) as client:
        found = pages(every, cursor, lambda c: client.list_activity(org_id, limit, c))
        show_pages(ctx, client, found, ACTIVITY_COLUMNS, every)
