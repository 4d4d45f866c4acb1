"""cpctl through Typer's CliRunner, against the local gateway with the functions on DynamoDB Local."""

import json
import stat

import boto3
import httpx
import pytest
from moto import mock_aws
from typer.testing import CliRunner

from cpctl import credentials
from cpctl.cli import app
from cpctl.commands import orgs
from local import tokens
from tests.api import create_user

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    """A token file of the test's own; and no token or URL from the environment."""
    monkeypatch.setenv("CPCTL_CONFIG_DIR", str(tmp_path / "cpctl"))
    # The functions run in this process: their metrics (printed) would land in cpctl's captured stdout.
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    monkeypatch.delenv("CONTROLPLANE_TOKEN", raising=False)
    monkeypatch.delenv("CONTROLPLANE_URL", raising=False)
    return tmp_path / "cpctl"


@pytest.fixture
def cpctl(gateway):
    """Run ``cpctl --url <gateway> ARGS`` as an operator unless ``token=`` says otherwise."""
    runner = CliRunner()

    def run(*args: str, token: str | None = tokens.issue(tokens.OPERATOR)):
        options = ["--url", gateway] + (["--token", token] if token else [])
        return runner.invoke(app, [*options, *args])

    return run


def raw(gateway: str, path: str) -> httpx.Response:
    return httpx.get(gateway + path, headers={"Authorization": tokens.issue(tokens.OPERATOR)})


def test_json_output_is_exactly_the_apis_body(table, gateway, cpctl):
    assert cpctl("orgs", "create", "acme", "--name", "Acme", "--plan", "pro").exit_code == 0

    shown = cpctl("--output", "json", "orgs", "get", "acme")

    assert shown.exit_code == 0
    assert shown.stdout == raw(gateway, "/orgs/acme").text + "\n"
    assert json.loads(shown.stdout)["plan"] == "pro"


def test_table_output_shows_the_fields(table, cpctl):
    cpctl("orgs", "create", "acme", "--name", "Acme Corp")

    shown = cpctl("orgs", "get", "acme")

    assert shown.exit_code == 0
    assert "Acme Corp" in shown.stdout and "free" in shown.stdout


def test_the_api_refusing_is_exit_1_with_the_error_code_on_stderr(table, cpctl):
    cpctl("orgs", "create", "acme", "--name", "Acme")
    create_user("acme", "alice", role="member")
    missing = cpctl("orgs", "get", "nowhere")
    refused = cpctl("orgs", "list", token=tokens.for_user("acme", "alice"))  # operators only

    assert (missing.exit_code, missing.stdout) == (1, "")
    assert "not_found" in missing.stderr
    assert refused.exit_code == 1 and "forbidden" in refused.stderr


@pytest.mark.parametrize("gone", ["user", "org"])
def test_a_token_whose_user_or_org_was_deleted_says_so_and_how_to_sign_in_again(table, cpctl, gone):
    # Given alice's token, and alice (or all of acme) deleted since
    cpctl("orgs", "create", "acme", "--name", "Acme")
    create_user("acme", "alice", role="admin")
    token = tokens.for_user("acme", "alice")
    deleted = (
        cpctl("users", "delete", "acme", "alice", "--yes")
        if gone == "user"
        else cpctl("orgs", "delete", "acme", "--yes")
    )
    assert deleted.exit_code == 0, deleted.output

    # When she runs any command
    result = cpctl("users", "get", "acme", "alice", token=token)

    # Then cpctl says the session ended because of a deletion, and how to sign in again
    assert (result.exit_code, result.stdout) == (1, "")
    assert "Error: session_ended: Your sign-in is no longer a user of organization acme." in result.stderr
    assert "Its user or organization was deleted" in result.stderr
    assert "cpctl login --local" in result.stderr


