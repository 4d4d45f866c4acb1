"""The isolation matrix's time column (local.isolation.REVOCATIONS), over the local gateway as make
run serves it: the table's stream read every half second into the events function, whose bus tells
the gateway's authorizer to drop its cache on the events that change access. A token used just before
each change, with its Allow cached for the full TTL (60 s), is refused within 5 s after; a reactivated
org's token is served again within 5 s. Each refusal is the authorizer's Deny: fail closed."""

import threading
import time
from collections.abc import Callable

import pytest

from local import isolation, server, stream, tokens
from local.seed import fetch
from local.sink import Sink
from tests.api import call, create_org, create_user
from tests.events_support import stream_on

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)  # moto has no stream to read

OPERATOR = {"Authorization": f"Bearer {tokens.issue(tokens.OPERATOR)}"}


@pytest.fixture
def live(table, gateway, tmp_path, monkeypatch):
    """The gateway with lifecycle events on, its cache at the stack's default TTL; acme with admin
    root and member alice (one ticket)."""
    monkeypatch.setenv("AUTHORIZER_TTL_SECONDS", "60")
    stream_on(table)
    stop = threading.Event()
    sink = Sink(tmp_path / "events.jsonl", log=lambda line: None, listeners=(server.AUTHORIZER.on_events,))
    stream.publish_lifecycle_events(stop, server._one_at_a_time, pytest.fail, sink=sink)  # it logs only when off
    _tenant()
    yield gateway
    stop.set()


def _tenant() -> None:
    assert create_org("acme").status == 201
    assert create_user("acme", "root", role="admin").status == 201
    assert create_user("acme", "alice", role="member").status == 201
    assert call("POST", "/orgs/acme/users/alice/tickets", {"subject": "Mine"}).status == 201


def _header(who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {tokens.for_user('acme', 'root' if who == 'admin' else 'alice')}"}


def _path(route: tuple[str, str]) -> str:
    return route[1].format(org_id="acme", user_id="alice")


def _within(seconds: float, answered: Callable[[], bool]) -> float:
    """How long until ``answered()``; fails past ``seconds``."""
    started = time.monotonic()
    while not answered():
        assert time.monotonic() - started < seconds, f"not within {seconds} s"
        time.sleep(0.1)
    return time.monotonic() - started


def _change(case: str, gateway: str) -> None:
    """The change, made by an operator over HTTP, as a client makes it."""
    if case == "user deleted":
        assert fetch(f"{gateway}/orgs/acme/users/alice", "DELETE", headers=OPERATOR)[0] == 204
    elif case == "admin demoted":
        assert fetch(f"{gateway}/orgs/acme/users/root", "PATCH", {"role": "member"}, OPERATOR)[0] == 200
    elif case == "user id deleted and re-created":
        assert fetch(f"{gateway}/orgs/acme/users/alice", "DELETE", headers=OPERATOR)[0] == 204
        assert create_user("acme", "alice", role="member").status == 201
    elif case == "org id deleted and re-created":
        assert fetch(f"{gateway}/orgs/acme", "DELETE", headers=OPERATOR)[0] in (202, 204)
        _within(isolation.REVOCATION_SECONDS, lambda: call("GET", "/orgs/acme").status == 404)
        _tenant()  # another customer's acme, with its own root and alice
    else:
        body = {"status": "suspended", "suspension_reason": "Unpaid"}
        assert fetch(f"{gateway}/orgs/acme", "PATCH", body, OPERATOR)[0] == 200


@pytest.mark.parametrize("case", list(isolation.REVOCATIONS))
def test_a_token_used_just_before_a_change_is_refused_within_5_s(live, case):
    who, route, status, code = isolation.REVOCATIONS[case]
    header = _header(who)
    assert fetch(f"{live}{_path(route)}", headers=header)[0] == 200  # its Allow, cached for 60 s
    flushes = server.AUTHORIZER.flushes

    _change(case, live)

    _within(isolation.REVOCATION_SECONDS, lambda: fetch(f"{live}{_path(route)}", headers=header)[0] != 200)
    answered, _, body = fetch(f"{live}{_path(route)}", headers=header)
    assert (answered, body["error"]["code"]) == (status, code)
    assert server.AUTHORIZER.flushes > flushes  # the event did it, not the TTL


def test_the_re_created_users_own_token_is_served(live):
    _change("user id deleted and re-created", live)

    assert fetch(f"{live}/orgs/acme/users/alice/tickets", headers=_header("member"))[0] == 200


def test_a_reactivated_orgs_token_is_served_again_within_5_s(live):
    who, route, status = isolation.REACTIVATED
    header = _header(who)
    _change("org suspended", live)
    _within(isolation.REVOCATION_SECONDS, lambda: fetch(f"{live}{_path(route)}", headers=header)[0] == 403)

    assert fetch(f"{live}/orgs/acme", "PATCH", {"status": "active"}, OPERATOR)[0] == 200

    _within(isolation.REVOCATION_SECONDS, lambda: fetch(f"{live}{_path(route)}", headers=header)[0] == status)


def test_an_event_that_changes_no_access_keeps_the_cache(live):
    flushes = server.AUTHORIZER.flushes

    server.AUTHORIZER.on_events([{"DetailType": "Ticket Opened"}, {"DetailType": "Organization Updated"}])

    assert server.AUTHORIZER.flushes == flushes
