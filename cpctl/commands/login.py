"""``cpctl login`` and ``cpctl logout``: get an ID token and store it, or forget it (``cpctl.credentials``)."""

from enum import StrEnum
from typing import Annotated

import typer

from cpctl import credentials
from cpctl.commands.common import asking, usage_error
from cpctl.output import complain

LocalRole = StrEnum("LocalRole", {name: name for name in ("operator", "admin", "member")})


def login(
    ctx: typer.Context,
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
        if bool(org) != bool(user):  # not an operator's token, with every right
            raise usage_error("a user's token names both --org and --user; an operator's, neither")
        try:
            token = credentials.local_token(role.value, org, user, ctx.obj.url)
        except LookupError as error:
            complain(f"Error: {error}")
            raise typer.Exit(1) from None
        # A user's role is the one their item holds, whatever --role asked for.
        who = f"{credentials.role_of(token) or role} {user} of {org}" if org and user else "an operator"
    else:
        if not (username and client_id):
            raise usage_error("pass --local, or --username and --client-id (and --user-pool-id) for Cognito")
        with asking("Not signed in."):
            password = password or typer.prompt("Password", hide_input=True)
        try:
            token = credentials.cognito_token(username, password, client_id, user_pool_id, region, new_password)
        except credentials.SignInError as error:
            complain(f"Error: sign-in failed: {error}")
            raise typer.Exit(1) from None
        who = username
    path = credentials.save_token(token)
    typer.echo(f"Signed in as {who}; token stored in {path}", err=True)


def logout() -> None:
    """Forget the stored token."""
    removed = credentials.forget_token()
    typer.echo("Token removed" if removed else "No token was stored", err=True)
