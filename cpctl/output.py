"""What ``cpctl`` prints: on stdout the answer (the API's JSON as sent, or a table), on stderr the
rest (paging hints, the progress of ``--all``; errors: ``cpctl.failures``), so that stdout stays
the data."""

import errno
import os
import shlex
import sys
from collections.abc import Iterator
from contextlib import suppress
from enum import StrEnum
from typing import Any

import pydantic
import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn
from rich.table import Table

from controlplane.models.resources import Page
from cpctl.client import Client

# The columns of each resource's list table. ``users``: an org's seats used, of its limit (the
# listing has no seats used: "max <limit>").
ORG_COLUMNS = ("org_id", "name", "plan", "status", "users", "version", "updated_at")
ACTIVITY_COLUMNS = ("occurred_at", "type", "actor", "resource", "changes")
USER_COLUMNS = ("user_id", "name", "email", "role", "unit", "version")
UNIT_COLUMNS = ("unit_id", "name", "path", "version")
TICKET_COLUMNS = ("ticket_id", "user_id", "status", "priority", "subject", "tags")
# What a list of each is called when it is empty: "No users."
NAMES = {
    ORG_COLUMNS: "organizations",
    ACTIVITY_COLUMNS: "activity",
    USER_COLUMNS: "users",
    UNIT_COLUMNS: "units",
    TICKET_COLUMNS: "tickets",
}


IDS = ("org_id", "user_id", "ticket_id", "unit_id")  # never cut: the next command takes them
# Also never cut: who made a change and what it changed (their ids), and timestamps (``*_at``).
WHOLE = (*IDS, "actor", "resource")
# The narrowest a wrapping column gets; when the whole columns leave less, each row is listed as a record.
MIN_WRAPPED = 10


class Output(StrEnum):
    table = "table"
    json = "json"


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """The reader went away (``| head -1``): the same BrokenPipeError cpctl's root command
        ends quietly on (``cpctl.cli``), not rich's own exit code 1."""
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))


def new_console(**options: Any) -> Console:
    """The console every table, tree and progress bar of cpctl is printed through."""
    return _Console(**options)


def reader_gone() -> None:
    """Whatever is still to be written goes nowhere: stdout's and stderr's descriptors onto
    /dev/null, so that what Python holds for them is flushed there at exit, not reported as another
    broken pipe (and exit code 120). cpctl says nothing more once its reader is gone."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a stream without a descriptor (a test runner's) holds nothing
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


def complain(line: str) -> None:
    """A line on stderr of a command about to fail: a reader gone from stderr (``2>&1 | head``)
    leaves the command's exit code as it is, where any other broken pipe ends cpctl with 0."""
    try:
        typer.echo(line, err=True)
    except BrokenPipeError:
        reader_gone()


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
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")
    for name, value in detail_rows(item.model_dump(mode="json")):
        table.add_row(name, value)
    new_console(markup=False).print(table)


def detail_rows(values: dict[str, Any]) -> list[tuple[str, str]]:
    """A resource as (field, text) rows: its ids and name first, seats as "3 of 5", no empty fields."""
    values = _readable(values)
    first = [name for name in (*IDS, "name", "subject") if name in values]
    ordered = first + [name for name in values if name not in first]
    return [(name, _cell(values[name])) for name in ordered if values[name] not in (None, "", [], {})]


def _readable(values: dict[str, Any]) -> dict[str, Any]:
    """An org's ``usage`` and ``limits`` as one ``users`` value: what a person reads as seats; an
    activity entry's changes as ``plan: free → pro``, as the console shows them."""
    values = _listed(values)
    changes = values.get("changes")
    if isinstance(changes, dict):
        values = values | {"changes": ", ".join(_change(name, change) for name, change in changes.items())}
    usage, limits = values.get("usage"), values.get("limits")
    if not (isinstance(usage, dict) and isinstance(limits, dict)):
        return values
    readable = {name: value for name, value in values.items() if name not in ("usage", "limits")}
    for quota, limit in limits.items():
        used = usage.get(quota)
        readable[quota] = f"{'?' if used is None else used} of {limit}"
    return readable


def _change(name: str, change: Any) -> str:
    if not (isinstance(change, dict) and change.keys() <= {"old", "new"}):
        return f"{name}: {_cell(change)}"
    old, new = (_cell(change.get(side)) or "none" for side in ("old", "new"))
    return f"{name}: {old} → {new}"


def _listed(values: dict[str, Any]) -> dict[str, Any]:
    """An org as ``GET /orgs`` lists it (no ``usage``): its limits as "max <n>"."""
    limits = values.get("limits")
    if "usage" in values or not isinstance(limits, dict):
        return values
    readable = {name: value for name, value in values.items() if name != "limits"}
    for quota, limit in limits.items():
        readable[quota] = f"max {limit}"
    return readable


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
        console=new_console(stderr=True),
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
        show_rows(rows, columns, next_page(ctx, cursor))