def test_in_json_mode_the_refusal_is_the_apis_error_body_on_stderr(table, cpctl):
    missing = cpctl("-o", "json", "orgs", "get", "nowhere")

    assert missing.exit_code == 1
    # (The in-process gateway logs its request line on stderr first.)
    assert json.loads(missing.stderr.splitlines()[-1])["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    "args",
    [
        ["orgs", "create", "acme"],  # no --name
        ["orgs", "create", "acme", "--name", "Acme", "--plan", "gold"],
        ["orgs", "frobnicate"],
        ["users", "create", "acme", "bob", "--name", "Bob", "--email", "not-an-email"],  # the API's model refuses
        ["orgs", "create", "Not A Slug", "--name", "X"],
        ["orgs", "update", "acme"],  # a PATCH needs a field
        ["--output", "yaml", "orgs", "list"],
    ],
    ids=["missing-option", "bad-choice", "no-command", "bad-email", "bad-id", "empty-patch", "bad-output"],
)
def test_usage_errors_are_exit_2_and_send_nothing(table, gateway, cpctl, args):
    result = cpctl(*args)

    assert result.exit_code == 2, result.output
    assert raw(gateway, "/orgs").json()["items"] == []


@pytest.mark.parametrize(
    ("args", "token"),
    [
        (["orgs", "update", "acme", "--name", "Y", "--if-match", "“1”"], None),  # "smart" quotes, pasted
        (["orgs", "create", "beta", "--name", "B", "--idempotency-key", "clé"], None),
        (["orgs", "list"], "eyJ…"),  # a token cut short with an ellipsis
    ],
    ids=["if-match", "idempotency-key", "token"],
)
def test_an_option_no_http_header_can_carry_is_a_usage_error_naming_it(table, gateway, cpctl, args, token):
    # Given an org, and an option sent as a header whose value is not plain ASCII text
    assert cpctl("orgs", "create", "acme", "--name", "Acme").exit_code == 0
    options = {"token": token} if token else {}

    # When cpctl runs with it
    result = cpctl(*args, **options)

    # Then it is a usage error that names the option, not a traceback; nothing is sent
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    option = "--token" if token else args[-2]
    assert option in result.stderr
    assert [(org["org_id"], org["name"]) for org in raw(gateway, "/orgs").json()["items"]] == [("acme", "Acme")]


@pytest.mark.parametrize(
    ("args", "argument"),
    [
        (["orgs", "get", ""], "ORG"),  # GET /orgs/ is the list of orgs: "is this the control-plane API?"
        (["users", "get", "acme", ""], "USER"),
        (["units", "get", "acme", ""], "UNIT"),
        (["users", "delete", "acme", "", "--yes"], "USER"),  # DELETE /orgs/acme/users/: a 405
        (["tickets", "get", "acme", ""], "TICKET"),
        (["users", "import-status", "acme", ""], "IMPORT"),
        (["units", "tree", "acme", "--under", ""], "--under"),  # sent, it was the API's 422: exit 1
        (["units", "list", "acme", "--under", ""], "--under"),
    ],
    ids=["org", "user", "unit", "user-delete", "ticket", "import", "tree-under", "list-under"],
)
def test_an_empty_id_an_unset_variable_gives_is_a_usage_error_naming_it(table, cpctl, args, argument):
    # Given an org (`cpctl users get acme "$USER_ID"` in a script whose variable is not set)
    assert cpctl("orgs", "create", "acme", "--name", "Acme").exit_code == 0

    # When an id argument is empty
    result = cpctl(*args)

    # Then it is a usage error that names it: no request to another route, whose answer is misread
    assert result.exit_code == 2, result.output
    assert argument in result.stderr
    assert "control-plane API" not in result.stderr


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["units", "create", "acme", "eng", "--name", "Engineering", "--parent", ""], "parent_id"),
        (["users", "create", "acme", "bob", "--name", "Bob", "--email", "bob@acme.example", "--unit", ""], "unit"),
        (["units", "create", "acme", "eng", "--name", "Engineering", "--idempotency-key", ""], "--idempotency-key"),
    ],
    ids=["parent", "unit", "idempotency-key"],
)
def test_an_empty_option_of_a_create_is_a_usage_error_not_its_default(table, gateway, cpctl, args, option):
    # Given an org (`--parent "$PARENT"` in a script whose variable is not set)
    assert cpctl("orgs", "create", "acme", "--name", "Acme").exit_code == 0

    # When a create is given that option empty
    result = cpctl(*args)

    # Then it is a usage error that names it, and nothing is created (not at the root, not with a new key)
    assert result.exit_code == 2, result.output
    assert option in result.stderr
    assert "eng" not in {unit["unit_id"] for unit in raw(gateway, "/orgs/acme/units").json()["items"]}
    assert raw(gateway, "/orgs/acme/users").json()["items"] == []


