"""``cpctl users import``: send a CSV or JSON file of users as one import, follow the job with a
progress bar, then print a summary and every refused row (and every failed sign-in).
``cpctl users import-status`` shows an import again, or follows it on.

An import whose job outlasts ``--wait`` goes on without cpctl: it says so, with the command that
shows it later, and exits ``STILL_RUNNING`` (3), as it does when interrupted (130)."""

import csv
import io
import json
import time
import unicodedata
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from controlplane.models.imports import UserImport
from cpctl.client import Client
from cpctl.commands.common import INTERRUPTED, STILL_RUNNING, IdempotencyKey, OrgArgument, an_id, api, usage_error
from cpctl.errors import NotFound
from cpctl.output import Output, complain, new_console, reader_gone

POLL_SECONDS = 1.0
# A 10,000-row import makes its sign-ins at 10 a second (about 17 minutes), and retries a failed one
# a minute later, 3 times: half an hour holds it.
WAIT_SECONDS = 1800
FileArgument = Annotated[
    Path,
    typer.Argument(
        metavar="FILE",
        exists=True,
        dir_okay=False,
        help="A .csv with a header row (user_id,name,email[,role][,unit]), or a .json list of such objects.",
    ),
]


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The file's rows as the API takes them; an empty CSV cell is left out (``role`` then defaults).
    The file is UTF-8, with or without the byte-order mark a spreadsheet's "CSV UTF-8" starts with;
    a file cpctl cannot read is a usage error that names the file, never a traceback."""
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".json"):
        raise usage_error(f"{path}: not a .csv or .json file")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise usage_error(f"{path}: not UTF-8 text (byte {error.start}); save it as UTF-8 (CSV UTF-8)") from None
    if not text.strip():
        raise usage_error(f"{path}: the file is empty")
    if suffix == ".json":
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as error:
            raise usage_error(f"{path}: not JSON: {error.msg} (line {error.lineno}, column {error.colno})") from None
        rows = rows.get("rows") if isinstance(rows, dict) else rows
        if not isinstance(rows, list):
            raise usage_error(f'{path}: expected a list of users, or {{"rows": [...]}}')
        return rows
    try:
        return _csv_rows(path, io.StringIO(text, newline=""))
    except csv.Error as error:
        raise usage_error(f"{path}: not a CSV file: {error}") from None


def _csv_rows(path: Path, lines: TextIO) -> list[dict[str, Any]]:
    """A spreadsheet's CSV as typed: the header's names in any case and with spaces around them, each
    cell without the spaces around it, and a line of empty cells (or none) skipped. A line with a
    cell where the header names no column (past its end, or under an empty name) is refused with its
    line, as the header without ``user_id``: an unquoted comma shifts the cells, and that one would
    be dropped without a word."""
    reader = csv.reader(lines)
    header = [name.strip().lower() for name in next(reader, [])]
    if "user_id" not in header:
        raise usage_error(f"{path}: the first line names no user_id column (user_id,name,email[,role][,unit])")
    rows = []
    for cells in reader:
        cells = [cell.strip() for cell in cells]
        if not any(cells):
            continue
        names = (header + [""] * len(cells))[: len(cells)]
        if any(cell and not name for name, cell in zip(names, cells, strict=True)):  # a cell no name takes
            raise usage_error(
                f"{path}, line {reader.line_num}: {len(cells)} cells, the header names {sum(map(bool, header))}"
            )
        rows.append({name: value for name, value in zip(header, cells, strict=False) if name and value})
    return rows


ImportWait = Annotated[
    float,
    typer.Option(
        min=0,
        metavar="SECONDS",
        help="Follow the import at most this long (half an hour); then it goes on without cpctl (exit 3).",
    ),
]
StatusWait = Annotated[
    float,
    typer.Option(
        min=0,
        metavar="SECONDS",
        help="Follow the import at most this long (0: show it as it is); exit 3 if it still runs.",
    ),
]


def users_import(
    ctx: typer.Context,
    org_id: OrgArgument,
    file: FileArgument,
    wait: ImportWait = WAIT_SECONDS,
    idempotency_key: IdempotencyKey = None,
) -> None:
    """Import up to 10,000 users from a CSV or JSON file, as seats allow; print every refused row."""
    rows = read_rows(file)
    with api(ctx) as client:
        report(ctx, follow(client, client.import_users(org_id, rows, idempotency_key=idempotency_key), wait))


def import_status(
    ctx: typer.Context,
    org_id: OrgArgument,
    import_id: Annotated[
        str, typer.Argument(metavar="IMPORT", callback=an_id, help="The import's id, as `users import` said.")
    ],
    wait: StatusWait = 0,
) -> None:
    """Show an import (how far it got, or its refused rows), or follow it on with --wait."""
    with api(ctx) as client:
        report(ctx, follow(client, client.get_user_import(org_id, import_id), wait, created=False))


def report(ctx: typer.Context, found: UserImport) -> None:
    """The import as it stands; exit 1 if a row was refused or a sign-in failed, 3 if it still runs,
    even when the reader stops early (``| head -1``): its outcome, not the pipe's, decides."""
    try:
        if ctx.obj.output is Output.json:
            typer.echo(found.model_dump_json())
        else:
            summarize(found)
    except BrokenPipeError:
        reader_gone()
    if found.status == "running":
        still_running(found)
        raise typer.Exit(STILL_RUNNING)
    if found.refused or found.sign_ins.failed:  # in either output: a script's `&&` must not take it as whole
        raise typer.Exit(1)