def show_rows(rows: list[pydantic.BaseModel], columns: tuple[str, ...], more: str | None) -> None:
    """A table of ``rows``; ``more``: the command that shows the next page, if there is one.
    Identifiers and timestamps are never cut, at any width: the ids are what the next command takes.
    The other columns wrap instead; where that would leave them too narrow, each row is shown as a
    record, a field a line. No rows: nothing on stdout (no header: there is no data), and on
    stderr a line that says so, as ``none(name)``."""
    if not rows:
        none(NAMES[columns], more)
        return
    found = [_readable(row.model_dump(mode="json")) for row in rows]
    console = new_console(markup=False)  # the values are anyone's text: "[core]" in a name is not a style
    widest = {column: max([len(column), *(len(_cell(values[column])) for values in found)]) for column in columns}
    needed = sum(widest[c] if _whole(c) else min(widest[c], MIN_WRAPPED) for c in columns) + _spacing(len(columns))
    if needed > console.width:
        for i, values in enumerate(found):
            if i:
                console.print()
            console.print(_record(values, columns))
    else:
        table = _table()
        for column in columns:
            if _whole(column):
                table.add_column(column, no_wrap=True, min_width=widest[column])
            else:
                table.add_column(column, overflow="fold")
        for values in found:
            table.add_row(*(_cell(values[column]) for column in columns))
        console.print(table)
    if more:
        typer.echo(f"More: {more}", err=True)


def none(name: str, more: str | None = None) -> None:
    """An empty list, said on stderr (stdout stays the data: none): "No users.", or, on a page
    with a next one (``more``), "No users on this page." and the command that shows the next."""
    typer.echo(f"No {name}{' on this page' if more else ''}.", err=True)
    if more:
        typer.echo(f"More: {more}", err=True)


def _table() -> Table:
    """A list's table: no borders, two spaces between columns, so that the cells get the width."""
    return Table(box=None, pad_edge=False, padding=(0, 2, 0, 0))


def _spacing(columns: int) -> int:
    """What the table's padding and rules take of a line, besides its cells: measured, not assumed."""
    probe = _table()
    for _ in range(columns):
        probe.add_column(no_wrap=True)
    probe.add_row(*("x" * columns))
    return new_console(width=1000).measure(probe).maximum - columns


def _whole(column: str) -> bool:
    return column in WHOLE or column.endswith("_at")


def _record(values: dict[str, Any], columns: tuple[str, ...]) -> Table:
    """A row too wide for a table's line, as a field a line."""
    record = Table(show_header=False, box=None, pad_edge=False)
    record.add_column(no_wrap=True, style="bold")
    record.add_column(overflow="fold")
    for column in columns:
        record.add_row(column, _cell(values[column]))
    return record


def next_page(ctx: typer.Context, cursor: str | None, command: str | None = None) -> str | None:
    """The command that shows the page after this one: this list command (or ``command``, the list
    a ``get --include-...`` continues in), its arguments, the options that narrow it, its ``--limit``,
    and ``--cursor``."""
    if not cursor:
        return None
    if command is not None:
        command = command.replace("cpctl", _cpctl(ctx), 1)
    else:
        arguments = [str(ctx.params[p.name]) for p in ctx.command.params if p.param_type_name == "argument" and p.name]
        # And the options that narrow the list (--under, --direct): the cursor continues only that list.
        options: list[str] = []
        for p in ctx.command.params:
            value = ctx.params.get(p.name) if p.name not in (None, "limit", "cursor", "every") else None
            if p.param_type_name == "option" and value not in (None, False):
                options += [p.opts[0]] if value is True else [p.opts[0], str(value)]
        command = " ".join([_cpctl(ctx), *ctx.command_path.split()[1:], *arguments, *options])  # as typed
    limit = ctx.params.get("limit")
    return f"{command}{f' --limit {limit}' if limit else ''} --cursor {cursor}  (or --all for every page)"


def _cpctl(ctx: typer.Context) -> str:
    """``cpctl``, with the ``--url`` it was given: a cursor goes on only at the API that signed it.
    Not ``--token`` (a secret on the screen); a URL from the environment still holds for the next."""
    root = ctx.find_root()
    source = root.get_parameter_source("url")  # Typer's own click's enum: compared by name
    if source is None or source.name != "COMMANDLINE":
        return "cpctl"
    return f"cpctl --url {shlex.quote(root.params['url'])}"


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(map(str, value))
    if isinstance(value, dict):
        return ", ".join(f"{name} {_cell(item)}" for name, item in value.items() if item is not None)
    return str(value)
