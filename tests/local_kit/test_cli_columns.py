"""cpctl at 80 columns keeps every id and timestamp whole, on every command that prints a resource
or a list: they are what a person copies into the next command, or reads as one value."""

import json
import uuid

import pytest
from typer.testing import CliRunner

from controlplane.models.activity import ActivityEntry
from cpctl import output
from cpctl.cli import app
from local import tokens

ON_MOTO = pytest.mark.parametrize("table", ["moto"], indirect=True)

ORG = "acme-corporation-of-very-long-names-and-a-slug-to-match-them"  # 60 of the 63 an org_id may have
USER = "bob-the-builder-with-a-long-user-id"
WIDTH = 80


@pytest.fixture(autouse=True)
def environment(tmp_path, monkeypatch):
    monkeypatch.setenv("CPCTL_CONFIG_DIR", str(tmp_path / "cpctl"))
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    monkeypatch.delenv("CONTROLPLANE_TOKEN", raising=False)
    monkeypatch.delenv("CONTROLPLANE_URL", raising=False)


@pytest.fixture
def cpctl(table, gateway):
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(app, ["--url", gateway, "--token", tokens.issue(tokens.OPERATOR), *args])

    return run


@pytest.fixture
def ticket(cpctl) -> str:
    cpctl("orgs", "create", ORG, "--name", "Acme Corporation of Very Long Names, Incorporated")
    cpctl("users", "create", ORG, USER, "--name", "Bob", "--email", "bob.the.builder@acme-corporation.example")
    subject = "The export to CSV times out whenever the report covers a whole year of data"
    opened = cpctl("-o", "json", "tickets", "open", ORG, USER, "--subject", subject, "--tag", "billing")
    return json.loads(opened.stdout)["ticket_id"]


def _whole_values(body, listed: tuple[str, ...], shown: tuple[str, ...] | None = None) -> set[str]:
    """Every id and timestamp an API body holds in a field cpctl shows: every field of a resource,
    the ``listed`` columns of a list's items."""
    found: set[str] = set()
    if isinstance(body, dict):
        for name, value in body.items():
            whole = isinstance(value, str) and (name in output.IDS or name.endswith("_at"))
            if whole and (shown is None or name in shown):
                found.add(value)
            found |= _whole_values(value, listed, shown)
    elif isinstance(body, list):
        for value in body:
            found |= _whole_values(value, listed, listed)
    return found


# Each command, and the columns of the list it shows, if any.
COMMANDS = [
    (("orgs", "list"), output.ORG_COLUMNS),
    (("orgs", "get", ORG), ()),
    (("orgs", "get", ORG, "--include-users"), output.USER_COLUMNS),
    (("users", "list", ORG), output.USER_COLUMNS),
    (("users", "get", ORG, USER), ()),
    (("users", "get", ORG, USER, "--include-tickets"), output.TICKET_COLUMNS),
    (("tickets", "list", ORG, USER), output.TICKET_COLUMNS),
    (("tickets", "get", ORG, "{ticket}"), ()),
]


@ON_MOTO
@pytest.mark.parametrize(("command", "listed"), COMMANDS, ids=[" ".join(command) for command, _ in COMMANDS])
def test_every_id_and_timestamp_is_whole_at_80_columns(cpctl, ticket, command, listed):
    args = [part.format(ticket=ticket) for part in command]
    # Given what the API answered (its JSON)
    body = json.loads(cpctl("-o", "json", *args).stdout.splitlines()[0])
    values = _whole_values(body, listed)
    assert values  # ids at least: the check has something to find

    # When the command prints its table at 80 columns
    shown = cpctl(*args)

    # Then each id and timestamp is on one line, whole, and no line is wider than the terminal
    assert shown.exit_code == 0, shown.stderr
    assert sorted(v for v in values if v not in shown.stdout) == []
    assert max(len(line) for line in shown.stdout.splitlines()) <= WIDTH


def test_the_activity_table_keeps_timestamps_actors_and_resources_whole_at_80_columns(capsys):
    # Given entries with a Cognito sub as the actor and a ticket as the resource
    actor, ticket_id = str(uuid.uuid4()), "01JD3Q0Z6V7S3M8E2K9XWQY4PB"
    entries = [
        ActivityEntry(
            event_id=f"event-{i}",
            type="Ticket Status Changed",
            occurred_at=f"2026-11-24T18:5{i}:51.010Z",
            actor=actor,
            resource={"kind": "ticket", "id": ticket_id},
            changes={"status": {"old": "open", "new": "solved"}},
        )
        for i in range(3)
    ]

    # When they are shown as cpctl orgs activity shows them
    output.show_rows(entries, output.ACTIVITY_COLUMNS, None)

    # Then every value that is one thing is on one line
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    assert max(len(line) for line in lines) <= WIDTH
    for i in range(3):
        assert any(f"2026-11-24T18:5{i}:51.010Z" in line for line in lines)
    assert sum(actor in line for line in lines) == 3
    assert sum(ticket_id in line for line in lines) == 3


def test_a_list_that_fits_is_still_one_table_a_row_a_line(capsys):
    # Given short values (the record layout is only for rows a line cannot hold)
    entries = [
        ActivityEntry(
            event_id="e",
            type="User Created",
            occurred_at="2026-11-24T18:55:51.010Z",
            actor="ops",
            resource={"kind": "user", "id": "bob"},
            changes=None,
        )
    ]

    output.show_rows(entries, output.ACTIVITY_COLUMNS, None)

    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0].split() == list(output.ACTIVITY_COLUMNS)


def test_an_entry_without_a_subject_shows_no_empty_subject(capsys):
    # Given a user's entry: the log carries a subject for tickets only, null for the rest
    entries = [
        ActivityEntry(
            event_id="e",
            type="User Created",
            occurred_at="2026-11-24T18:55:51.010Z",
            actor="ops",
            resource={"kind": "user", "id": "bob", "subject": None},
            changes=None,
        )
    ]

    output.show_rows(entries, output.ACTIVITY_COLUMNS, None)

    # Then the resource reads as its kind and id, with no dangling "subject"
    row = capsys.readouterr().out.splitlines()[1]
    assert "kind user, id bob" in row and "subject" not in row


def test_an_entrys_changes_read_old_to_new_as_the_console_shows_them(capsys):
    # Given an entry that changed the plan and set a value that was empty
    entries = [
        ActivityEntry(
            event_id="e",
            type="Organization Suspended",
            occurred_at="2026-11-24T18:55:51.010Z",
            actor="ops",
            resource={"kind": "organization", "id": "acme"},
            changes={"plan": {"old": "free", "new": "pro"}, "suspension_reason": {"old": None, "new": "unpaid"}},
        )
    ]

    output.show_rows(entries, output.ACTIVITY_COLUMNS, None)

    # Then each field reads "name: old → new", an empty side as "none"
    printed = " ".join(capsys.readouterr().out.split())
    assert "plan: free → pro, suspension_reason: none → unpaid" in printed


def test_an_empty_page_with_a_next_one_says_so_and_how_to_get_it(capsys):
    # (The API may answer a page of none with a cursor: a listing that filters as it reads.)
    output.show_rows([], output.USER_COLUMNS, "cpctl users list acme --cursor abc")

    shown = capsys.readouterr()
    assert shown.out == ""
    assert shown.err == "No users on this page.\nMore: cpctl users list acme --cursor abc\n"
