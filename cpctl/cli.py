"""``cpctl``: the control-plane API from a terminal or a CI job.

    cpctl [--url URL] [--token TOKEN] [--output table|json] [--timeout SECONDS] COMMAND ...

Exit codes: 0 done, 1 the API refused (its error code on stderr) or could not be reached,
2 usage error (including a body the API's models reject before it is sent), 3 an import still
running when its --wait is over (``cpctl.commands.imports``).

A command group is a module of ``cpctl.commands`` with its own ``app``, added here; what the
commands print is ``cpctl.output``.
"""

from typing import Annotated, Any

import click
import typer
from typer.core import TyperGroup, TyperOption

from cpctl import endpoints, output, retries
from cpctl.commands import login, orgs, tickets, units, users
from cpctl.commands.common import Settings, header_value
from cpctl.output import Output

_display_type = TyperOption.display_type_rich


def _no_type_on_flags(option: TyperOption, ctx: click.Context) -> str | None:
    """A flag takes no value, so its help shows none: no ``<bool>`` beside ``--all`` or ``--yes``."""
    return None if option.is_flag else _display_type(option, ctx)


TyperOption.display_type_rich = _no_type_on_flags  # type: ignore[method-assign]


class _Cpctl(TyperGroup):
    def invoke(self, ctx: click.Context) -> Any:
        """A reader that stops early (``cpctl ... | head -1``) ends cpctl quietly, with exit code 0,
        as ``head`` ending a pipe is no failure: no traceback, no message (click's own is exit 1)."""
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            output.reader_gone()
            raise typer.Exit(0) from None


app = typer.Typer(
    cls=_Cpctl,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,  # locals hold the token
    help="Manage organizations, their units, users and tickets of the control-plane API.",
)
app.add_typer(orgs.app, name="orgs")
app.add_typer(users.app, name="users")
app.add_typer(tickets.app, name="tickets")
app.add_typer(units.app, name="units")
app.command("login")(login.login)
app.command("logout")(login.logout)


@app.callback()
def main(
    ctx: typer.Context,
    url: Annotated[
        str | None,
        typer.Option(
            envvar="CONTROLPLANE_URL",
            help="The API's base URL; default: the running `make run`'s, whatever its PORT, else http://127.0.0.1:3000.",
            show_default=False,
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="CONTROLPLANE_TOKEN",
            callback=header_value,
            help="An ID token; default: the one `cpctl login` stored.",
        ),
    ] = None,
    output: Annotated[Output, typer.Option("--output", "-o", help="json: the API's JSON, as sent.")] = Output.table,
    timeout: Annotated[
        float,
        typer.Option(
            envvar="CONTROLPLANE_TIMEOUT",
            min=1,
            metavar="SECONDS",
            help="The most one request may take, its retries included; then cpctl gives up (exit 1).",
        ),
    ] = retries.TOTAL_SECONDS,
) -> None:
    ctx.obj = Settings(url=endpoints.api_url(url), token=token, output=output, timeout=timeout)


def run() -> None:
    app(prog_name="cpctl")


if __name__ == "__main__":
    run()
