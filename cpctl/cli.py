"""``cpctl``: the control-plane API from a terminal or a CI job.

    cpctl [--url URL] [--token TOKEN] [--output table|json] COMMAND ...

Exit codes: 0 done, 1 the API refused (its error code on stderr) or could not be reached,
2 usage error (including a body the API's models reject before it is sent).
"""

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated

import httpx
import pydantic
import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn
from rich.table import Table

from controlplane.models.resources import Page, Plan, Priority, Role, Status
from cpctl import login as credentials
from cpctl.client import DEFAULT_URL, ApiError, Client

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,  # locals hold the token
    help="Manage organizations, users and tickets of the control-plane API.",
)
orgs = typer.Typer(no_args_is_help=True, help="Organizations (tenants).")
users = typer.Typer(no_args_is_help=True, help="The users of an organization.")
tickets = typer.Typer(no_args_is_help=True, help="The tickets users open.")
app.add_typer(orgs, name="orgs")
app.add_typer(users, name="users")
app.add_typer(tickets, name="tickets")


class Output(StrEnum):
    table = "table"
    json = "json"


@dataclass
class Settings:
    url: str
    token: str | None
    output: Output


@app.callback()
def main(
    ctx: typer.Context,
    url: Annotated[str, typer.Option(envvar="CONTROLPLANE_URL", help="The API's base URL.")] = DEFAULT_URL,
    token: Annotated[
        str | None,
        typer.Option(envvar="CONTROLPLANE_TOKEN", help="An ID token; default: the one `cpctl login` stored."),
    ] = None,
    output: Annotated[Output, typer.Option("--output", "-o", help="json: the API's JSON, as sent.")] = Output.table,
) -> None:
    ctx.obj = Settings(url=url, token=token, output=output)


USAGE_ERROR = 2


def usage_error(message: str) -> typer.Exit:
    """Exit code 2, as for a wrong option: the request was never sent."""
    typer.echo(f"Usage error: {message}", err=True)
    return typer.Exit(USAGE_ERROR)


# Running a command: one client, the API's refusals as exit code 1, bad input as exit code 2.


@contextmanager
def api(ctx: typer.Context) -> Iterator[Client]:
    settings: Settings = ctx.obj
    token = settings.token or credentials.load_token()
    if not token:
        raise usage_error("No token: pass --token, set CONTROLPLANE_TOKEN, or run `cpctl login`.")
    client = Client(settings.url, token)
    try:
        yield client
    except ApiError as error:
        if settings.output is Output.json and error.body:
            typer.echo(error.body, err=True)
        else:
            typer.echo(
                f"Error: {error.code}: {error.message} (status {error.status}, request {error.request_id})", err=True
            )
        raise typer.Exit(1) from None
    except pydantic.ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in error.errors())
        raise usage_error(problems) from None
    except httpx.TransportError as error:
        typer.echo(f"Error: cannot reach {settings.url}: {error}. Is the API running (make run)?", err=True)
        raise typer.Exit(1) from None
    finally:
        client.close()


def show(ctx: typer.Context, client: Client, item: pydantic.BaseModel | None, done: str = "") -> None:
    """Print the answer: the API's body as sent (json), or a table; ``done`` for an empty answer."""
    if ctx.obj.output is Output.json:
        if client.last_response is not None and client.last_response.content:
            typer.echo(client.last_response.text)
        return
    if item is None:
        typer.echo(done)
        return
    table = Table(show_header=False, box=None)
    for name, value in item.model_dump(mode="json").items():
        table.add_row(name, _cell(value))
    Console().print(table)


def show_pages(
    ctx: typer.Context, client: Client, pages: Iterator[Page], columns: tuple[str, ...], every: bool
) -> None:
    """One page, or with ``every`` all of them: in json one API body per line (jq reads them as a
    stream), in a table all items with the next cursor underneath, if any."""
    json_output = ctx.obj.output is Output.json
    rows, cursor = [], None
    # A spinner with the count so far, on a terminal only, and on stderr: stdout stays the data.
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        console=Console(stderr=True),
        transient=True,
        disable=not (every and sys.stderr.isatty()),
    )
    with progress:
        task = progress.add_task("fetching", total=None)
        for page in pages:
            if json_output:
                typer.echo(client.last_response.text)
            rows += page.items
            cursor = page.next_cursor
            progress.update(task, description=f"{len(rows)} fetched")
            if not every:
                break
    if not json_output:
        show_rows(rows, columns, cursor)


