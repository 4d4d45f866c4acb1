"""``cpctl units``: an organization's tree of units, and the people in each."""

from typing import Annotated

import typer
from rich.markup import escape
from rich.tree import Tree

from controlplane.models.units import ROOT, Unit
from cpctl.client import Client
from cpctl.commands.common import (
    All,
    CursorOption,
    IdempotencyKey,
    IfMatch,
    Limit,
    OrgArgument,
    UnitArgument,
    Yes,
    an_id,
    api,
    changed,
    confirm,
    pages,
)
from cpctl.errors import Conflict
from cpctl.output import UNIT_COLUMNS, USER_COLUMNS, Output, new_console, none, show, show_pages

app = typer.Typer(no_args_is_help=True, help="An organization's tree of units (teams), and their people.")


def a_unit(param: typer.CallbackParam, value: str | None) -> str | None:
    """An ``--under`` given is never empty (``"$UNIT"`` unset): a usage error, as an empty id is."""
    return None if value is None else an_id(param, value)


Under = Annotated[str | None, typer.Option(callback=a_unit, help="Only this unit and the units below it.")]
Parent = Annotated[str | None, typer.Option("--parent", help="The parent unit's id; default: the root.")]


@app.command("tree")
def units_tree(ctx: typer.Context, org_id: OrgArgument, under: Under = None) -> None:
    """Show the units as a tree (every page)."""
    with api(ctx) as client:
        found = _every_unit(client, org_id, under)
        if ctx.obj.output is Output.json:  # a unit a line: none, no line
            for unit in found:
                typer.echo(unit.model_dump_json())
            return
        if not found:
            none("units")
            return
        tree, width = tree_of(_top(org_id, under, found), found)
        # Ids are never cut (the next command takes them), however deep: a line that cannot hold its
        # indent, its id and a little of its name at the terminal's width (80 in a pipe) gets wider.
        new_console(width=max(new_console().width, width)).print(tree)


def _every_unit(client: Client, org_id: str, under: str | None, attempts: int = 3) -> list[Unit]:
    """Every page of units; from the first page again when the API says units were moved (or the
    unit created again) since the listing began (``409 conflict``: start again), a few times."""
    for _ in range(attempts - 1):
        try:
            return list(client.iter_units(org_id, under))
        except Conflict:
            continue
    return list(client.iter_units(org_id, under))


def _top(org_id: str, under: str | None, units: list[Unit]) -> str:
    """The tree's top line: the org, and with ``--under`` the path above that unit (which comes
    first, as its own branch), so that it is not named twice."""
    if not (under and units):
        return org_id
    return f"{org_id} {units[0].path.rsplit('/', 1)[0] or '/'}"


GUIDE = 4  # what each level's guide takes of a line: "└── "
MIN_NAME = 10  # the narrowest a unit's name wraps to beside its id


def tree_of(label: str, units: list[Unit]) -> tuple[Tree, int]:
    """The units, depth-first as the API lists them, as a rich tree: each under its parent; and the
    width that holds every line's guides and id whole."""
    top = Tree(label)
    nodes: dict[str, tuple[Tree, int]] = {}
    width = len(label)
    for unit in units:
        parent, level = nodes.get(unit.parent_id or ROOT, (top, 0))
        moving = " (moving)" if unit.moving else ""
        node = parent.add(f"{unit.unit_id}  [dim]{escape(unit.name)}{moving}[/dim]")
        nodes[unit.unit_id] = (node, level + 1)
        width = max(width, GUIDE * (level + 1) + len(unit.unit_id) + 2 + MIN_NAME)
    return top, width


@app.command("list")
def units_list(
    ctx: typer.Context,
    org_id: OrgArgument,
    under: Under = None,
    limit: Limit = None,
    cursor: CursorOption = None,
    every: All = False,
) -> None:
    """List the units depth-first, with their paths."""
    with api(ctx) as client:
        found = pages(every, cursor, lambda c: client.list_units(org_id, under, limit, c))
        show_pages(ctx, client, found, UNIT_COLUMNS, every)


@app.command("get")
def units_get(ctx: typer.Context, org_id: OrgArgument, unit_id: UnitArgument) -> None:
    """Show a unit with its path from the root (`root` is the organization's)."""
    with api(ctx) as client:
        show(ctx, client, client.get_unit(org_id, unit_id))


@app.command("create")
def units_create(
    ctx: typer.Context,
    org_id: OrgArgument,
    unit_id: UnitArgument,
    name: Annotated[str, typer.Option()],
    parent: Parent = None,
    idempotency_key: IdempotencyKey = None,
) -> None:
    """Create a unit (admins, operators)."""
    with api(ctx) as client:
        show(ctx, client, client.create_unit(org_id, unit_id, name, parent, idempotency_key=idempotency_key))


@app.command("update")
def units_update(
    ctx: typer.Context,
    org_id: OrgArgument,
    unit_id: UnitArgument,
    name: Annotated[str | None, typer.Option(help="Rename it.")] = None,
    parent: Annotated[str | None, typer.Option("--parent", help="Move it, with all below it, under this unit.")] = None,
    if_match: IfMatch = None,
) -> None:
    """Rename a unit, or move it with everything below it (admins, operators)."""
    with api(ctx) as client:
        found = client.update_unit(org_id, unit_id, if_match=if_match, **changed(name=name, parent_id=parent))
        show(ctx, client, found)


@app.command("delete")
def units_delete(
    ctx: typer.Context, org_id: OrgArgument, unit_id: UnitArgument, if_match: IfMatch = None, yes: Yes = False
) -> None:
    """Delete a unit that has no units and no users (admins, operators)."""
    confirm(yes, f"Delete unit {unit_id} of {org_id}?")
    with api(ctx) as client:
        client.delete_unit(org_id, unit_id, if_match=if_match)
        show(ctx, client, None, done=f"Deleted {org_id}/{unit_id}")


@app.command("users")
def units_users(
    ctx: typer.Context,
    org_id: OrgArgument,
    unit_id: UnitArgument,
    direct: Annotated[bool, typer.Option("--direct", help="Only the unit's own, not those of units below it.")] = False,
    limit: Limit = None,
    cursor: CursorOption = None,
    every: All = False,
) -> None:
    """List the people of a unit and of every unit below it."""
    with api(ctx) as client:
        found = pages(every, cursor, lambda c: client.list_unit_users(org_id, unit_id, direct, limit, c))
        show_pages(ctx, client, found, USER_COLUMNS, every)
