"""cpctl as a new user meets it: through Typer's CliRunner, with COLUMNS=80 and with no terminal
(CliRunner's streams are not one), against the local gateway on DynamoDB Local."""

import io
import re
from datetime import UTC, datetime
from types import SimpleNamespace

import httpx
import pytest
import typer.testing
from typer.testing import CliRunner

from cpctl import failures
from cpctl.cli import app
from cpctl.commands import common
from local import tokens
from tests.api import create_org, create_ticket, create_user
from tests.events_support import feeder

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)
JWT = re.compile(r"eyJ[\w-]*\.eyJ")  # a JSON Web Token: base64url JSON header, then claims
TICKET_ID = re.compile(r"\b[0-7][0-9A-HJKMNP-TV-Z]{25}\b")


@pytest.fixture(autouse=True)
def environment(tmp_path, monkeypatch):
    monkeypatch.setenv("CPCTL_CONFIG_DIR", str(tmp_path / "cpctl"))
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    monkeypatch.delenv("CONTROLPLANE_TOKEN", raising=False)
    monkeypatch.delenv("CONTROLPLANE_URL", raising=False)


@pytest.fixture(params=["80 columns", "no terminal"])
def cpctl(request, gateway, monkeypatch):
    """``cpctl --url <gateway> ARGS`` as an operator, in an 80-column terminal or in a pipe."""
    if request.param == "80 columns":
        monkeypatch.setenv("COLUMNS", "80")
    else:
        monkeypatch.delenv("COLUMNS", raising=False)
    runner = CliRunner()

    def run(*args: str, token: str | None = tokens.issue(tokens.OPERATOR), url: str = gateway, **kwargs):
        return runner.invoke(app, ["--url", url, *(["--token", token] if token else []), *args], **kwargs)

    return run


def _org_with_tickets(cpctl, tickets: int = 3) -> list[str]:
    cpctl("orgs", "create", "acme", "--name", "Acme Corporation of Very Long Names", "--plan", "free")
    cpctl("users", "create", "acme", "bob", "--name", "Bob", "--email", "bob@acme.example")
    for i in range(tickets):
        subject = f"Ticket {i}: the export to CSV times out whenever the report covers a whole year"
        cpctl("tickets", "open", "acme", "bob", "--subject", subject, "--tag", "billing", "--tag", "performance")
    return TICKET_ID.findall(cpctl("tickets", "list", "acme", "bob", "--limit", "100").stdout)


def test_ticket_ids_are_never_cut_and_other_columns_wrap(table, cpctl):
    # Given tickets whose subjects are longer than a line
    listed = _org_with_tickets(cpctl)

    # When they are listed (80 columns, or piped)
    shown = cpctl("tickets", "list", "acme", "bob")

    # Then every id is there whole, and the table fits the width
    assert shown.exit_code == 0
    assert len(set(listed)) == 3 and set(TICKET_ID.findall(shown.stdout)) == set(listed)
    assert max(len(line) for line in shown.stdout.splitlines()) <= 80


def test_a_detail_view_starts_with_the_id_and_name_shows_seats_and_hides_empty_fields(table, cpctl):
    cpctl("orgs", "create", "acme", "--name", "Acme", "--plan", "free")
    cpctl("users", "create", "acme", "bob", "--name", "Bob", "--email", "bob@acme.example")

    shown = cpctl("orgs", "get", "acme").stdout.splitlines()

    assert shown[0].split() == ["org_id", "acme"] and shown[1].split() == ["name", "Acme"]
    assert ["users", "1", "of", "5"] in [line.split() for line in shown]
    assert not [line for line in shown if "deleting_since" in line or "{" in line]


