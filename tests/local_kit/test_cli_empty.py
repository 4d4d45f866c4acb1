"""Every cpctl list with nothing in it, in a table and in JSON, through the local gateway on DynamoDB
Local: in a table nothing on stdout (no header over no rows) and "No <things>." on stderr; in JSON
the API's body as ever (an empty ``items``), or no line at all for the tree's one unit a line."""

import json

import pytest
from typer.testing import CliRunner

from cpctl.cli import app
from local import tokens
from tests.api import create_org, create_user

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)


@pytest.fixture
def cpctl(gateway, tmp_path, monkeypatch):
    monkeypatch.setenv("CPCTL_CONFIG_DIR", str(tmp_path / "cpctl"))
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    runner = CliRunner()
    return lambda *args: runner.invoke(app, ["--url", gateway, "--token", tokens.issue(tokens.OPERATOR), *args])


@pytest.fixture
def empty(table, cpctl):
    """``acme`` with nothing in it; ``beta`` with a user ``bob`` without tickets, and a unit ``eng``
    whose only user is in the unit below it."""
    assert create_org("acme").status == 201
    assert create_org("beta").status == 201
    assert cpctl("units", "create", "beta", "eng", "--name", "Engineering").exit_code == 0
    assert cpctl("units", "create", "beta", "web", "--name", "Web", "--parent", "eng").exit_code == 0
    assert create_user("beta", "bob").status == 201
    assert create_user("beta", "cid", unit="web").status == 201


EMPTY_LISTS = {
    "orgs activity": (("orgs", "activity", "acme"), "activity", "items"),
    "users list": (("users", "list", "acme"), "users", "items"),
    "units list": (("units", "list", "acme"), "units", "items"),
    "units users --direct": (("units", "users", "beta", "eng", "--direct"), "users", "items"),
    "tickets list": (("tickets", "list", "beta", "bob"), "tickets", "items"),
    "orgs get --include-users": (("orgs", "get", "acme", "--include-users"), "users", "users"),
    "users get --include-tickets": (("users", "get", "beta", "bob", "--include-tickets"), "tickets", "tickets"),
}


@pytest.mark.parametrize("args, name, key", EMPTY_LISTS.values(), ids=EMPTY_LISTS.keys())
def test_an_empty_list_prints_no_header_and_says_none_on_stderr(empty, cpctl, args, name, key):
    # When a list has nothing in it
    shown = cpctl(*args)
    as_json = cpctl("-o", "json", *args)

    # Then the table shows no rows and no header over them (a get shows its resource alone, as
    # without --include-...), and stderr says there are none
    alone = cpctl(*args[:-1]).stdout if args[-1].startswith("--include") else ""
    assert shown.exit_code == 0, shown.output
    assert shown.stdout == alone
    assert shown.stderr.splitlines()[-1] == f"No {name}."
    # And JSON is the API's body, with an empty list
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout)[key] == []


def test_orgs_list_with_no_orgs_says_so(table, cpctl):
    shown = cpctl("orgs", "list")
    as_json = cpctl("-o", "json", "orgs", "list")

    assert (shown.exit_code, shown.stdout) == (0, "")
    assert shown.stderr.splitlines()[-1] == "No organizations."
    assert json.loads(as_json.stdout)["items"] == []


def test_a_tree_with_no_units_says_so_and_prints_no_json_line(empty, cpctl):
    shown = cpctl("units", "tree", "acme")
    as_json = cpctl("-o", "json", "units", "tree", "acme")

    assert (shown.exit_code, shown.stdout) == (0, "")
    assert shown.stderr.splitlines()[-1] == "No units."
    assert (as_json.exit_code, as_json.stdout) == (0, "")  # a unit a line: none, not an empty line