def test_an_empty_if_match_is_a_usage_error_and_changes_nothing(table, gateway, cpctl):
    # Given an org (`--if-match "$ETAG"` in a script whose variable is not set)
    assert cpctl("orgs", "create", "acme", "--name", "Acme").exit_code == 0

    # When a change is given an empty If-Match
    result = cpctl("orgs", "update", "acme", "--name", "Renamed", "--if-match", "")

    # Then it is a usage error naming it, and the org keeps its name
    assert result.exit_code == 2, result.output
    assert "--if-match" in result.stderr
    assert raw(gateway, "/orgs/acme").json()["name"] == "Acme"


def test_no_token_anywhere_is_a_usage_error(table, cpctl):
    result = cpctl("orgs", "list", token=None)

    assert result.exit_code == 2
    assert "cpctl login" in result.stderr


def test_login_local_stores_a_private_token_that_later_commands_use(table, cpctl, config_dir):
    cpctl("orgs", "create", "acme", "--name", "Acme")
    cpctl("users", "create", "acme", "alice", "--name", "Alice", "--email", "alice@acme.example", "--role", "admin")

    signed_in = cpctl("login", "--local", "--org", "acme", "--user", "alice", "--role", "admin", token=None)
    renamed = cpctl("orgs", "update", "acme", "--name", "Acme Inc", token=None)
    listing = cpctl("orgs", "list", token=None)  # an admin may not list orgs

    assert signed_in.exit_code == 0
    token_file = config_dir / "token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert tokens.decode(token_file.read_text().strip())["custom:role"] == "admin"
    assert renamed.exit_code == 0 and "Acme Inc" in renamed.stdout
    assert listing.exit_code == 1 and "forbidden" in listing.stderr
    assert cpctl("logout", token=None).exit_code == 0
    assert not token_file.exists()


@pytest.mark.parametrize("asked", ["member", "operator"])
def test_login_local_says_the_role_the_user_has_not_the_one_asked_for(table, cpctl, asked):
    cpctl("orgs", "create", "acme", "--name", "Acme")
    cpctl("users", "create", "acme", "alice", "--name", "Alice", "--email", "alice@acme.example", "--role", "admin")

    signed_in = cpctl("login", "--local", "--org", "acme", "--user", "alice", "--role", asked, token=None)

    assert signed_in.exit_code == 0, signed_in.output
    assert signed_in.stderr.startswith("Signed in as admin alice of acme;")


def test_login_local_as_a_member_needs_org_and_user(table, cpctl, config_dir):
    result = cpctl("login", "--local", "--role", "member", token=None)

    assert result.exit_code == 2
    assert not (config_dir / "token").exists()


@pytest.mark.parametrize("half", [("--user", "bob"), ("--org", "acme")])
def test_login_local_with_half_a_user_is_refused_not_an_operator(table, cpctl, config_dir, half):
    # When a user's login leaves out --org or --user (`cpctl login --local --user bob`)
    result = cpctl("login", "--local", *half, token=None)

    # Then it is a usage error naming both, not an operator's token that acts with every right
    assert result.exit_code == 2, result.output
    assert "--org and --user" in result.stderr
    assert not (config_dir / "token").exists()