def test_orgs_list_shows_the_plans_seats_and_get_shows_seats_used(table, cpctl):
    cpctl("orgs", "create", "acme", "--name", "Acme", "--plan", "free")

    shown = cpctl("orgs", "list")

    # The listing carries no seats used (they are on an item the listing does not read)
    assert "users" in shown.stdout.splitlines()[0].split()  # the header: a borderless table's first line
    assert "max 5" in shown.stdout
    assert "0 of 5" in cpctl("orgs", "get", "acme").stdout


def test_the_paging_hint_is_a_command_that_runs_and_shows_the_next_page(table, cpctl, gateway):
    # Given three tickets, listed two at a time
    listed = _org_with_tickets(cpctl)
    first = cpctl("tickets", "list", "acme", "bob", "--limit", "2")
    [hint] = [line for line in first.stderr.splitlines() if line.startswith("More: ")]

    # When the hint is run as it says
    command = hint.removeprefix("More: ").split("  (")[0].split()
    assert command[:5] == ["cpctl", "--url", gateway, "tickets", "list"]
    assert "--limit" in command and "--cursor" in command
    second = cpctl(*command[1:])

    # Then it shows the rest
    assert second.exit_code == 0, second.stderr
    assert TICKET_ID.findall(first.stdout) + TICKET_ID.findall(second.stdout) == listed


@pytest.mark.parametrize(
    "listing",
    [("tickets", "list", "acme", "bob"), ("users", "get", "acme", "bob", "--include-tickets")],
    ids=["list", "include"],
)
def test_the_paging_hint_goes_on_at_the_api_given_by_url_and_never_shows_the_token(table, cpctl, gateway, listing):
    # Given an API reached with --url (not the default one), and one ticket more than a page holds (20)
    listed = _org_with_tickets(cpctl, tickets=21)
    first = cpctl(*listing)
    command = _hint(first).removeprefix("More: ").split("  (")[0].split()

    # Then the hint names that API (a cursor goes on only at the API that signed it), not the token
    assert command[:3] == ["cpctl", "--url", gateway], command
    # no option, and no JWT anywhere (its header and claims both begin "eyJ"; a cursor's signature may
    # hold those three letters by chance)
    assert "--token" not in command and not JWT.search(first.stderr)

    # And run as it says, with the token from the environment, it shows the rest
    env = {"CONTROLPLANE_TOKEN": tokens.issue(tokens.OPERATOR)}
    second = CliRunner().invoke(app, command[1:], env=env)
    assert second.exit_code == 0, second.stderr
    assert set(TICKET_ID.findall(first.stdout) + TICKET_ID.findall(second.stdout)) == set(listed)


def _hint(shown) -> str:
    [hint] = [line for line in shown.stderr.splitlines() if line.startswith("More: ")]
    return hint


def test_an_include_hint_names_the_list_command_that_goes_on(table, cpctl, gateway):
    # Given a user with more tickets, and an org with more users, than a first page holds (20)
    create_org("acme", plan="pro")
    for i in range(21):
        create_user("acme", f"user-{i:02}")
        create_ticket("acme", "user-00")

    # When each is shown with its first page
    user = cpctl("users", "get", "acme", "user-00", "--include-tickets")
    org = cpctl("orgs", "get", "acme", "--include-users")

    # Then the hint goes on with the list command, not with the get
    assert _hint(user).startswith(f"More: cpctl --url {gateway} tickets list acme user-00 --cursor "), user.stderr
    assert _hint(org).startswith(f"More: cpctl --url {gateway} users list acme --cursor "), org.stderr


def test_a_validation_error_names_each_field_in_plain_words(table, cpctl):
    cpctl("orgs", "create", "acme", "--name", "Acme")

    refused = cpctl("users", "create", "acme", "Bad Id", "--name", "", "--email", "not-an-address")

    assert refused.exit_code == 2  # the API's models refused it before it was sent
    lines = refused.stderr.splitlines()
    assert "  email: not a valid e-mail address" in lines
    assert any(line.startswith("  user_id: must be") for line in lines)
    assert any(line.startswith("  name: ") for line in lines)
    assert "Value error" not in refused.stderr and "^" not in refused.stderr  # no raw regular expression