def show_rows(rows: list[pydantic.BaseModel], columns: tuple[str, ...], cursor: str | None) -> None:
    table = Table(*columns)
    for row in rows:
        values = row.model_dump(mode="json")
        table.add_row(*(_cell(values[column]) for column in columns))
    Console().print(table)
    if cursor:
        typer.echo(f"More: --cursor {cursor} (or --all)", err=True)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


def _set(**fields) -> dict:
    """The options the user gave: a PATCH changes only those."""
    return {name: value for name, value in fields.items() if value is not None}


Limit = Annotated[int | None, typer.Option(min=1, max=100, help="Page size (the API's default: 20).")]
CursorOption = Annotated[str | None, typer.Option(help="`next_cursor` of the previous page.")]
All = Annotated[bool, typer.Option("--all", help="Follow next_cursor through every page.")]
IfMatch = Annotated[str | None, typer.Option(help='Only if the resource still has this ETag, e.g. "3".')]
IdempotencyKey = Annotated[
    str | None, typer.Option(help="Reuse a key to make a retried create safe; default: a new one per call.")
]
ORG_COLUMNS = ("org_id", "name", "plan", "version", "updated_at")
USER_COLUMNS = ("user_id", "name", "email", "role", "version")
ACTIVITY_COLUMNS = ("occurred_at", "type", "actor", "resource", "changes")
TICKET_COLUMNS = ("ticket_id", "user_id", "status", "priority", "subject", "tags")


def _pages(every: bool, cursor: str | None, fetch: Callable[[str | None], Page]) -> Iterator[Page]:
    return Client.pages(fetch, cursor) if every else iter([fetch(cursor)])


# Organizations.


@orgs.command("list")
def orgs_list(ctx: typer.Context, limit: Limit = None, cursor: CursorOption = None, every: All = False) -> None:
    """List organizations (operators)."""
    with api(ctx) as client:
        pages = _pages(every, cursor, lambda c: client.list_orgs(limit, c))
        show_pages(ctx, client, pages, ORG_COLUMNS, every)


@orgs.command("get")
def orgs_get(
    ctx: typer.Context,
    org_id: Annotated[str, typer.Argument(metavar="ORG")],
    include_users: Annotated[bool, typer.Option(help="With its first users.")] = False,
) -> None:
    """Show an organization."""
    with api(ctx) as client:
        if include_users:
            found = client.get_org_with_users(org_id)
            if ctx.obj.output is Output.json:
                show(ctx, client, found)
                return
            show(ctx, client, found.org)
            show_rows(found.users, USER_COLUMNS, found.next_cursor)
        else:
            show(ctx, client, client.get_org(org_id))


@orgs.command("create")
def orgs_create(
    ctx: typer.Context,
    org_id: Annotated[str, typer.Argument(metavar="ORG")],
    name: Annotated[str, typer.Option(help="Display name.")],
    plan: Annotated[Plan | None, typer.Option()] = None,
    idempotency_key: IdempotencyKey = None,
) -> None:
    """Create an organization (operators)."""
    with api(ctx) as client:
        show(ctx, client, client.create_org(org_id, name, plan, idempotency_key=idempotency_key))


@orgs.command("update")
def orgs_update(
    ctx: typer.Context,
    org_id: Annotated[str, typer.Argument(metavar="ORG")],
    name: Annotated[str | None, typer.Option()] = None,
    plan: Annotated[Plan | None, typer.Option(help="Operators only.")] = None,
    if_match: IfMatch = None,
) -> None:
    """Rename an organization or change its plan."""
    with api(ctx) as client:
        show(ctx, client, client.update_org(org_id, if_match=if_match, **_set(name=name, plan=plan)))


@orgs.command("delete")
def orgs_delete(
    ctx: typer.Context, org_id: Annotated[str, typer.Argument(metavar="ORG")], if_match: IfMatch = None
) -> None:
    """Delete an organization with all its users and tickets (operators)."""
    with api(ctx) as client:
        accepted = client.delete_org(org_id, if_match=if_match)
        show(ctx, client, accepted, done=f"Deleted {org_id}")


@orgs.command("activity")
def orgs_activity(
    ctx: typer.Context,
    org_id: Annotated[str, typer.Argument(metavar="ORG")],
    limit: Limit = None,
    cursor: CursorOption = None,
    every: All = False,
) -> None:
    """Who did what in an organization, newest first (its admins, operators)."""
    with api(ctx) as client:
        pages = _pages(every, cursor, lambda c: client.list_activity(org_id, limit, c))
        show_pages(ctx, client, pages, ACTIVITY_COLUMNS, every)