def still_running(found: UserImport) -> None:
    complain(
        f"Import {found.import_id} is still running; it goes on without cpctl. See it later with: "
        f"cpctl users import-status {found.org_id} {found.import_id} (--wait SECONDS to follow it)"
    )


def follow(client: Client, started: UserImport, wait: float, *, created: bool = True) -> UserImport:
    """Poll the import until it is done or ``wait`` seconds have passed, with a progress bar on
    stderr (on a terminal). Interrupted, or a poll failing, it says the import goes on, and how to see it.
    ``started`` is the create's answer (``created``) or a read's: after a read that found it, a 404 is
    no lag but the import gone."""
    found = started
    deadline = time.monotonic() + wait
    progress = Progress(
        TextColumn("importing"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
        console=new_console(stderr=True), transient=True,
    )  # fmt: skip
    try:
        with progress:
            task = progress.add_task("", total=found.total)
            while True:
                decided = found.total - found.pending
                signing = f"sign-ins {found.sign_ins.done} done, {found.sign_ins.pending} to go"
                progress.update(task, completed=decided, description=signing)
                left = deadline - time.monotonic()
                if found.status != "running" or left <= 0:
                    return found
                time.sleep(min(POLL_SECONDS, left))
                try:
                    found = client.get_user_import(found.org_id, found.import_id)
                except NotFound:
                    # On AWS a read just after the import's create may not find it yet (reads lag
                    # writes, docs/API.md): until one has, a 404 is that lag, so poll again.
                    if found is not started or not created:
                        raise
    except KeyboardInterrupt:
        still_running(found)
        raise typer.Exit(INTERRUPTED) from None
    except Exception:  # a poll failed (the token ended, the API is down...): its error follows, and the import goes on
        still_running(found)
        raise


def summarize(found: UserImport) -> None:
    console = new_console(markup=False)  # the rows are the file's text: "[x]" in one is not a style
    if found.status == "running":
        console.print(
            f"Import {found.import_id}: running, {found.total - found.pending} of {found.total} rows decided\n"
            f"  {_counted(found.created, 'user')} created, {_counted(len(found.refused), 'row')} refused so far\n"
            f"  sign-ins: {found.sign_ins.done} created, {found.sign_ins.pending} to go"
        )
        return
    done = found
    console.print(
        f"Import {done.import_id}: {done.created} of {done.total} users created, "
        f"{_counted(len(done.refused), 'row')} refused\n"
        f"  sign-ins: {done.sign_ins.done} created, {len(done.sign_ins.failed)} failed"
    )
    if done.refused:
        table = Table("row", "user_id", "code", "message", title="Refused rows")
        for row in done.refused:
            table.add_row(str(row.row), _spelled(row.user_id), row.code, _spelled(row.message))
        console.print(table)
    if done.sign_ins.failed:
        table = Table("user_id", "attempts", "reason", title="Failed sign-ins (the user exists; the job retried)")
        for failed in done.sign_ins.failed:
            table.add_row(_spelled(failed.user_id), str(failed.attempts), _spelled(failed.reason))
        console.print(table)


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _spelled(text: str | None) -> str:
    """A refused row's text (the file's id, the API's words, which may quote the file) with each
    control character spelled out (``\\x1b``): sent raw, an escape sequence from the file would
    recolour, retitle or clear the terminal, or hide the summary above it."""
    return "".join(repr(char)[1:-1] if unicodedata.category(char) == "Cc" else char for char in text or "")