def test_the_apis_own_validation_details_are_shown_a_field_a_line(table, gateway, cpctl):
    # Given a body only the API checks (an id in the path is not checked by cpctl)
    answer = httpx.post(
        f"{gateway}/orgs/acme/users",
        json={"user_id": "bob", "name": "Bob", "email": "nope"},
        headers={"Authorization": f"Bearer {tokens.issue(tokens.OPERATOR)}"},
    )

    # Then the API says it in the same words
    assert answer.json()["error"]["details"][0]["message"] == "not a valid e-mail address"


@pytest.mark.parametrize(("lifetime", "says"), [(-60, "the token expired"), (None, "the token is not valid")])
def test_a_401_says_why_and_how_to_get_a_new_token_with_cpctl(table, cpctl, lifetime, says):
    token = tokens.issue(tokens.OPERATOR, lifetime=lifetime) if lifetime else "not.a-token.at-all"

    refused = cpctl("orgs", "list", token=token)

    assert refused.exit_code == 1
    assert says in refused.stderr
    assert "cpctl login --local" in refused.stderr
    assert "curl" not in refused.stderr and "-H " not in refused.stderr


def test_a_401_from_a_deployed_api_names_the_cognito_sign_in(table, cpctl, monkeypatch):
    monkeypatch.setattr(common.Client, "request", _unauthorized)

    refused = cpctl("orgs", "list", url="https://abc123.execute-api.eu-west-1.amazonaws.com/prod")

    assert "cpctl login --username" in refused.stderr and "--local" not in refused.stderr


@pytest.mark.parametrize("body", [b"<html>Sign in to the Wi-Fi</html>", b'{"items": "none"}'])
def test_a_success_answer_that_is_not_the_apis_is_exit_1_not_a_usage_error(table, cpctl, monkeypatch, body):
    # Given a server at --url that answers 200, but not with the API's body (a portal, another service)
    answer = httpx.Response(200, content=body, request=httpx.Request("GET", "http://elsewhere.test/orgs"))
    monkeypatch.setattr(common.Client, "request", lambda self, *args, **kwargs: answer)

    shown = cpctl("orgs", "list", url="http://elsewhere.test")

    # Then the request was sent and refused as the API's, not reported as one cpctl never sent
    assert shown.exit_code == 1, shown.output
    assert "Usage error" not in shown.stderr
    assert "GET http://elsewhere.test/orgs answered 200, but not as the API does" in shown.stderr


def test_in_json_output_a_429_still_refused_after_retrying_is_the_apis_error_body(table, cpctl, monkeypatch):
    body = '{"error": {"code": "throttled", "message": "Daily quota spent", "request_id": "r-1"}}'

    def throttled(self, *args, **kwargs):
        from cpctl.errors import Throttled

        raise Throttled(httpx.Response(429, text=body, headers={"Retry-After": "3600"}))

    monkeypatch.setattr(common.Client, "request", throttled)

    shown = cpctl("-o", "json", "orgs", "list")

    assert shown.exit_code == 1
    assert shown.stderr.strip() == body