# Users.


@users.command("list")
def users_list(
    ctx: typer.Context,
    org_id: Annotated[str, typer.Argument(metavar="ORG")],
    limit: Limit = None,
    cursor: CursorOption = None,
    every: All = False,
) -> None:
    """List the users of an organization."""
    with api(ctx) as client:
        pages = _pages(every, cursor, lambda c: client.list_users(org_id, limit, c))
        show_pages(ctx, client, pages, USER_COLUMNS, every)


@users.command("get")
def users_get(
    ctx: typer.Context,
    org_id: Annotated[str, typer.Argument(metavar="ORG")],
    user_id: Annotated[str, typer.Argument(metavar="USER")],
    include_tickets: Annotated[bool, typer.Option(help="With their newest tickets.")] = False,
) -> None:
    """Show a user."""
    with api(ctx) as client:
        if include_tickets:
            found = client.get_user_with_tickets(org_id, user_id)
            if ctx.obj.output is Output.json:
                show(ctx, client, found)
                return
            show(ctx, client, found.user)
            show_rows(found.tickets, TICKET_COLUMNS, found.next_cursor)
        else:
            show(ctx, client, client.get_user(org_id, user_id))


@users.command("create")
def users_create(
    ctx: typer.Context,
    org_id: Annotated[str, typer.Argument(metavar="ORG")],
    user_id: Annotated[str, typer.Argument(metavar="USER")],
    name: Annotated[str, typer.Option()],
    email: Annotated[str, typer.Option()],
    role: Annotated[Role | None, typer.Option()] = None,
    idempotency_key: IdempotencyKey = None,
) -> None:
    """Create a user (in the cloud, Cognito e-mails them an invitation)."""
    with api(ctx) as client:
        user = client.create_user(org_id, user_id, name, email, role, idempotency_key=idempotency_key)
        show(ctx, client, user)


@users.command("update")
def users_update(
    ctx: typer.Context,
    org_id: Annotated[str, typer.Argument(metavar="ORG")],
    user_id: Annotated[str, typer.Argument(metavar="USER")],
    name: Annotated[str | None, typer.Option()] = None,
    email: Annotated[str | None, typer.Option()] = None,
    role: Annotated[Role | None, typer.Option(help="Admins and operators only.")] = None,
    if_match: IfMatch = None,
) -> None:
    """Change a user's name, e-mail or role."""
    with api(ctx) as client:
        changes = _set(name=name, email=email, role=role)
        show(ctx, client, client.update_user(org_id, user_id, if_match=if_match, **changes))


@users.command("delete")
def users_delete(
    ctx: typer.Context,
    org_id: Annotated[str, typer.Argument(metavar="ORG")],
    user_id: Annotated[str, typer.Argument(metavar="USER")],
    if_match: IfMatch = None,
) -> None:
    """Delete a user and all their tickets."""
    with api(ctx) as client:
        client.delete_user(org_id, user_id, if_match=if_match)
        show(ctx, client, None, done=f"Deleted {org_id}/{user_id}")


# Tickets.


@tickets.command("list")
def tickets_list(
    ctx: typer.Context,
    org_id: Annotated[str, typer.Argument(metavar="ORG")],
    user_id: Annotated[str, typer.Argument(metavar="USER")],
    limit: Limit = None,
    cursor: CursorOption = None,
    every: All = False,
) -> None:
    """List a user's tickets, newest first."""
    with api(ctx) as client:
        pages = _pages(every, cursor, lambda c: client.list_tickets(org_id, user_id, limit, c))
        show_pages(ctx, client, pages, TICKET_COLUMNS, every)


@tickets.command("get")
def tickets_get(
    ctx: typer.Context,
    org_id: Annotated[str, typer.Argument(metavar="ORG")],
    ticket_id: Annotated[str, typer.Argument(metavar="TICKET")],
) -> None:
    """Show a ticket."""
    with api(ctx) as client:
        show(ctx, client, client.get_ticket(org_id, ticket_id))


TagOption = Annotated[list[str] | None, typer.Option("--tag", help="Repeat for several tags.")]


@tickets.command("open")
def tickets_open(
    ctx: typer.Context,
    org_id: Annotated[str, typer.Argument(metavar="ORG")],
    user_id: Annotated[str, typer.Argument(metavar="USER")],
    subject: Annotated[str, typer.Option()],
    description: Annotated[str | None, typer.Option()] = None,
    priority: Annotated[Priority | None, typer.Option()] = None,
    tag: TagOption = None,
    idempotency_key: IdempotencyKey = None,
) -> None:
    """Open a ticket for a user."""
    with api(ctx) as client:
        fields = _set(description=description, priority=priority, tags=tag or None)
        show(ctx, client, client.create_ticket(org_id, user_id, subject, idempotency_key=idempotency_key, **fields))


