"""What every command shares: the global options, the client a command runs with, and the options
several commands take.

A command runs in ``with api(ctx) as client:``: the API's refusals and an unreachable API end it with
exit code 1, a body the API's models reject (never sent) with exit code 2, as a wrong option does.
"""

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Annotated, Any, get_args

import httpx
import pydantic
import typer

from controlplane.models.resources import Page, Plan, Priority, Role, Status
from cpctl import credentials, failures, output
from cpctl.client import Client
from cpctl.errors import ApiError, Interrupted, UnexpectedAnswer

USAGE_ERROR = 2
STILL_RUNNING = 3  # a job cpctl followed (an import) outlasted its --wait, and goes on without it
INTERRUPTED = 130  # Ctrl-C, as a shell reports a command SIGINT ended


@dataclass
class Settings:
    """The global options (``cpctl --url ... --token ... --output ... --timeout ...``), in ``ctx.obj``."""

    url: str
    token: str | None
    output: output.Output
    timeout: float


Output = output.Output


def usage_error(message: str) -> typer.Exit:
    """Exit code 2, as for a wrong option: the request was never sent."""
    failures.show_usage_error(message)
    return typer.Exit(USAGE_ERROR)


@contextmanager
def api(ctx: typer.Context) -> Iterator[Client]:
    settings: Settings = ctx.obj
    token = settings.token or credentials.load_token()
    if not token:
        raise usage_error("No token: pass --token, set CONTROLPLANE_TOKEN, or run `cpctl login`.")
    client = Client(_checked_url(settings.url), token, timeout=settings.timeout)
    try:
        yield client
    except ApiError as error:
        failures.show_refusal(settings.url, token, settings.output, error)
        raise typer.Exit(1) from None
    except UnexpectedAnswer as error:
        failures.show_unexpected(settings.url, error)
        raise typer.Exit(1) from None
    except pydantic.ValidationError as error:
        raise usage_error(f"the request is not valid:\n{failures.invalid_body(error)}") from None
    except httpx.TransportError as error:
        failures.show_unreachable(settings.url, error, settings.timeout)
        raise typer.Exit(1) from None
    except Interrupted as stopped:  # Ctrl-C during a change: exit 130, as any Ctrl-C, saying what may be made
        failures.show_interrupted(stopped)
        raise typer.Exit(INTERRUPTED) from None
    finally:
        client.close()