@pytest.mark.parametrize(
    ("retry_after", "hour", "says"),
    [
        # make run's gateway: the seconds until midnight UTC, met at noon
        ("43200", 12, "in about 12 hours"),
        # the deployed API: API Gateway's QUOTA_EXCEEDED, whose Retry-After is a static 3600 (infra.api:
        # its template cannot count the hours to midnight UTC), met at 08:00 UTC, 16 hours before
        ("3600", 8, "in about 16 hours"),
    ],
)
def test_a_429_for_the_spent_daily_quota_says_when_the_quota_comes_back_not_that_it_retried(
    table, cpctl, monkeypatch, retry_after, hour, says
):
    # Given an API that answers the org's spent daily quota with a 429, at a known hour UTC
    body = '{"error": {"code": "throttled", "message": "Daily quota spent", "request_id": "r-1"}}'

    def throttled(self, *args, **kwargs):
        from cpctl.errors import Throttled

        raise Throttled(httpx.Response(429, text=body, headers={"Retry-After": retry_after}))

    monkeypatch.setattr(common.Client, "request", throttled)
    now = datetime(2026, 11, 28, hour, tzinfo=UTC).timestamp()
    monkeypatch.setattr(failures, "time", SimpleNamespace(time=lambda: now))

    # When a command meets it
    shown = cpctl("orgs", "list")

    # Then cpctl says the day's quota is spent and when it really comes back, counted from the clock,
    # not read from Retry-After; it did not retry (the client raises this 429 at once), so it does not
    # say it did
    assert shown.exit_code == 1
    assert "retrying" not in shown.stderr
    assert f"The daily quota is spent: it comes back at midnight UTC, {says}." in shown.stderr


def _unauthorized(self, *args, **kwargs):
    from cpctl.errors import Unauthorized

    raise Unauthorized(httpx.Response(401, json={"error": {"code": "unauthorized", "message": "no"}}))


def test_a_refused_connection_is_reported_at_once_naming_the_url(table, cpctl):
    url = "http://127.0.0.1:9"  # discard: nothing listens

    refused = cpctl("orgs", "list", url=url)

    assert refused.exit_code == 1
    assert f"cannot reach {url}: nothing answers there (connection refused)" in refused.stderr


@pytest.mark.parametrize("url", ["http://[::1", "http://127.0.0.1:30O0", "127.0.0.1:3000", "http://"])
def test_a_url_that_is_not_one_is_a_usage_error_naming_it(table, cpctl, url):
    refused = cpctl("orgs", "list", url=url)

    assert refused.exit_code == 2, refused.output
    assert f"Usage error: the API's URL {url!r} is not" in refused.stderr


def test_help_has_no_bool_type_describes_arguments_and_keeps_choices_whole(table, cpctl):
    for command in (["orgs", "get"], ["orgs", "create"], ["tickets", "update"], ["users", "delete"]):
        shown = cpctl(*command, "--help").stdout

        assert "<bool>" not in shown
        assert "[required]" in shown and not re.search(r"\* +\w+ +<str> +\[required\]", shown), shown
    update = cpctl("tickets", "update", "--help").stdout
    assert "open, pending, solved or closed." in update and "low, normal, high or urgent." in update


@pytest.mark.parametrize(
    ("command", "left"),
    [
        (("tickets", "delete", "acme", "{ticket}"), ("tickets", "get", "acme", "{ticket}")),
        (("users", "delete", "acme", "bob"), ("users", "get", "acme", "bob")),
        (("orgs", "delete", "acme"), ("orgs", "get", "acme")),
    ],
)
def test_a_delete_without_a_terminal_or_yes_exits_2_and_deletes_nothing(table, cpctl, command, left):
    [ticket, *_] = _org_with_tickets(cpctl, tickets=1)

    refused = cpctl(*(part.format(ticket=ticket) for part in command))

    assert refused.exit_code == 2
    assert "--yes" in refused.stderr
    assert cpctl(*(part.format(ticket=ticket) for part in left)).exit_code == 0


def test_a_delete_on_a_terminal_asks_and_yes_skips_the_question(table, cpctl, monkeypatch):
    [ticket, other, *_] = _org_with_tickets(cpctl, tickets=2)
    monkeypatch.setattr(common, "terminal", lambda: True)

    declined = cpctl("tickets", "delete", "acme", ticket, input="n\n")
    accepted = cpctl("tickets", "delete", "acme", ticket, input="y\n")
    unasked = cpctl("tickets", "delete", "acme", other, "--yes")

    assert declined.exit_code == 1 and "Delete ticket" in declined.stdout
    assert accepted.exit_code == 0 and cpctl("tickets", "get", "acme", ticket).exit_code == 1
    assert unasked.exit_code == 0 and "Delete ticket" not in unasked.stdout


