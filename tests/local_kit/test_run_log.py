"""`make run`'s log and `make seed`'s endings, as a person reads them: a line per request or event,
events that name what changed and who changed it, none lost at startup, and a full plan explained."""

import os
import re
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from controlplane import config
from local import ROOT, stream, tokens
from local.dynamodb_local import free_port
from local.process import ServerProcess
from local.seed import fetch
from local.sink import Sink, log_line
from tests.api import create_org
from tests.events_support import handler, stream_on

OPERATOR = {"Authorization": f"Bearer {tokens.issue(tokens.OPERATOR)}"}
REQUEST_LINE = re.compile(r"^[A-Z]+ \S+ \d{3} \d+ms$")
EVENT_LINE = re.compile(r"^event [A-Z][a-z]+( [A-Z][a-z]+)* org=\S+( user=\S+)?( ticket=\S+)? (actor|cause)=\S+$")


@pytest.fixture(scope="module")
def fresh_run(tmp_path_factory):
    """A server just started on its own data: the test's first write is made the moment it is up."""
    try:
        log = tmp_path_factory.mktemp("run") / f"server-{free_port()}.log"
        running = ServerProcess(log, tmp_path_factory.mktemp("db"))
    except RuntimeError as error:
        pytest.fail(str(error))
    # The very first request, as a script run right after `make run` said it is up would send it
    early = fetch(f"{running.url}/orgs", "POST", {"org_id": "early", "name": "Early"}, OPERATOR)
    yield running, early
    running.stop()


def _wait_for(run: ServerProcess, pattern: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found := re.search(pattern, run.output(), re.MULTILINE):
            return found[0]
        time.sleep(0.2)
    raise AssertionError(f"no line matches {pattern!r} in:\n{run.output()}")


@pytest.mark.dynamodb_local
def test_a_change_made_the_moment_run_is_up_is_published(fresh_run):
    run, early = fresh_run

    assert early[0] == 201
    assert _wait_for(run, r"^event Organization Created org=early actor=\S+$")


@pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)  # its real stream
def test_the_stream_position_is_taken_before_the_gateway_serves(table, monkeypatch, tmp_path):
    # Given a stream whose position takes a while to take (DynamoDB Local under load)
    stream_on(table)

    class SlowToPosition(stream.StreamReader):
        def __post_init__(self):
            time.sleep(0.5)
            super().__post_init__()

    monkeypatch.setattr(stream, "StreamReader", SlowToPosition)
    monkeypatch.setattr(stream, "Sink", lambda log, **options: Sink(tmp_path / "events.jsonl", log=log, **options))
    lines: list[str] = []
    monkeypatch.setenv("EVENT_BUS_NAME", "controlplane-local")
    handler()  # the events function's cached bus name and table, reset
    stop = threading.Event()

    # When make run starts publishing, as it does before it serves
    starting = threading.Thread(
        target=stream.publish_lifecycle_events, args=(stop, threading.Lock(), lines.append), daemon=True
    )
    starting.start()
    starting.join(timeout=10)
    try:
        # Then it returns only once the position is taken, so the first write after it is published
        assert not starting.is_alive(), "publish_lifecycle_events must return before the gateway serves"
        create_org("first")
        deadline = time.monotonic() + 10
        while not lines and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [line for line in lines if line.startswith("event Organization Created org=first ")]
    finally:
        stop.set()
        config.use_bus(None)


@pytest.mark.dynamodb_local
def test_event_lines_name_the_user_and_ticket_and_never_share_a_line_with_requests(fresh_run):
    # Given an org with a user and a ticket, then deleted with them (a cascade: the removals have no actor)
    run, _ = fresh_run
    fetch(f"{run.url}/orgs", "POST", {"org_id": "named", "name": "Named"}, OPERATOR)
    user = {"user_id": "bob", "name": "Bob", "email": "bob@named.example"}
    fetch(f"{run.url}/orgs/named/users", "POST", user, OPERATOR)
    ticket = fetch(f"{run.url}/orgs/named/users/bob/tickets", "POST", {"subject": "Hi"}, OPERATOR)[2]["ticket_id"]
    fetch(f"{run.url}/orgs/named", "DELETE", headers=OPERATOR)

    # Then each event names what changed, and a removal without an actor names its cause
    _wait_for(run, r"^event User Created org=named user=bob actor=\S+$")
    _wait_for(run, rf"^event Ticket Opened org=named user=bob ticket={ticket} actor=\S+$")
    _wait_for(run, rf"^event Ticket Deleted org=named user=bob ticket={ticket} cause=organization_deleted$")
    _wait_for(run, r"^event Organization Deleted org=named actor=\S+$")
    # And every request or event line is a whole line of its own, with no None in it
    lines = run.output().splitlines()
    traffic = [line for line in lines if re.search(r"\d+ms|\bevent [A-Z]", line)]
    assert traffic and all(REQUEST_LINE.match(line) or EVENT_LINE.match(line) for line in traffic), traffic
    assert "None" not in run.output()


