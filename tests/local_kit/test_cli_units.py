"""cpctl units, and the typed client's unit methods, against the local gateway on DynamoDB Local."""

import json

import pytest
from typer.testing import CliRunner

from controlplane.models.units import MoveAccepted, Unit
from cpctl.cli import app
from cpctl.client import Client
from cpctl.errors import Conflict, LimitExceeded
from local import tokens

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CPCTL_CONFIG_DIR", str(tmp_path / "cpctl"))
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    monkeypatch.delenv("CONTROLPLANE_TOKEN", raising=False)
    monkeypatch.delenv("CONTROLPLANE_URL", raising=False)


@pytest.fixture
def cpctl(gateway):
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(app, ["--url", gateway, "--token", tokens.issue(tokens.OPERATOR), *args])

    return run


@pytest.fixture
def acme(table, gateway):
    with Client(gateway, tokens.issue(tokens.OPERATOR)) as api:
        api.create_org("acme", "Acme", "pro")
        api.create_unit("acme", "eng", "Engineering")
        api.create_unit("acme", "platform", "Platform", "eng")
        api.create_unit("acme", "ops", "Operations")
        api.create_user("acme", "cid", "Cid", "cid@example.com", unit="platform")
        yield api


def test_the_client_lists_moves_and_refuses_in_the_apis_models(acme):
    assert [unit.path for unit in acme.iter_units("acme")] == ["/eng", "/eng/platform", "/ops"]

    moved = acme.update_unit("acme", "platform", parent_id="ops")

    assert isinstance(moved, Unit) and not isinstance(moved, MoveAccepted)
    assert moved.path == "/ops/platform"
    assert [user.user_id for user in acme.list_unit_users("acme", "ops").items] == ["cid"]
    assert acme.list_unit_users("acme", "ops", direct=True).items == []
    with pytest.raises(Conflict):
        acme.update_unit("acme", "ops", parent_id="platform")
    with pytest.raises(Conflict):
        acme.delete_unit("acme", "platform")


def test_tree_shows_each_unit_under_its_parent(acme, cpctl):
    shown = cpctl("units", "tree", "acme")

    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert lines[0] == "acme"
    assert [line.split()[-2:] for line in lines[1:]] == [
        ["eng", "Engineering"],
        ["platform", "Platform"],
        ["ops", "Operations"],
    ]
    indent = {line.split()[-2]: len(line) - len(line.lstrip("│├└─ ")) for line in lines[1:]}
    assert indent["platform"] > indent["eng"] == indent["ops"]


def test_a_tree_whose_units_moved_between_two_pages_starts_again_and_shows_them_moved(acme, cpctl, monkeypatch):
    # Given pages of one unit, and platform moved under ops between the first page and the second
    # (the API then refuses the second page's cursor: 409 conflict, start again)
    list_units, moved = Client.list_units, []

    def a_unit_a_page(self, org_id, under=None, limit=None, cursor=None):
        if cursor and not moved:
            moved.append(acme.update_unit("acme", "platform", parent_id="ops").path)
        return list_units(self, org_id, under, 1, cursor)

    monkeypatch.setattr(Client, "list_units", a_unit_a_page)

    # When the tree is shown
    shown = cpctl("units", "tree", "acme")

    # Then cpctl listed it again from the first page: the tree as it is after the move
    assert moved == ["/ops/platform"]
    assert shown.exit_code == 0, shown.output
    assert [line.split()[-2] for line in shown.stdout.splitlines()[1:]] == ["eng", "ops", "platform"]


def test_a_tree_under_a_unit_names_the_org_and_the_path_above_it_then_the_unit_once(acme, cpctl):
    shown = cpctl("units", "tree", "acme", "--under", "platform")

    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines() == ["acme /eng", "└── platform  Platform"]
    assert cpctl("units", "tree", "acme", "--under", "eng").stdout.splitlines()[0] == "acme /"


def test_a_long_id_ten_levels_deep_is_whole_on_its_line_at_80_columns(acme, cpctl, monkeypatch):
    # Given a chain of units 10 deep, the deepest with a 63-character id: 40 columns of guides before it
    parent = "eng"
    for level in range(2, 10):
        acme.create_unit("acme", f"level-{level}", f"Level {level}", parent)
        parent = f"level-{level}"
    deepest = "d" * 59 + "-end"
    acme.create_unit("acme", deepest, "The deepest unit of them all", parent)
    monkeypatch.setenv("COLUMNS", "80")

    shown = cpctl("units", "tree", "acme")

    assert shown.exit_code == 0, shown.output
    line = next(line for line in shown.stdout.splitlines() if "dddd" in line)
    assert f"└── {deepest}  The" in line


@pytest.mark.parametrize("args", [("tree", "acme"), ("list", "acme"), ("get", "acme", "core")])
def test_a_name_with_brackets_is_shown_as_written_not_read_as_markup(acme, cpctl, args):
    # Names are anyone's text: rich read "[core]" as a style and dropped it, and "[/]" ended the command.
    acme.create_unit("acme", "core", "R&D [core] [/]", "eng")

    shown = cpctl("units", *args)

    assert shown.exit_code == 0, shown.output
    assert "R&D [core] [/]" in shown.stdout


def test_units_commands_create_move_list_people_and_delete(acme, cpctl):
    assert cpctl("units", "create", "acme", "db", "--name", "DB", "--parent", "platform").exit_code == 0
    assert cpctl("units", "update", "acme", "platform", "--parent", "ops").exit_code == 0

    listed = cpctl("--output", "json", "units", "list", "acme", "--under", "ops")
    people = cpctl("units", "users", "acme", "ops")
    deleted = cpctl("units", "delete", "acme", "db", "--yes")

    assert [unit["path"] for unit in json.loads(listed.stdout)["items"]] == [
        "/ops",
        "/ops/platform",
        "/ops/platform/db",
    ]
    assert "cid" in people.stdout
    assert deleted.exit_code == 0
    assert cpctl("units", "get", "acme", "db").exit_code == 1


@pytest.mark.parametrize(
    ("args", "first", "second"),
    [
        (("list", "acme", "--under", "eng"), "/eng ", "/eng/platform "),
        (("users", "acme", "platform", "--direct"), "cid ", "dee "),
    ],
)
def test_the_paging_hint_of_a_narrowed_list_shows_that_lists_next_page(acme, cpctl, args, first, second):
    # Given a list narrowed by an option (a cursor continues only the list it came from), a page at a time
    acme.create_user("acme", "dee", "Dee", "dee@example.com", unit="platform")
    shown = cpctl("units", *args, "--limit", "1")
    [hint] = [line for line in shown.stderr.splitlines() if line.startswith("More: ")]

    # When the hint is run as it says
    command = hint.removeprefix("More: ").split("  (")[0].split()
    more = cpctl(*command[1:])

    # Then it shows that list's next page
    assert more.exit_code == 0, more.output
    assert first in shown.stdout and second in more.stdout


def test_a_user_moves_with_cpctl_users_update(acme, cpctl):
    assert cpctl("users", "update", "acme", "cid", "--unit", "eng").exit_code == 0

    assert acme.get_user("acme", "cid").unit == "eng"


def test_the_limit_is_its_own_error_class(acme):
    parent = "platform"
    for depth in range(3, 11):
        acme.create_unit("acme", f"d{depth}", f"D{depth}", parent)
        parent = f"d{depth}"

    with pytest.raises(LimitExceeded):
        acme.create_unit("acme", "d11", "D11", parent)