def test_list_all_follows_every_page_in_a_table_and_as_one_api_body_per_line(table, cpctl):
    cpctl("orgs", "create", "acme", "--name", "Acme")
    cpctl("users", "create", "acme", "bob", "--name", "Bob", "--email", "bob@acme.example")
    for i in range(7):
        assert cpctl("tickets", "open", "acme", "bob", "--subject", f"T{i}", "--tag", "a", "--tag", "b").exit_code == 0

    one_page = cpctl("-o", "json", "tickets", "list", "acme", "bob", "--limit", "3")
    every_page = cpctl("-o", "json", "tickets", "list", "acme", "bob", "--limit", "3", "--all")
    table_view = cpctl("tickets", "list", "acme", "bob", "--limit", "3", "--all")

    assert len(json.loads(one_page.stdout)["items"]) == 3
    pages = [json.loads(line) for line in every_page.stdout.splitlines()]
    assert [len(page["items"]) for page in pages] == [3, 3, 1]
    assert pages[-1]["next_cursor"] is None
    subjects = [ticket["subject"] for page in pages for ticket in page["items"]]
    assert subjects == [f"T{i}" for i in reversed(range(7))]
    assert table_view.exit_code == 0 and all(f"T{i}" in table_view.stdout for i in range(7))


def test_every_command_group_works_end_to_end(table, cpctl):
    assert cpctl("orgs", "create", "acme", "--name", "Acme").exit_code == 0
    assert cpctl("users", "create", "acme", "bob", "--name", "Bob", "--email", "bob@acme.example").exit_code == 0
    opened = cpctl("-o", "json", "tickets", "open", "acme", "bob", "--subject", "Help", "--priority", "high")
    ticket_id = json.loads(opened.stdout)["ticket_id"]

    stale = cpctl("tickets", "update", "acme", ticket_id, "--status", "solved", "--if-match", '"7"')
    solved = cpctl("-o", "json", "tickets", "update", "acme", ticket_id, "--status", "solved", "--if-match", '"1"')
    with_tickets = cpctl("-o", "json", "users", "get", "acme", "bob", "--include-tickets")
    with_users = cpctl("-o", "json", "orgs", "get", "acme", "--include-users")
    users = cpctl("users", "list", "acme")

    assert stale.exit_code == 1 and "precondition_failed" in stale.stderr
    assert json.loads(solved.stdout)["status"] == "solved"
    assert [t["ticket_id"] for t in json.loads(with_tickets.stdout)["tickets"]] == [ticket_id]
    assert [u["user_id"] for u in json.loads(with_users.stdout)["users"]] == ["bob"]
    assert "bob@acme.example" in users.stdout
    assert cpctl("users", "update", "acme", "bob", "--role", "admin").exit_code == 0
    assert cpctl("tickets", "get", "acme", ticket_id).exit_code == 0
    assert cpctl("tickets", "delete", "acme", ticket_id, "--yes").exit_code == 0
    assert cpctl("tickets", "get", "acme", ticket_id).exit_code == 1
    assert cpctl("users", "delete", "acme", "bob", "--yes").exit_code == 0
    deleted = cpctl("-o", "json", "orgs", "delete", "acme", "--yes")
    assert (deleted.exit_code, deleted.stdout) == (0, "")  # 204: no body, nothing printed
    assert cpctl("orgs", "get", "acme").exit_code == 1


def test_orgs_suspend_and_activate_through_the_gateway(table, cpctl):
    cpctl("orgs", "create", "acme", "--name", "Acme")
    assert create_user("acme", "root", role="admin").status == 201
    admin = tokens.for_user("acme", "root")

    suspended = cpctl("-o", "json", "orgs", "suspend", "acme", "--reason", "Unpaid invoice", "--yes")
    shown = cpctl("orgs", "get", "acme")
    as_admin = cpctl("-o", "json", "orgs", "get", "acme", token=admin)
    refused = cpctl("orgs", "suspend", "acme", "--reason", "mine", "--yes", token=admin)
    activated = cpctl("-o", "json", "orgs", "activate", "acme", "--if-match", '"2"')

    assert suspended.exit_code == 0, suspended.stderr
    assert json.loads(suspended.stdout)["status"] == "suspended"
    assert json.loads(suspended.stdout)["suspension_reason"] == "Unpaid invoice"
    assert "suspended" in shown.stdout and "Unpaid invoice" in shown.stdout
    # The org's own admin is stopped at the gateway, and never told the reason
    assert as_admin.exit_code == 1 and "org_suspended" in as_admin.stderr
    assert "Unpaid invoice" not in as_admin.stderr
    assert refused.exit_code == 1 and "org_suspended" in refused.stderr
    assert activated.exit_code == 0, activated.stderr
    assert json.loads(activated.stdout)["status"] == "active" and json.loads(activated.stdout)["version"] == 3


