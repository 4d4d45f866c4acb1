"""With no queue (make run), a request that a move stopped half-way refuses ``409 move_in_progress``
is asked again by the resolver once the move has run on (``http/resolver.py``): its refused first
attempt leaves nothing the second trips over (an Idempotency-Key's record, a sign-in), and with a
queue (the cloud) a live move's refusal stands."""

import boto3
import pytest

from controlplane import config
from controlplane.dal import keys, stamps, tree
from controlplane.dal.table import api_table
from controlplane.logic import stopped_moves
from tests.api import call, user_pool
from tests.handlers import test_unit_moves
from tests.handlers.test_abandoned_moves import _died_half_way
from tests.handlers.test_org_units import ids
from tests.handlers.test_unit_moves import _stopped_half_way, _unreachable

CREATES = {
    # Anywhere in the org: no unit is created while a move holds the org's lock
    "unit": ("/orgs/acme/units", {"unit_id": "cache", "name": "Cache", "parent_id": "web"}),
    # In db, which the move marked: no one joins it until the move has run on
    "user": ("/orgs/acme/users", {"user_id": "eve", "name": "Eve", "email": "eve@example.com", "unit": "db"}),
}


def _keyed(resource: str, key: str = "key-1"):
    path, body = CREATES[resource]
    return call("POST", path, body, headers={"Idempotency-Key": [key]})


acme = test_unit_moves.acme  # its org, a fixture here too: eng (platform (db), web), ops (ann) and five users


@pytest.fixture
def run_ons(monkeypatch) -> list[bool]:
    """What each run-on of a stopped move the resolver asked for answered (True: it ran the move)."""
    answered: list[bool] = []
    run_stopped = stopped_moves.run_stopped

    def recorded(org_id: str, *time_left) -> bool:
        answered.append(run_stopped(org_id, *time_left))
        return answered[-1]

    monkeypatch.setattr(stopped_moves, "run_stopped", recorded)
    return answered


def _created_once(resource: str) -> None:
    if resource == "unit":
        assert [unit["unit_id"] for unit in call("GET", "/orgs/acme/units").body["items"]].count("cache") == 1
    else:
        assert ids(call("GET", "/orgs/acme/units/db/users", query={"direct": "true"})) == ["dan", "eve"]


@pytest.mark.parametrize("resource", ["unit", "user"])
def test_a_keyed_create_a_stopped_move_refused_is_created_once_and_its_retry_replays_it(
    acme, monkeypatch, run_ons, resource
):
    # Given a move with no queue stopped half-way by an outage
    _stopped_half_way(monkeypatch)
    run_ons.clear()

    # When a create with an Idempotency-Key meets its lock, and is sent again with the same key
    first = _keyed(resource)
    again = _keyed(resource)

    # Then the first was refused, ran the move on and was created when asked again: its refused
    # attempt left no idempotency record in progress (409) behind; the retry replays the 201
    assert run_ons == [True]
    assert first.status == 201, first.body
    assert (again.status, again.body, again.headers["Location"]) == (201, first.body, first.headers["Location"])
    assert tree.MOVE not in api_table().get(keys.tree_key("acme"), consistent=True)
    _created_once(resource)


@pytest.mark.parametrize("resource", ["unit", "user"])
def test_a_keyed_create_whose_run_on_an_outage_stops_again_is_409_and_the_same_key_creates_later(
    acme, monkeypatch, run_ons, resource
):
    # Given a move with no queue stopped half-way, and DynamoDB failing again as a create runs it on
    _stopped_half_way(monkeypatch)
    run_ons.clear()
    with monkeypatch.context() as outage:
        outage.setattr(tree, "unlock_move", _unreachable)
        refused = _keyed(resource)

    # Then that create is the lock's 409 with Retry-After (not a 503: the outage was the move's), and
    # the same key sent again later runs the move on and creates: the 409 kept no record of the key
    assert (refused.status, refused.error_code) == (409, "move_in_progress"), refused.body
    assert int(refused.headers["Retry-After"]) > 0
    assert api_table().get(keys.tree_key("acme"), consistent=True)[tree.MOVE][tree.STOPPED] is True
    later = _keyed(resource)
    # (a user joins db as soon as the move's writes are done: its lock's end is the next unit request's)
    assert run_ons == ([False, True] if resource == "unit" else [False])
    assert later.status == 201, later.body
    _created_once(resource)


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # the queue is moto's
@pytest.mark.parametrize("resource", ["unit", "user"])
def test_with_a_queue_a_request_a_live_move_refuses_is_409_and_runs_no_move_on(
    acme, monkeypatch, run_ons, deletions_queue, resource
):
    # Given a queue (the cloud), and a move that has marked its units and may still be running (its
    # request died, but less than a request's lifetime ago)
    _died_half_way(monkeypatch)
    run_ons.clear()

    # When a create meets the lock
    refused = _keyed(resource)

    # Then it is 409 move_in_progress with Retry-After: the resolver runs no live move on (only an
    # abandoned one: tests/handlers/test_abandoned_moves.py)
    assert (refused.status, refused.error_code) == (409, "move_in_progress"), refused.body
    assert int(refused.headers["Retry-After"]) > 0
    assert run_ons == [False]
    assert tree.MOVE in api_table().get(keys.tree_key("acme"), consistent=True)


@pytest.fixture
def pool(table, monkeypatch):
    """A Cognito user pool (moto) the functions' settings name, before acme's users are created."""
    yield boto3.client("cognito-idp"), user_pool(monkeypatch)
    config.reset()


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # Cognito exists on moto only
def test_a_user_create_with_a_sign_in_a_stopped_move_refused_makes_one_sign_in_its_item_holds(
    pool, acme, monkeypatch, run_ons
):
    # Given a user pool, and a move with no queue stopped half-way, db marked
    _stopped_half_way(monkeypatch)
    run_ons.clear()

    # When a user is created in db
    created = _keyed("user")

    # Then the refused attempt made no sign-in (the table refuses first): the one made is the retry's,
    # and the user's item holds its subject
    cognito, pool_id = pool
    assert run_ons == [True]
    assert created.status == 201, created.body
    sign_in = cognito.admin_get_user(UserPoolId=pool_id, Username="acme.eve")
    subject = {a["Name"]: a["Value"] for a in sign_in["UserAttributes"]}["sub"]
    assert api_table().get(keys.user_key("acme", "eve"), consistent=True)[stamps.SIGN_IN_SUBJECT] == subject
    _created_once("user")


def test_a_unit_delete_with_if_match_a_stopped_move_refused_is_done_when_asked_again(acme, monkeypatch, run_ons):
    # Given a unit outside the move, its ETag read, then a move with no queue stopped half-way
    assert call("POST", "/orgs/acme/units", {"unit_id": "spare", "name": "Spare", "parent_id": "web"}).status == 201
    etag = call("GET", "/orgs/acme/units/spare").headers["ETag"]
    _stopped_half_way(monkeypatch)
    run_ons.clear()

    # When it is deleted with that If-Match
    deleted = call("DELETE", "/orgs/acme/units/spare", headers={"If-Match": [etag]})

    # Then the refused attempt took its mark back and changed no version: the retry deletes it (not 412, not 409)
    assert run_ons == [True]
    assert deleted.status == 204, deleted.body
    assert call("GET", "/orgs/acme/units/spare").status == 404