class CtrlC(io.BytesIO):
    """A terminal whose person presses Ctrl-C at the prompt: reading it raises KeyboardInterrupt."""

    def read(self, *_) -> bytes:
        raise KeyboardInterrupt

    read1 = readline = read


@pytest.mark.parametrize("ctrl_c", [False, True], ids=["no", "ctrl-c"])
@pytest.mark.parametrize(
    ("command", "said", "left"),
    [
        (("orgs", "delete", "acme"), "Nothing deleted.", "Acme"),
        (("orgs", "suspend", "acme", "--reason", "Unpaid invoice"), "Nothing suspended.", "active"),
    ],
)
def test_a_question_answered_no_or_ctrl_c_says_nothing_changed_and_changes_nothing(
    table, cpctl, monkeypatch, command, said, left, ctrl_c
):
    # Given a delete or a suspension asking on a terminal
    cpctl("orgs", "create", "acme", "--name", "Acme")
    monkeypatch.setattr(common, "terminal", lambda: True)
    if ctrl_c:
        monkeypatch.setattr(typer.testing, "make_input_stream", lambda *_: CtrlC())

    # When the person answers no, or presses Ctrl-C at the question
    declined = cpctl(*command) if ctrl_c else cpctl(*command, input="n\n")

    # Then docs/CLI.md: answered no, it says so and exits 1, so a script that answers for the person
    # (yes n | cpctl ...) does not take it as done; Ctrl-C exits 130, as anywhere else, not click's
    # "Aborted" and 1
    assert declined.exit_code == (130 if ctrl_c else 1), declined.output
    assert declined.stderr.strip().endswith(said)
    shown = cpctl("orgs", "get", "acme")  # reads no stdin
    assert shown.exit_code == 0 and left in shown.stdout and "suspended" not in shown.stdout


def test_ctrl_c_at_the_password_prompt_of_login_exits_130_and_stores_no_token(table, tmp_path, monkeypatch):
    # Given a Cognito sign-in without --password, which asks for it on the terminal
    monkeypatch.delenv("CPCTL_PASSWORD", raising=False)
    monkeypatch.setattr(typer.testing, "make_input_stream", lambda *_: CtrlC())

    # When the person presses Ctrl-C at the prompt
    stopped = CliRunner().invoke(app, ["login", "--username", "ops-alice", "--client-id", "c1ient"])

    # Then cpctl exits 130, as a Ctrl-C does anywhere else (docs/CLI.md), not click's "Aborted" and 1
    assert stopped.exit_code == 130, stopped.output
    assert stopped.stderr.strip().endswith("Not signed in.")
    assert not (tmp_path / "cpctl" / "token").exists()


def test_a_suspension_without_a_terminal_or_yes_exits_2_and_changes_nothing(table, cpctl):
    cpctl("orgs", "create", "acme", "--name", "Acme")

    refused = cpctl("orgs", "suspend", "acme", "--reason", "Unpaid invoice")

    assert refused.exit_code == 2 and "--yes" in refused.stderr
    assert "suspended" not in cpctl("orgs", "get", "acme").stdout


def test_the_activity_hint_and_table_keep_the_list_rules(table, cpctl, gateway, bus, stream):
    # Given more activity than a page, written to the log from the table's stream
    _org_with_tickets(cpctl, tickets=3)
    feeder().feed(stream.read())

    shown = cpctl("orgs", "activity", "acme", "--limit", "2")

    # Then the page's entries, each resource (a nested value) in words, and the command that goes on
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout.count("Ticket Opened") == 2
    assert "{" not in shown.stdout  # nested values readable, not a Python dict
    assert _hint(shown).startswith(f"More: cpctl --url {gateway} orgs activity acme --limit 2 --cursor ")
