"""With a queue (the cloud), a move whose request died half-way (a timeout, a crash) leaves its lock
neither queued nor stopped: once it is abandoned (``moves.abandoned``), the next request that meets
it finishes it first and is answered as after it (``logic.stopped_moves``); a live lock is still
``409 move_in_progress``."""

import pytest
from moto import mock_aws

from controlplane.dal import keys, tree
from controlplane.dal.table import api_table
from controlplane.logic import moves, stopped_moves
from controlplane.models.errors import MoveInProgress
from local.apigw import LambdaContext
from tests.api import call, create_user
from tests.handlers import test_unit_moves
from tests.handlers.test_org_units import create_unit, ids
from tests.handlers.test_unit_moves import MOVED, assert_tree_is

acme = test_unit_moves.acme  # its org, a fixture here too: eng (platform (db), web), ops (ann) and five users


@pytest.fixture
def queue(request, table):
    """The deletions queue (``deletions_queue``), on both backends: moto's SQS, which on DynamoDB
    Local lets DynamoDB's requests through to it."""
    if request.node.callspec.params["table"] == "moto":
        yield request.getfixturevalue("deletions_queue")
        return
    with mock_aws(config={"core": {"passthrough": {"services": ["dynamodb"]}}}):
        yield request.getfixturevalue("deletions_queue")


class Died(BaseException):
    """A request's end that no ``except Exception`` sees, as Lambda's timeout ends one."""


def _died_half_way(monkeypatch, at: str = "note_marked") -> None:
    """A move of platform under ops whose request died as it began the step ``at``: by default once
    it had marked its units (they are at their new paths and marked, the users are not moved; at
    ``rewrite``: before any of that). Its lock is neither queued nor stopped."""

    def died(*args, **kwargs):
        raise Died

    with monkeypatch.context() as dying:
        dying.setattr(tree, at, died)
        with pytest.raises(Died):
            call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"})
    held = api_table().get(keys.tree_key("acme"), consistent=True)[tree.MOVE]
    assert not held.get("queued") and not held.get(tree.STOPPED)


def _abandoned(monkeypatch) -> None:
    """The lock is now older than any request lives."""
    monkeypatch.setattr(moves, "STALE_SECONDS", -1)


def _refused(reply) -> None:
    assert (reply.status, reply.error_code) == (409, "move_in_progress"), reply.body
    assert int(reply.headers["Retry-After"]) > 0


def _lock_left() -> bool:
    return tree.MOVE in api_table().get(keys.tree_key("acme"), consistent=True)


def test_a_unit_a_dead_requests_move_left_reads_moved_once_its_lock_is_abandoned(acme, queue, monkeypatch):
    # Given a queue, and a move of platform under ops whose request died half-way
    _died_half_way(monkeypatch)

    # When platform is read while the lock may still be live, and once it is abandoned
    live = call("GET", "/orgs/acme/units/platform")
    _abandoned(monkeypatch)
    read = call("GET", "/orgs/acme/units/platform")

    # Then the first says moving (the move may still be running), the second finished it first:
    # not moving, every path right, and no lock left
    assert (live.status, live.body["moving"]) == (200, True), live.body
    assert (read.status, read.body["path"], read.body["moving"]) == (200, "/ops/platform", False), read.body
    assert not _lock_left()
    assert_tree_is(MOVED)


@pytest.mark.parametrize("under", ["ops", "eng", "platform"])
def test_a_listing_a_dead_requests_move_refused_lists_each_user_once_once_its_lock_is_abandoned(
    acme, queue, monkeypatch, under
):
    # Given a queue, and a move of platform under ops whose request died half-way (users not moved yet)
    _died_half_way(monkeypatch)

    # When the users of a subtree it changes are listed while the lock may be live, and once it is abandoned
    live = call("GET", f"/orgs/acme/units/{under}/users")
    _abandoned(monkeypatch)
    listed = call("GET", f"/orgs/acme/units/{under}/users")

    # Then the first is 409 with Retry-After; the second finished the move first and lists each user once
    _refused(live)
    assert listed.status == 200, listed.body
    expected = {"ops": ["ann", "cid", "dan"], "eng": ["bea", "dee"], "platform": ["cid", "dan"]}[under]
    assert sorted(ids(listed)) == expected
    assert not _lock_left()