@pytest.mark.dynamodb_local
def test_a_test_servers_events_stay_out_of_the_developers_events_log(fresh_run):
    # Given a test's server, while the developer's make run writes .local/events.jsonl (make events-log)
    run, _ = fresh_run
    org_id = f"test-{uuid.uuid4().hex[:8]}"

    # When the test's server publishes an org's creation
    fetch(f"{run.url}/orgs", "POST", {"org_id": org_id, "name": "Test only"}, OPERATOR)
    _wait_for(run, rf"^event Organization Created org={org_id} actor=\S+$")

    # Then it is in the server's own events file, never in the developer's
    developers = ROOT / ".local" / "events.jsonl"
    assert not developers.exists() or f'"org_id": "{org_id}"' not in developers.read_text()
    assert f'"org_id": "{org_id}"' in Path(run.env["LOCAL_EVENTS_FILE"]).read_text()


def test_an_event_without_actor_or_cause_logs_a_dash():
    detail = {"org_id": "acme", "actor": None, "cause": None, "resource": {"org_id": "acme", "user_id": "bob"}}

    assert log_line("User Deleted", detail) == "event User Deleted org=acme user=bob actor=-"


def _seed(run: ServerProcess, *options: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "local.seed", "--url", run.url, *options]
    # its record names its DynamoDB, where the seed reads the users' subjects for their tokens
    environment = os.environ | {"LOCAL_API_FILE": run.env["LOCAL_API_FILE"]}
    return subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120)


@pytest.mark.dynamodb_local
def test_seed_into_a_full_plan_says_the_plan_its_limit_and_how_to_change_it(fresh_run):
    # Given an org on the free plan (5 seats)
    run, _ = fresh_run
    fetch(f"{run.url}/orgs", "POST", {"org_id": "tiny", "name": "Tiny", "plan": "free"}, OPERATOR)

    # When the seed asks for more users than that
    seeded = _seed(run, "--org", "tiny", "--users", "7", "--tickets", "0")

    # Then it ends with one line that says what to do, and fails
    assert seeded.returncode == 1
    assert "Traceback" not in seeded.stderr
    assert seeded.stderr.strip().splitlines() == [
        "make seed: organization tiny is on the free plan, which allows 5 users: ask for fewer "
        "(make seed ORG=tiny USERS=5), or change its plan: cpctl orgs update tiny --plan pro"
    ]


@pytest.mark.dynamodb_local
def test_seed_into_a_plan_full_of_other_users_asks_for_what_fits(fresh_run):
    # Given an org on the free plan (5 seats) whose 3 users are not the seed's
    run, _ = fresh_run
    fetch(f"{run.url}/orgs", "POST", {"org_id": "crowded", "name": "Crowded", "plan": "free"}, OPERATOR)
    for user_id in ("x1", "x2", "x3"):
        user = {"user_id": user_id, "name": user_id, "email": f"{user_id}@crowded.example"}
        assert fetch(f"{run.url}/orgs/crowded/users", "POST", user, OPERATOR)[0] == 201

    # When the seed asks for 3 users, fewer than the plan allows (alice and bob fit, carol does not)
    seeded = _seed(run, "--org", "crowded", "--users", "3", "--tickets", "0")

    # Then it asks for as many as fit, not for the plan's 5, and names the plan that holds them all
    assert seeded.returncode == 1
    assert seeded.stderr.strip().splitlines() == [
        "make seed: organization crowded is on the free plan, which allows 5 users, and 3 of its users are "
        "not the seed's: ask for fewer (make seed ORG=crowded USERS=2), or change its plan: "
        "cpctl orgs update crowded --plan pro"
    ]


@pytest.mark.dynamodb_local
def test_seed_of_another_org_names_make_tokens_for_that_org(fresh_run):
    run, _ = fresh_run

    seeded = _seed(run, "--org", "other", "--users", "2", "--tickets", "1")

    assert seeded.returncode == 0, seeded.stderr
    assert "Tokens for it: make tokens ORG=other;" in seeded.stderr
