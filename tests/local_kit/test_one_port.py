"""One port setting: `PORT=... make run` is all a user sets. make seed, make console, make tokens and
cpctl find that server by themselves (local.running's .local/api.json), do not trust a record whose
server is gone, and an explicit URL wins. And make seed opens each ticket as its own user."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import boto3
import pytest

from local import ROOT, environment, running, tokens
from local.dynamodb_local import free_port
from local.process import ServerProcess
from local.seed import fetch

pytestmark = pytest.mark.dynamodb_local

OPERATOR = tokens.issue(tokens.OPERATOR)
ACTIVITY_WAIT_SECONDS = 20.0
# What a developer's shell may set that would tell the tools the URL: the tests say it themselves.
TABLE = "control-plane-local"  # make run's (local/environment.py)
_URL_SETTINGS = ("PORT", "API_URL", "CONTROLPLANE_URL", "CONTROLPLANE_TOKEN")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """make run on a port that is not 3000, with its own record of where it serves."""
    try:
        server = ServerProcess(tmp_path_factory.mktemp("run") / "server.log", tmp_path_factory.mktemp("db"))
    except RuntimeError as error:
        pytest.fail(str(error))
    yield server
    server.stop()


def tool(run: ServerProcess, *command: str, **env: str | None) -> subprocess.CompletedProcess:
    """``python -m <command>`` as a second terminal runs it: no URL nor PORT, only run's record
    (and ``env``, where None unsets a variable)."""
    environment = {k: v for k, v in os.environ.items() if k not in _URL_SETTINGS}
    environment |= {"LOCAL_API_FILE": run.env["LOCAL_API_FILE"], "CPCTL_CONFIG_DIR": str(ROOT / ".local" / "none")}
    environment = {k: v for k, v in (environment | env).items() if v is not None}
    return subprocess.run(
        [sys.executable, "-m", *command], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
    )


def test_make_run_says_where_it_serves_while_it_serves(run):
    assert run.port != 3000
    record = json.loads(Path(run.env["LOCAL_API_FILE"]).read_text())
    # with its DynamoDB, where make tokens and make seed read the users' sign-in subjects
    assert record == {"url": run.url, "pid": run.process.pid, "dynamodb": run.dynamodb_endpoint, "table": TABLE}


def test_seed_fills_the_server_on_another_port_unasked(run):
    seeded = tool(run, "local.seed", "--org", "portless", "--users", "2", "--tickets", "4")

    assert seeded.returncode == 0, seeded.stderr
    assert f"then GET {run.url}/orgs/portless/" in seeded.stderr
    assert fetch(f"{run.url}/orgs/portless", headers={"Authorization": f"Bearer {OPERATOR}"})[0] == 200


def test_console_links_and_demo_tokens_point_at_the_server_on_another_port(run):
    assert tool(run, "local.seed", "--users", "2", "--tickets", "0").returncode == 0  # the demo users' tokens
    links = tool(run, "local.console")
    exports = tool(run, "local.tokens", "--demo")

    urls = re.findall(r"^(http://\S+)/console/#id_token=", links.stdout, re.MULTILINE)
    assert urls == [run.url] * 3, links.stdout
    assert links.stderr == ""
    assert f"export API={run.url}  # make run's API" in exports.stdout.splitlines()


def test_cpctl_reaches_the_server_on_another_port_unasked(run):
    fetch(f"{run.url}/orgs", "POST", {"org_id": "seen", "name": "Seen"}, {"Authorization": f"Bearer {OPERATOR}"})

    listed = tool(run, "cpctl", "--token", OPERATOR, "--output", "json", "orgs", "list")

    assert listed.returncode == 0, listed.stderr
    assert "seen" in [org["org_id"] for org in json.loads(listed.stdout)["items"]]


def test_cpctl_login_local_as_a_user_reads_them_from_the_running_server_in_a_bare_shell(run, tmp_path):
    # Given alice, an admin, on the server; and a shell with none of the functions' environment (no
    # AWS region nor table), as a developer's second terminal
    operator = {"Authorization": f"Bearer {OPERATOR}"}
    fetch(f"{run.url}/orgs", "POST", {"org_id": "signs", "name": "Signs"}, operator)
    alice = {"user_id": "alice", "name": "Alice", "email": "alice@signs.example", "role": "admin"}
    fetch(f"{run.url}/orgs/signs/users", "POST", alice, operator)
    bare: dict[str, str | None] = {name: None for name in environment.LOCAL} | {"CPCTL_CONFIG_DIR": str(tmp_path)}

    # When she signs in with cpctl as CLI.md says, and someone who is not there tries to
    signed_in = tool(run, "cpctl", "login", "--local", "--org", "signs", "--user", "alice", "--role", "admin", **bare)
    shown = tool(run, "cpctl", "users", "get", "signs", "alice", **bare)
    nobody = tool(run, "cpctl", "login", "--local", "--org", "signs", "--user", "nobody", "--role", "admin", **bare)

    # Then her token works, and the one who is not there is told so, without a traceback
    assert signed_in.returncode == 0, signed_in.stderr
    assert shown.returncode == 0 and "alice@signs.example" in shown.stdout, shown.stderr
    assert nobody.returncode == 1
    assert nobody.stderr.strip() == "Error: No user nobody in organization signs (create them first, e.g. make seed)"


def test_an_explicit_url_wins_over_the_running_server(run):
    nowhere = f"http://127.0.0.1:{free_port()}"

    listed = tool(run, "cpctl", "--token", OPERATOR, "orgs", "list", CONTROLPLANE_URL=nowhere)
    seeded = tool(run, "local.seed", "--url", nowhere, "--users", "1", "--tickets", "0")
    links = tool(run, "local.console", API_URL=nowhere)

    assert listed.returncode == 1 and nowhere in listed.stderr
    assert seeded.returncode == 1 and f"No API at {nowhere}" in seeded.stderr
    # the operator's link (the demo users' need their subjects, from a server that is not there)
    assert re.findall(r"^(http://\S+)/console/", links.stdout, re.MULTILINE) == [nowhere]
    assert links.stdout.count(": no link (") == 2


def _dead_pid() -> int:
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    return finished.pid


@pytest.mark.parametrize("kind", ["dead pid", "nothing answers"])
def test_a_record_whose_server_is_gone_is_not_trusted(run, tmp_path, monkeypatch, kind):
    # Given a record left by a server that was killed (its pid is dead), or whose pid now belongs to
    # another process while nothing listens on its port
    nowhere = f"http://127.0.0.1:{free_port()}"
    record = {"url": run.url, "pid": _dead_pid()} if kind == "dead pid" else {"url": nowhere, "pid": os.getpid()}
    stale = tmp_path / "api.json"
    stale.write_text(json.dumps(record))
    monkeypatch.setenv("LOCAL_API_FILE", str(stale))
    monkeypatch.setenv("PORT", str(free_port()))

    # Then the tools take the default, http://127.0.0.1:$PORT, not the record's URL
    assert running.running_url() is None
    assert running.api_url() == f"http://127.0.0.1:{os.environ['PORT']}"
    seeded = subprocess.run(
        [sys.executable, "-m", "local.seed", "--users", "1", "--tickets", "0"],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "API_URL"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert seeded.returncode == 1
    assert f"No API at http://127.0.0.1:{os.environ['PORT']}" in seeded.stderr


def test_the_record_goes_when_its_server_stops_unless_another_wrote_its_own(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCAL_API_FILE", str(tmp_path / "api.json"))

    with running.recorded("http://127.0.0.1:3301") as path:
        assert json.loads(path.read_text()) == {"url": "http://127.0.0.1:3301", "pid": os.getpid()}
    assert not path.exists()

    with running.recorded("http://127.0.0.1:3301") as path:
        path.write_text(json.dumps({"url": "http://127.0.0.1:3302", "pid": os.getpid() + 1}))
    assert json.loads(path.read_text())["url"] == "http://127.0.0.1:3302"


def test_a_second_make_run_of_the_checkout_is_refused_and_leaves_the_first_findable(run):
    # Given make run serving, and its record of where
    # When the same checkout starts a second make run on other ports, as PORT=... invites
    env = run.env | {"PORT": str(free_port()), "DYNAMODB_PORT": str(free_port())}
    second = subprocess.Popen(
        [sys.executable, "-m", "local.server"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        output, _ = second.communicate(timeout=30)
    except subprocess.TimeoutExpired:  # it serves: Ctrl-C, as its user would, once they found the first gone
        second.send_signal(signal.SIGINT)
        output, _ = second.communicate(timeout=30)

    # Then it says where the first serves and stops, before it opens the first's DynamoDB Local data
    assert second.returncode == 1, output.decode()
    assert f"`make run` serves {run.url} from this checkout" in output.decode()
    assert "DynamoDB Local on" not in output.decode()
    # And make seed, make tokens and cpctl still find the first, not http://127.0.0.1:3000
    assert tool(run, "cpctl", "--token", OPERATOR, "orgs", "list", PORT=str(free_port())).returncode == 0
    assert json.loads(Path(run.env["LOCAL_API_FILE"]).read_text())["url"] == run.url


def test_seed_opens_each_ticket_as_its_own_user(run):
    # Given the seed of an org with two users (alice the admin, bob a member) and their tickets
    seeded = tool(run, "local.seed", "--org", "owned", "--users", "2", "--tickets", "6")
    assert seeded.returncode == 0, seeded.stderr
    operator = {"Authorization": f"Bearer {OPERATOR}"}
    opened = {
        user: len(fetch(f"{run.url}/orgs/owned/users/{user}/tickets?limit=100", headers=operator)[2]["items"])
        for user in ("alice", "bob")
    }

    # When the activity log has caught up with the stream
    deadline, actors = time.monotonic() + ACTIVITY_WAIT_SECONDS, []
    while time.monotonic() < deadline:
        entries = fetch(f"{run.url}/orgs/owned/activity?limit=100", headers=operator)[2]["items"]
        actors = [entry["actor"] for entry in entries if entry["type"] == "Ticket Opened"]
        if len(actors) == 6:
            break
        time.sleep(0.5)

    # Then each "Ticket Opened" names the user who opened it, never the operator
    record = json.loads(Path(run.env["LOCAL_API_FILE"]).read_text())
    dynamodb = boto3.client("dynamodb", endpoint_url=record["dynamodb"])
    minted = {user: tokens.for_user("owned", user, dynamodb=dynamodb, table=TABLE) for user in ("alice", "bob")}
    sub = {user: tokens.decode(token)["sub"] for user, token in minted.items()}
    assert sorted(actors) == sorted([sub["alice"]] * opened["alice"] + [sub["bob"]] * opened["bob"])
    assert tokens.decode(OPERATOR)["sub"] not in actors