@pytest.mark.parametrize("request_", ["create_unit", "create_user_in_it", "move_user_into_it"])
def test_a_create_a_dead_requests_move_refused_is_done_once_its_lock_is_abandoned(acme, queue, monkeypatch, request_):
    # Given a queue, and a move of platform under ops whose request died half-way (db is marked)
    _died_half_way(monkeypatch)
    send = {
        "create_unit": lambda: create_unit("cache", "web"),
        "create_user_in_it": lambda: create_user("acme", "eve", unit="db"),
        "move_user_into_it": lambda: call("PATCH", "/orgs/acme/users/ann", {"unit": "db"}),
    }[request_]

    # When it is sent while the lock may be live, and again once it is abandoned
    live = send()
    _abandoned(monkeypatch)
    done = send()

    # Then the first is 409 with Retry-After; the second finished the move first and is done
    _refused(live)
    assert done.status == (201 if request_ != "move_user_into_it" else 200), done.body
    assert not _lock_left()
    joined = {"create_user_in_it": ["eve"], "move_user_into_it": ["ann"]}.get(request_, [])
    assert ids(call("GET", "/orgs/acme/units/db/users", query={"direct": "true"})) == sorted(["dan", *joined])
    assert call("GET", "/orgs/acme/units/db").body["path"] == "/ops/platform/db"


def test_a_request_short_of_time_for_an_abandoned_move_is_409_and_the_next_one_finishes_it(acme, queue, monkeypatch):
    # Given a queue, and an abandoned move whose request died half-way
    _died_half_way(monkeypatch)
    _abandoned(monkeypatch)

    # When a unit is created by a request with less than a move's step left of its time, then by one with time
    with monkeypatch.context() as short:
        short.setattr(LambdaContext, "get_remaining_time_in_millis", lambda self: int(moves.STEP_SECONDS * 1000) - 1)
        hurried = create_unit("cache", "web")
    created = create_unit("cache", "web")

    # Then the hurried one is 409 with Retry-After, having started no step it had no time to end; the
    # next finished the move and created the unit
    _refused(hurried)
    assert created.status == 201, created.body
    assert_tree_is(MOVED | {"cache": "/eng/web/cache"})


def test_two_requests_that_run_the_same_abandoned_move_at_once_move_each_entry_once(acme, queue, monkeypatch):
    # Given a queue, and an abandoned move whose request died before it moved anything
    _died_half_way(monkeypatch, at="rewrite")
    _abandoned(monkeypatch)
    rewrite, overtaken = tree.rewrite, []

    def overtaken_meanwhile(*args, **kwargs):
        rewrite(*args, **kwargs)
        if not overtaken:  # after the first request's first step, a second runs the whole move
            overtaken.append("stepped")
            # (the GET's logic, not the whole request: the functions' resolver is one per process)
            overtaken.append(stopped_moves.get_unit("acme", "platform").moving)

    monkeypatch.setattr(tree, "rewrite", overtaken_meanwhile)

    # When a unit create meets the lock and runs the move on, and a GET of platform does too meanwhile
    created = create_unit("cache", "web")

    # Then both are answered as after the move, and each entry moved once: every path right, and
    # platform's version up by one for the move (not once per run)
    monkeypatch.undo()
    assert overtaken == ["stepped", False]
    assert created.status == 201, created.body
    assert call("GET", "/orgs/acme/units/platform").body["version"] == 2
    assert_tree_is(MOVED | {"cache": "/eng/web/cache"})


