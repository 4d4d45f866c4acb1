"""What ``cpctl`` prints: on stdout the answer (the API's JSON as sent, or a table), on stderr the
rest (paging hints, the progress of ``--all``, errors), so that stdout stays the data."""

import sys
from collections.abc import Iterator
from enum import StrEnum
from typing import Any

import httpx
import pydantic
import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn
from rich.table import Table

from controlplane.models.resources import Page
from cpctl.client import Client
from cpctl.errors import ApiError

# The columns of each resource's list table.
ORG_COLUMNS = ("org_id", "name", "plan", "status", "version", "updated_at")
ACTIVITY_COLUMNS = ("occurred_at", "type", "actor", "resource", "changes")
USER_COLUMNS = ("user_id", "name", "email", "role", "version")
TICKET_COLUMNS = ("ticket_id", "user_id", "status", "priority", "subject", "tags")


class Output(StrEnum):
    table = "table"
    json = "json"


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


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


# Errors, on stderr.


def show_throttled(error: ApiError) -> None:
    wait = error.headers.get("Retry-After", "a few")
    typer.echo(f"Error: throttled: {error.message}. Still refused after retrying; try again in {wait} s.", err=True)


def show_api_error(output: Output, error: ApiError) -> None:
    """The API's refusal: its error JSON as sent (json), or one line with its code and request id."""
    if output is Output.json and error.body:
        typer.echo(error.body, err=True)
    else:
        typer.echo(
            f"Error: {error.code}: {error.message} (status {error.status}, request {error.request_id})", err=True
        )


def show_unreachable(url: str, error: httpx.TransportError) -> None:
    typer.echo(f"Error: cannot reach {url}: {error}. Is the API running (make run)?", err=True)


def show_usage_error(message: str) -> None:
    typer.echo(f"Usage error: {message}", err=True)


def invalid_body(error: pydantic.ValidationError) -> str:
    """The problems the API's models found in a body, as one line (it is never sent)."""
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in error.errors())