@tickets.command("update")
def tickets_update(
    ctx: typer.Context,
    org_id: Annotated[str, typer.Argument(metavar="ORG")],
    ticket_id: Annotated[str, typer.Argument(metavar="TICKET")],
    subject: Annotated[str | None, typer.Option()] = None,
    description: Annotated[str | None, typer.Option()] = None,
    status: Annotated[Status | None, typer.Option()] = None,
    priority: Annotated[Priority | None, typer.Option()] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Replaces the tags; repeat for several.")] = None,
    clear_tags: Annotated[bool, typer.Option(help="Remove every tag.")] = False,
    if_match: IfMatch = None,
) -> None:
    """Change a ticket."""
    if tag and clear_tags:
        raise usage_error("--tag and --clear-tags exclude each other")
    with api(ctx) as client:
        changes = _set(subject=subject, description=description, status=status, priority=priority, tags=tag or None)
        if clear_tags:
            changes["tags"] = []
        show(ctx, client, client.update_ticket(org_id, ticket_id, if_match=if_match, **changes))


@tickets.command("delete")
def tickets_delete(
    ctx: typer.Context,
    org_id: Annotated[str, typer.Argument(metavar="ORG")],
    ticket_id: Annotated[str, typer.Argument(metavar="TICKET")],
    if_match: IfMatch = None,
) -> None:
    """Delete a ticket."""
    with api(ctx) as client:
        client.delete_ticket(org_id, ticket_id, if_match=if_match)
        show(ctx, client, None, done=f"Deleted ticket {ticket_id}")


# Signing in.

LocalRole = StrEnum("LocalRole", {name: name for name in ("operator", "admin", "member")})


@app.command("login")
def login(
    local: Annotated[bool, typer.Option("--local", help="A token for `make run`, from the development key.")] = False,
    org: Annotated[str | None, typer.Option(help="--local: the org of an admin or member.")] = None,
    user: Annotated[str | None, typer.Option(help="--local: the user_id of an admin or member.")] = None,
    role: Annotated[LocalRole, typer.Option(help="--local: who the token names.")] = LocalRole.operator,
    username: Annotated[
        str | None, typer.Option(help="Cognito: the username (<org>.<user>, or an operator's).")
    ] = None,
    password: Annotated[
        str | None, typer.Option(envvar="CPCTL_PASSWORD", help="Cognito: prompted if not given.")
    ] = None,
    client_id: Annotated[
        str | None, typer.Option(envvar="CPCTL_CLIENT_ID", help="Cognito: the stack's UserPoolClientId.")
    ] = None,
    user_pool_id: Annotated[
        str | None,
        typer.Option(envvar="CPCTL_USER_POOL_ID", help="Cognito: with it, ADMIN_USER_PASSWORD_AUTH (AWS credentials)."),
    ] = None,
    region: Annotated[str | None, typer.Option(help="Cognito: the pool's region (default: from the pool id).")] = None,
    new_password: Annotated[str | None, typer.Option(help="Cognito: answer NEW_PASSWORD_REQUIRED with this.")] = None,
) -> None:
    """Get an ID token and store it for the next commands (readable by you only)."""
    if local:
        if role is not LocalRole.operator and not (org and user):
            raise usage_error(f"a local {role} needs --org and --user")
        token = credentials.local_token(role.value, org, user)
        who = "an operator" if role is LocalRole.operator else f"{role} {user} of {org}"
    else:
        if not (username and client_id):
            raise usage_error("pass --local, or --username and --client-id (and --user-pool-id) for Cognito")
        password = password or typer.prompt("Password", hide_input=True)
        try:
            token = credentials.cognito_token(username, password, client_id, user_pool_id, region, new_password)
        except credentials.SignInError as error:
            typer.echo(f"Error: sign-in failed: {error}", err=True)
            raise typer.Exit(1) from None
        who = username
    path = credentials.save_token(token)
    typer.echo(f"Signed in as {who}; token stored in {path}", err=True)


@app.command("logout")
def logout() -> None:
    """Forget the stored token."""
    removed = credentials.forget_token()
    typer.echo("Token removed" if removed else "No token was stored", err=True)


def run() -> None:
    app(prog_name="cpctl")


if __name__ == "__main__":
    run()