@pytest.mark.parametrize("meets", ["get_unit", "next_move"])
def test_a_request_finishing_an_abandoned_move_leaves_a_newer_live_move_to_its_own_run(acme, queue, monkeypatch, meets):
    # Given an abandoned move of platform under ops; and, between a request's reading of it as
    # abandoned and its run, another run finishes it and a newer move (web under ops) takes the lock
    # and is under way in its own request
    _died_half_way(monkeypatch)
    _abandoned(monkeypatch)
    abandoned, newer = moves.abandoned, []

    def overtaken(held):
        if newer:
            return abandoned(held)
        newer.append(moves.resume("acme"))  # the other run, to the end
        _web_moving(monkeypatch)
        newer.append(api_table().get(keys.tree_key("acme"), consistent=True)[tree.MOVE]["id"])
        return True

    monkeypatch.setattr(moves, "abandoned", overtaken)

    # When the request runs on the move it read as abandoned
    # (its logic, not the whole request: the functions' resolver is one per process)
    if meets == "get_unit":
        stopped_moves.get_unit("acme", "platform")
    else:  # the next move, refused move_in_progress, which the resolver asks again once it has run it on
        with pytest.raises(MoveInProgress):
            moves.move_unit("acme", "web", "platform", test_unit_moves.OPERATOR)
        stopped_moves.run_stopped("acme")

    # Then it left the newer move alone: its lock is still held, web not moved yet
    held = api_table().get(keys.tree_key("acme"), consistent=True).get(tree.MOVE, {})
    assert newer[0] is True and held.get("id") == newer[1]
    assert api_table().get(keys.unit_key("acme", "web"), consistent=True)["path"] == "/eng/web"


def _web_moving(monkeypatch) -> None:
    """A move of web under ops that has taken the lock and not moved anything yet."""

    def died(*args, **kwargs):
        raise Died

    with monkeypatch.context() as dying:
        dying.setattr(tree, "rewrite", died)
        with pytest.raises(Died):
            call("PATCH", "/orgs/acme/units/web", {"parent_id": "ops"})


def test_a_message_of_a_move_another_run_finished_leaves_the_newer_live_move_alone(acme, queue):
    # Given a message of a move (platform under ops, queued) that another run has finished since, and
    # a newer move (web under ops) that holds the lock, live, in its own request
    import json

    from tests.api import deliver

    old = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"})
    assert old.status == 200, old.body
    body = json.dumps({"kind": "unit-move", "org_id": "acme", "move_id": "01JD3Q0Z6V7S3M8E2K9XWQY4PB"})
    _web_moving(pytest.MonkeyPatch())
    newer = api_table().get(keys.tree_key("acme"), consistent=True)[tree.MOVE]["id"]

    # When SQS delivers the old move's message
    reply = deliver([{"MessageId": "m-1", "ReceiptHandle": "r-1", "Body": body}])

    # Then it is done with (its move is over) and the newer move is its own run's: lock held, web not moved
    assert reply == {"batchItemFailures": []}
    assert api_table().get(keys.tree_key("acme"), consistent=True)[tree.MOVE]["id"] == newer
    assert api_table().get(keys.unit_key("acme", "web"), consistent=True)["path"] == "/eng/web"


def test_a_move_back_to_where_a_dead_requests_move_has_not_taken_its_unit_yet_is_done_after_it(
    acme, queue, monkeypatch
):
    # Given a queue, and a move of platform under ops whose request died before it rewrote anything
    _died_half_way(monkeypatch, at="rewrite")

    # When platform is asked under eng, where it still is, while the lock may be live, then once abandoned
    live = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "eng"})
    _abandoned(monkeypatch)
    reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "eng"})

    # Then 409 first; then the dead request's move is finished and platform moved back under eng
    _refused(live)
    assert (reply.status, reply.body["path"], reply.body["moving"]) == (200, "/eng/platform", False), reply.body
    assert not _lock_left()
    assert call("GET", "/orgs/acme/units/db").body["path"] == "/eng/platform/db"


def test_a_move_short_of_time_for_an_abandoned_move_is_409_and_starts_no_step_of_it(acme, queue, monkeypatch):
    # Given a queue, and an abandoned move whose request died half-way
    _died_half_way(monkeypatch)
    _abandoned(monkeypatch)
    rewrites = []
    monkeypatch.setattr(tree, "rewrite", lambda *args, **kwargs: rewrites.append(args))

    # When the org's next move comes in a request with less than a move's step left of its time
    with monkeypatch.context() as short:
        short.setattr(LambdaContext, "get_remaining_time_in_millis", lambda self: int(moves.STEP_SECONDS * 1000) - 1)
        hurried = call("PATCH", "/orgs/acme/units/web", {"parent_id": "ops"})

    # Then it is 409 with Retry-After, as any request short of that time is, having begun no step
    # that Lambda could cut half-way (the abandoned move's, or its own)
    _refused(hurried)
    assert rewrites == []
    assert _lock_left()