def test_suspend_and_activate_say_what_a_suspension_does_and_how_soon(table, cpctl):
    # Given an org, When an operator suspends it and lets it back in
    cpctl("orgs", "create", "acme", "--name", "Acme")
    help_text = " ".join(cpctl("orgs", "suspend", "--help").stdout.split())
    suspended = cpctl("orgs", "suspend", "acme", "--reason", "Unpaid invoice", "--yes")
    activated = cpctl("orgs", "activate", "acme")

    # Then the help and the answer say: refused within the bound, sign-ins disabled, nothing deleted
    seconds = orgs.TAKES_EFFECT_SECONDS
    assert f"within {seconds} seconds" in help_text and "sign-ins are disabled" in help_text
    assert "signed out" not in help_text and "locked out" not in help_text
    assert suspended.exit_code == 0, suspended.stderr
    assert f"within {seconds} s its users are refused" in suspended.stderr
    assert "sign-ins are being disabled" in suspended.stderr and "Nothing is deleted" in suspended.stderr
    assert "status" in suspended.stdout  # stdout stays the org, as before
    assert f"within {seconds} s its users are served again" in activated.stderr


def test_orgs_suspend_needs_a_reason(table, gateway, cpctl):
    cpctl("orgs", "create", "acme", "--name", "Acme")

    missing = cpctl("orgs", "suspend", "acme")

    assert missing.exit_code == 2
    assert json.loads(raw(gateway, "/orgs/acme").text)["status"] == "active"


@pytest.fixture
def user_pool(monkeypatch):
    """A Cognito pool on moto with an app client that allows both password flows."""
    with mock_aws():
        cognito = boto3.client("cognito-idp", region_name="us-east-1")
        pool = cognito.create_user_pool(PoolName="test")["UserPool"]["Id"]
        client_id = cognito.create_user_pool_client(
            UserPoolId=pool,
            ClientName="cli",
            ExplicitAuthFlows=[
                "ALLOW_ADMIN_USER_PASSWORD_AUTH",
                "ALLOW_USER_PASSWORD_AUTH",
                "ALLOW_REFRESH_TOKEN_AUTH",
            ],
        )["UserPoolClient"]["ClientId"]
        cognito.admin_create_user(UserPoolId=pool, Username="ops-alice", TemporaryPassword="Temporary-1")
        yield pool, client_id


def _claims(token: str) -> dict:
    import base64

    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def test_cognito_login_answers_the_first_new_password_and_stores_the_id_token(table, cpctl, user_pool, config_dir):
    pool, client_id = user_pool
    args = ["login", "--username", "ops-alice", "--client-id", client_id, "--user-pool-id", pool]

    first = cpctl(*args, "--password", "Temporary-1", token=None)
    signed_in = cpctl(*args, "--password", "Temporary-1", "--new-password", "Permanent-Pass-2", token=None)
    again = credentials.cognito_token("ops-alice", "Permanent-Pass-2", client_id)  # USER_PASSWORD_AUTH, no pool id
    wrong = cpctl(*args, "--password", "wrong", token=None)

    assert first.exit_code == 1 and "NEW_PASSWORD_REQUIRED" in first.stderr
    assert signed_in.exit_code == 0
    stored = (config_dir / "token").read_text().strip()
    assert (_claims(stored)["cognito:username"], _claims(stored)["token_use"]) == ("ops-alice", "id")
    assert _claims(again)["cognito:username"] == "ops-alice"
    assert wrong.exit_code == 1 and "NotAuthorizedException" in wrong.stderr