def _checked_url(url: str) -> str:
    """The API's URL, if it is one: a typo in --url (or CONTROLPLANE_URL) is a usage error that
    names it, not a traceback or a connection error."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as error:
        raise usage_error(f"the API's URL {url!r} is not valid: {error}") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise usage_error(f"the API's URL {url!r} is not an http:// or https:// URL with a host")
    return url


def changed(**fields: Any) -> dict[str, Any]:
    """The options the user gave: a PATCH changes only those."""
    return {name: value for name, value in fields.items() if value is not None}


def pages(every: bool, cursor: str | None, fetch: Callable[[str | None], Page]) -> Iterator[Page]:
    """The page at ``cursor``, or with ``every`` it and all after it."""
    return Client.pages(fetch, cursor) if every else iter([fetch(cursor)])


def header_value(param: typer.CallbackParam, value: str | None) -> str | None:
    """An option sent as an HTTP header (a token, an ETag, a key) is plain ASCII text: one pasted with
    "smart" quotes (“3”) or an ellipsis is a usage error that names it, not a traceback. The
    value is not repeated: it may be a token."""
    wrong = next((char for char in value or "" if not (char.isascii() and char.isprintable())), None)
    if wrong is not None:
        raise typer.BadParameter(f"an HTTP header cannot carry {wrong!r}: type it in plain ASCII", param=param)
    return value


# Options and arguments several commands take.


def an_id(param: typer.CallbackParam, value: str) -> str:
    """An id is never empty: an empty one (``"$USER_ID"`` unset) would leave its segment out of the
    path, which then names another route (``GET /orgs/acme/users/`` lists the users) whose answer
    cpctl would misread."""
    if not value:
        raise typer.BadParameter("is empty (an unset shell variable?)", param=param)
    return value


OrgArgument = Annotated[str, typer.Argument(metavar="ORG", callback=an_id, help="The organization's id, e.g. acme.")]
UserArgument = Annotated[
    str, typer.Argument(metavar="USER", callback=an_id, help="The user's id in the organization, e.g. alice.")
]
UnitArgument = Annotated[
    str, typer.Argument(metavar="UNIT", callback=an_id, help="The unit's id in the organization, e.g. eng.")
]
TicketArgument = Annotated[
    str,
    typer.Argument(
        metavar="TICKET", callback=an_id, help="The ticket's id, as listed, e.g. 01JD3Q0Z6V7S3M8E2K9XWQY4PB."
    ),
]
Limit = Annotated[int | None, typer.Option(min=1, max=100, help="Page size (the API's default: 20).")]
CursorOption = Annotated[str | None, typer.Option(help="`next_cursor` of the previous page.")]
All = Annotated[bool, typer.Option("--all", help="Every page, from --cursor on; --limit is then the page size.")]


def an_etag(param: typer.CallbackParam, value: str | None) -> str | None:
    """An If-Match given is never empty (``"$ETAG"`` unset): a proxy may drop an empty header, and the
    change would then apply whatever the version."""
    if value == "":
        raise typer.BadParameter("is empty (an unset shell variable?)", param=param)
    return header_value(param, value)


IfMatch = Annotated[
    str | None, typer.Option(callback=an_etag, help='Only if the resource still has this ETag, e.g. "3".')
]


def a_key(param: typer.CallbackParam, value: str | None) -> str | None:
    """An Idempotency-Key given is never empty (``"$KEY"`` unset): the client refuses one, rather
    than send a new key that would make a retried create twice."""
    if value == "":
        raise typer.BadParameter("is empty (an unset shell variable?)", param=param)
    return header_value(param, value)


IdempotencyKey = Annotated[
    str | None,
    typer.Option(callback=a_key, help="Reuse a key to make a retried create safe; default: a new one per call."),
]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Delete without asking.")]


def one_of(choices: Any) -> str:
    """A Literal's values, for a help text: in words, so that a wrapped line never splits one."""
    values = [str(value) for value in get_args(choices)]
    return ", ".join(values[:-1]) + f" or {values[-1]}" if len(values) > 1 else "".join(values)


PlanOption = Annotated[
    Plan | None, typer.Option(show_choices=False, help=f"{one_of(Plan)}. On an update, operators only.")
]
RoleOption = Annotated[Role | None, typer.Option(show_choices=False, help=f"{one_of(Role)}.")]
StatusOption = Annotated[Status | None, typer.Option(show_choices=False, help=f"{one_of(Status)}.")]
PriorityOption = Annotated[Priority | None, typer.Option(show_choices=False, help=f"{one_of(Priority)}.")]


def confirm(yes: bool, question: str, done: str = "deleted") -> None:
    """A delete (or a suspension) goes ahead with ``--yes``, or when the person at the terminal says
    so. Without a terminal to ask on, and without ``--yes``, nothing changes: exit code 2, as a usage
    error; Ctrl-C at the question changes nothing either: exit code 130."""
    if yes:
        return
    if not terminal():
        raise usage_error(f"nothing {done}: there is no terminal to ask on, so pass --yes to confirm")
    with asking(f"Nothing {done}."):
        agreed = typer.confirm(question, default=False)
    if not agreed:
        output.complain(f"Nothing {done}.")
        raise typer.Exit(1)


@contextmanager
def asking(unchanged: str) -> Iterator[None]:
    """A question on the terminal, which click's prompt ends on Ctrl-C with Abort ("Aborted.", exit
    1, a refusal's code): ``unchanged`` is said instead, and the exit code is 130, as any Ctrl-C's.
    Ctrl-D there stays Abort."""
    try:
        yield
    except typer.Abort as stopped:
        if not isinstance(stopped.__context__, KeyboardInterrupt):
            raise
        output.complain(f"\n{unchanged}")
        raise typer.Exit(INTERRUPTED) from None


def terminal() -> bool:
    return sys.stdin.isatty()
