"""Moving units (issue 27): every stored path right after a move, in the request or from the queue,
interrupted or delivered twice; no listing that could repeat or miss someone; one move at a time."""

import json
import math

import boto3
import pytest

from controlplane import config
from controlplane.dal import keys, stamps, tree
from controlplane.dal.table import api_table
from controlplane.logic import move_queue, moves, stopped_moves, units
from controlplane.logic.access import Caller
from controlplane.models.errors import ServiceUnavailable
from tests.api import call, create_org, create_user, deliver
from tests.handlers.test_org_units import create_unit, ids

OPERATOR = Caller(subject="op", user_id=None, org_id=None, role=None, operator=True)


def _never_finishes(org_id, time_left=None, locked_by=None) -> bool:
    """``moves.resume`` for a move that holds its lock and never gets on (out of time at once)."""
    return False


@pytest.fixture
def acme(table):
    """eng (platform (db), web), ops (ann); bea in eng, cid in platform, dan in db, dee in web."""
    create_org("acme", plan="pro")
    for unit_id, parent_id in [("eng", None), ("platform", "eng"), ("db", "platform"), ("web", "eng"), ("ops", None)]:
        create_unit(unit_id, parent_id)
    for user_id, unit in [("ann", "ops"), ("bea", "eng"), ("cid", "platform"), ("dan", "db"), ("dee", "web")]:
        assert create_user("acme", user_id, unit=unit).status == 201


def assert_tree_is(expected: dict[str, str]) -> None:
    """Every unit's stored path, and every user found under exactly their unit's subtree."""
    listed = call("GET", "/orgs/acme/units").body["items"]
    assert {unit["unit_id"]: unit["path"] for unit in listed} == expected
    assert not any(unit["moving"] for unit in listed)
    found = []
    for unit_id in expected:
        users = ids(call("GET", f"/orgs/acme/units/{unit_id}/users", query={"direct": "true"}))
        assert all(call("GET", f"/orgs/acme/users/{user}").body["unit"] == unit_id for user in users)
        found += users
    assert sorted(found) == ["ann", "bea", "cid", "dan", "dee"]  # each user at their unit's path, once


MOVED = {"eng": "/eng", "web": "/eng/web", "ops": "/ops", "platform": "/ops/platform", "db": "/ops/platform/db"}


def test_a_small_move_finishes_in_its_request(acme):
    reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"})

    assert reply.status == 200, reply.body
    assert (reply.body["path"], reply.body["parent_id"], reply.body["version"]) == ("/ops/platform", "ops", 2)
    assert_tree_is(MOVED)
    assert sorted(ids(call("GET", "/orgs/acme/units/ops/users"))) == ["ann", "cid", "dan"]
    assert sorted(ids(call("GET", "/orgs/acme/units/eng/users"))) == ["bea", "dee"]


def test_a_big_move_with_no_queue_finishes_in_its_request(acme, monkeypatch):
    # Given no queue (make run: docs/API.md, LOCAL.md) and a move too big for a request in the cloud
    monkeypatch.setattr(moves, "MOVE_IN_REQUEST", 2)

    reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"})

    # Then it is done before the answer, which is the moved unit, not a 202 for a job no queue runs
    assert reply.status == 200, reply.body
    assert (reply.body["path"], reply.body["moving"]) == ("/ops/platform", False)
    assert_tree_is(MOVED)


def test_a_move_with_a_rename_does_both(acme):
    reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops", "name": "Core"})

    assert (reply.status, reply.body["name"], reply.body["path"]) == (200, "Core", "/ops/platform")


@pytest.mark.parametrize("if_match", [{"If-Match": '"1"'}, {}], ids=["if-match", "no-if-match"])
def test_a_rename_after_a_moves_lock_stands_over_the_moves_own_rename(acme, monkeypatch, if_match):
    # Given platform is renamed by someone else once the PATCH below has taken its move lock
    resume, renamed = moves.resume, []

    def renamed_meanwhile(*args, **kwargs):
        renamed.append(call("PATCH", "/orgs/acme/units/platform", {"name": "Platform team"}).status)
        return resume(*args, **kwargs)

    monkeypatch.setattr(moves, "resume", renamed_meanwhile)

    # When platform is moved under ops and renamed Core in one PATCH
    reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops", "name": "Core"}, headers=if_match)

    # Then it moved, and the later rename stands: the PATCH's own was done when it took the lock
    assert renamed == [200]
    assert reply.status == 200, reply.body
    unit = call("GET", "/orgs/acme/units/platform").body
    # (version 2: the lock's, which the PATCH's rename was accepted at; 3: the rename; 4: the move)
    assert (unit["path"], unit["name"], unit["version"]) == ("/ops/platform", "Platform team", 4)


def test_a_move_without_if_match_renames_over_a_rename_before_its_lock(acme, monkeypatch):
    # Given platform is renamed by someone else after the PATCH below read it, before its lock
    lock_move, renamed = tree.lock_move, []

    def renamed_meanwhile(*args, **kwargs):
        if not renamed:
            renamed.append(call("PATCH", "/orgs/acme/units/platform", {"name": "Platform team"}).status)
        return lock_move(*args, **kwargs)

    monkeypatch.setattr(tree, "lock_move", renamed_meanwhile)

    # When platform is moved under ops and renamed Core in one PATCH, without If-Match
    reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops", "name": "Core"})

    # Then the PATCH, the later of the two, is planned again and renames over it
    assert renamed == [200]
    assert (reply.status, reply.body["name"], reply.body["path"]) == (200, "Core", "/ops/platform"), reply.body
    assert reply.body["version"] == 4  # 2: the rename; 3: the lock; 4: the move


def test_a_rename_with_its_current_parent_keeps_its_if_match(acme, monkeypatch):
    # Given platform is renamed (version 2) after the PATCH below read version 1, before its rename
    rename, renamed = units.rename, []

    def renamed_meanwhile(*args, **kwargs):
        monkeypatch.setattr(units, "rename", rename)
        renamed.append(call("PATCH", "/orgs/acme/units/platform", {"name": "Platform team"}).status)
        return rename(*args, **kwargs)

    monkeypatch.setattr(units, "rename", renamed_meanwhile)

    # When it is renamed with If-Match: "1" and the parent it has (a client sending the whole unit)
    reply = call(
        "PATCH", "/orgs/acme/units/platform", {"parent_id": "eng", "name": "Core"}, headers={"If-Match": '"1"'}
    )

    # Then it is 412, as without the parent: nothing moved, so nothing checked the version for the rename
    assert renamed == [200]
    assert (reply.status, reply.error_code) == (412, "precondition_failed"), reply.body
    assert call("GET", "/orgs/acme/units/platform").body["name"] == "Platform team"


@pytest.mark.parametrize("parent", ["platform", "db"])
def test_a_unit_cannot_move_under_itself_or_its_descendants(acme, parent):
    reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": parent, "name": "Not renamed"})

    assert reply.status == 409
    assert reply.error_code == "conflict"
    assert call("GET", "/orgs/acme/units/platform").body["name"] == "Platform"


def test_a_move_deeper_than_10_is_refused(acme):
    parent = "ops"
    for depth in range(2, 10):  # ops is at depth 1: chain to depth 9
        create_unit(f"d{depth}", parent)
        parent = f"d{depth}"

    reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": parent})  # platform's subtree is 2 deep

    assert reply.status == 409
    assert reply.error_code == "limit_exceeded"
    assert call("GET", "/orgs/acme/units/db").body["path"] == "/eng/platform/db"


def test_a_second_move_waits_for_the_first(acme, monkeypatch):
    monkeypatch.setattr(moves, "resume", _never_finishes)  # the first never finishes
    assert call("PATCH", "/orgs/acme/units/web", {"parent_id": "ops"}).status == 200

    reply = call("PATCH", "/orgs/acme/units/db", {"parent_id": "eng"})

    assert reply.status == 409
    assert reply.error_code == "move_in_progress"
    assert int(reply.headers["Retry-After"]) > 0
    assert call("GET", "/orgs/acme/units/db").body["path"] == "/eng/platform/db"


def test_a_listing_a_move_is_changing_is_refused_and_an_unrelated_one_is_not(acme, monkeypatch):
    monkeypatch.setattr(moves, "resume", _never_finishes)
    assert call("PATCH", "/orgs/acme/units/db", {"parent_id": "ops"}).status == 200

    for path in ["/orgs/acme/units", "/orgs/acme/units/eng/users", "/orgs/acme/units/ops/users"]:
        reply = call("GET", path)
        assert (reply.status, reply.error_code) == (409, "move_in_progress"), path
        assert reply.headers["Retry-After"]
    assert ids(call("GET", "/orgs/acme/units/web/users")) == ["dee"]


def test_a_cursor_from_before_an_overlapping_move_starts_again_and_an_unrelated_one_goes_on(acme):
    everyone = call("GET", "/orgs/acme/units/root/users", query={"limit": "2"}).body["next_cursor"]
    web = call("GET", "/orgs/acme/units", query={"under": "web", "limit": "1"})
    assert call("PATCH", "/orgs/acme/units/db", {"parent_id": "ops"}).status == 200

    stale = call("GET", "/orgs/acme/units/root/users", query={"limit": "2", "cursor": everyone})

    assert (stale.status, stale.error_code) == (409, "conflict")
    assert call("GET", "/orgs/acme/units", query={"under": "web", "cursor": web.body["next_cursor"]}).status == 200


def test_no_one_joins_a_unit_while_it_moves(acme, monkeypatch):
    monkeypatch.setattr(moves, "resume", _never_finishes)
    assert call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"}).status == 200
    monkeypatch.undo()
    moves.resume("acme", time_left=iter([60.0] * 2 + [0.0] * 99).__next__)  # marks both units, then stops

    joined = create_user("acme", "zoe", unit="db")
    nested = create_unit("cache", "db")

    assert (joined.status, joined.error_code) == (409, "move_in_progress")
    assert (nested.status, nested.error_code) == (409, "move_in_progress")
    assert moves.resume("acme") is True
    assert create_user("acme", "zoe", unit="db").status == 201


# platform and db, then cid and dan, then the wait for GSI2 to settle: 5 steps
@pytest.mark.parametrize("steps", [0, 1, 2, 3, 4])
def test_a_move_interrupted_anywhere_finishes_right_when_run_again(acme, monkeypatch, steps):
    monkeypatch.setattr(moves, "resume", _never_finishes)
    assert call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"}).status == 200
    monkeypatch.undo()
    budget = iter([60.0] * steps)

    assert moves.resume("acme", time_left=lambda: next(budget, 0.0)) is False
    assert moves.resume("acme") is True
    assert moves.resume("acme") is True  # delivered once more: nothing left to do

    assert_tree_is(MOVED)


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # the queue is moto's
def test_a_big_move_answers_202_and_finishes_from_the_queue_delivered_twice(acme, monkeypatch, deletions_queue):
    monkeypatch.setattr(moves, "MOVE_IN_REQUEST", 2)

    reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"})

    assert reply.status == 202, reply.body
    assert reply.body["status"] == "moving"
    assert call("GET", "/orgs/acme/units/platform").body["path"] == "/eng/platform"
    sqs = boto3.client("sqs")
    messages = sqs.receive_message(QueueUrl=deletions_queue, MaxNumberOfMessages=1)["Messages"]
    held = units.read("acme", "root")[1]["move"]["id"]  # the message names its move
    assert json.loads(messages[0]["Body"]) == {"kind": move_queue.KIND, "org_id": "acme", "move_id": held}
    assert deliver(messages) == {"batchItemFailures": []}
    assert deliver(messages) == {"batchItemFailures": []}  # SQS delivers at least once
    assert_tree_is(MOVED)


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # the queue is moto's
def test_a_big_moves_units_read_moving_from_its_202_until_it_is_done(acme, monkeypatch, deletions_queue):
    monkeypatch.setattr(moves, "MOVE_IN_REQUEST", 2)

    reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"})

    # As the 202 says: "GET the unit until `moving` is false", before its job has marked anything
    assert reply.status == 202, reply.body
    moving = {unit: call("GET", f"/orgs/acme/units/{unit}").body["moving"] for unit in ("platform", "db", "eng", "ops")}
    assert moving == {"platform": True, "db": True, "eng": False, "ops": False}
    messages = boto3.client("sqs").receive_message(QueueUrl=deletions_queue, MaxNumberOfMessages=1)["Messages"]
    assert deliver(messages) == {"batchItemFailures": []}
    unit = call("GET", "/orgs/acme/units/platform").body
    assert (unit["moving"], unit["path"]) == (False, "/ops/platform")


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # the queue is moto's
def test_a_big_move_renames_its_unit_when_the_queue_moves_it(acme, monkeypatch, deletions_queue):
    monkeypatch.setattr(moves, "MOVE_IN_REQUEST", 2)

    reply = call(
        "PATCH", "/orgs/acme/units/platform", {"parent_id": "ops", "name": "Core"}, headers={"If-Match": '"1"'}
    )

    # Renamed by the move's own write of the unit, with its new path: not before, not apart
    assert reply.status == 202, reply.body
    assert call("GET", "/orgs/acme/units/platform").body["name"] == "Platform"
    messages = boto3.client("sqs").receive_message(QueueUrl=deletions_queue, MaxNumberOfMessages=1)["Messages"]
    assert deliver(messages) == {"batchItemFailures": []}
    unit = call("GET", "/orgs/acme/units/platform").body
    assert (unit["name"], unit["path"], unit["version"]) == ("Core", "/ops/platform", 3)  # the lock's 2, then 3


def test_the_move_lock_left_by_a_dead_request_is_finished_by_the_next_move(acme, monkeypatch):
    monkeypatch.setattr(moves, "resume", _never_finishes)
    assert call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"}).status == 200
    monkeypatch.undo()
    monkeypatch.setattr(moves, "STALE_SECONDS", -1)

    reply = call("PATCH", "/orgs/acme/units/web", {"parent_id": "ops"})

    assert reply.status == 200, reply.body
    assert_tree_is(MOVED | {"web": "/ops/web"})


def test_units_read_carries_the_root(acme):
    root, tree = units.read("acme", "root")

    assert root["path"] == "/"
    assert tree["unit_count"] == 5


def test_no_unit_is_created_or_deleted_anywhere_in_the_org_while_a_move_runs(acme, monkeypatch):
    monkeypatch.setattr(moves, "resume", _never_finishes)
    assert call("PATCH", "/orgs/acme/units/db", {"parent_id": "ops"}).status == 200  # locked, nothing marked yet

    created = create_unit("cache", "platform")  # platform is not marked: the tree item refuses
    deleted = call("DELETE", "/orgs/acme/units/web")

    assert (created.status, created.error_code) == (409, "move_in_progress")
    assert (deleted.status, deleted.error_code) == (409, "move_in_progress")
    monkeypatch.undo()
    moves.resume("acme")
    assert create_unit("cache", "platform").status == 201
    assert call("DELETE", "/orgs/acme/units/cache").status == 204


def test_a_move_under_a_unit_being_deleted_is_refused(acme):
    from controlplane.dal import keys, stamps
    from controlplane.dal.table import api_table

    api_table().mark(keys.unit_key("acme", "ops"), stamps.DELETING, stamps.now())  # its delete has begun

    reply = call("PATCH", "/orgs/acme/units/web", {"parent_id": "ops"})

    # 409, retry shortly: the delete may yet be refused (ops may have users), and ops stay
    assert (reply.status, reply.error_code) == (409, "conflict")
    assert call("GET", "/orgs/acme/units/web").body["path"] == "/eng/web"
    assert units.read("acme", "root")[1].get("move") is None  # the lock was not taken


def test_a_user_gsi2_shows_late_is_moved_by_the_second_pass(acme, monkeypatch):
    from controlplane.dal import keys, stamps
    from controlplane.dal.table import api_table

    def gsi2_catches_up(seconds: float) -> None:
        # A user placed in db just before the move marked it, whom GSI2 showed only now.
        user = {"org_id": "acme", "user_id": "late", "name": "Late", "email": "l@x.example", "role": "member"}
        item_keys = keys.user_keys("acme", "late", ("eng", "platform", "db"))
        api_table().put(stamps.new_item(item_keys, keys.USER, {**user, "unit": "db", "unit_path": "/eng/platform/db"}))

    monkeypatch.setattr(moves.time, "sleep", gsi2_catches_up)

    assert call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"}).status == 200

    assert "late" in ids(call("GET", "/orgs/acme/units/db/users"))
    assert call("GET", "/orgs/acme/units/db/users").body["items"][-1]["unit"] == "db"
    assert ids(call("GET", "/orgs/acme/units/eng/users")) == ["bea", "dee"]


EVERYONE = ["ann", "bea", "cid", "dan", "dee"]


@pytest.mark.parametrize("under", ["root", "eng", "ops", "web"])
def test_a_listing_paged_through_a_move_step_by_step_never_repeats_nor_misses_anyone(acme, monkeypatch, under):
    # Given a listing of one user a page, begun before a move of platform (cid, dan) under ops
    expected = {"root": EVERYONE, "eng": ["bea", "cid", "dan", "dee"], "ops": ["ann"], "web": ["dee"]}[under]
    path = f"/orgs/acme/units/{under}/users"
    first = call("GET", path, query={"limit": "1"})
    seen, cursor = ids(first), first.body["next_cursor"]
    monkeypatch.setattr(moves, "resume", _never_finishes)
    assert call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"}).status == 200
    monkeypatch.undo()

    # When the move goes one step at a time, and the listing asks for its next page after each
    refused = None
    for _ in range(8):
        budget = iter([60.0])
        done = moves.resume("acme", time_left=lambda budget=budget: next(budget, 0.0))
        if cursor and refused is None:
            page = call("GET", path, query={"limit": "1", "cursor": cursor})
            if page.status == 409:
                refused = page.error_code
            else:
                seen, cursor = seen + ids(page), page.body["next_cursor"]
        if done:
            break

    # Then it either said to wait or to start again, or it listed everyone exactly once
    while cursor and refused is None:
        page = call("GET", path, query={"limit": "1", "cursor": cursor})
        if page.status == 409:
            refused = page.error_code
        else:
            seen, cursor = seen + ids(page), page.body["next_cursor"]
    if refused:
        assert under in ("root", "eng", "ops") and refused in ("move_in_progress", "conflict")
    else:
        assert len(seen) == len(set(seen)) and sorted(seen) == expected


def leave_an_abandoned_move(monkeypatch, unit_id: str, parent_id: str) -> None:
    """A request that took the move lock of ``unit_id`` under ``parent_id`` and died, 120 s ago."""
    monkeypatch.setattr(moves, "resume", _never_finishes)
    assert call("PATCH", f"/orgs/acme/units/{unit_id}", {"parent_id": parent_id}).status == 200
    monkeypatch.undo()
    monkeypatch.setattr(moves, "STALE_SECONDS", -1)


def test_a_move_of_a_unit_an_abandoned_move_moved_first_is_not_lost(acme, monkeypatch):
    # Given a dead request's move of platform (with db) under ops, not done yet
    leave_an_abandoned_move(monkeypatch, "platform", "ops")

    # When db is moved under web: the abandoned move is finished first, and moves db to /ops/platform/db
    reply = call("PATCH", "/orgs/acme/units/db", {"parent_id": "web"})

    # Then db moves from where it is now, not from where it was read before the lock
    assert (reply.status, reply.body["path"]) == (200, "/eng/web/db"), reply.body
    assert_tree_is(MOVED | {"db": "/eng/web/db"})


def test_a_subtree_an_abandoned_move_deepened_first_is_not_moved_too_deep(acme, monkeypatch):
    # Given ops (depth 1) with a chain d2 .. d8 below it, and a dead request's move of w1 (with w2) under web
    parent = "ops"
    for depth in range(2, 9):
        assert create_unit(f"d{depth}", parent).status == 201
        parent = f"d{depth}"
    create_unit("w1")
    create_unit("w2", "w1")
    leave_an_abandoned_move(monkeypatch, "w1", "web")

    # When web (2 deep as read before the lock, 4 deep once the abandoned move is done) moves under d8
    reply = call("PATCH", "/orgs/acme/units/web", {"parent_id": "d8"})

    # Then the depth counted is the one under the lock: refused, nothing moved, the lock released
    assert (reply.status, reply.error_code) == (409, "limit_exceeded")
    assert call("GET", "/orgs/acme/units/w2").body["path"] == "/eng/web/w1/w2"
    assert call("PATCH", "/orgs/acme/units/w1", {"parent_id": "ops"}).status == 200


def test_a_move_just_after_its_unit_was_created_does_not_need_gsi1_to_show_it(acme, monkeypatch):
    from controlplane.dal.table import Table

    query_all = Table.query_all

    def gsi1_lags_once(self, *args, **options):
        monkeypatch.setattr(Table, "query_all", query_all)
        return iter([[]])  # the unit just created is not in GSI1 yet

    create_unit("cache", "db")
    monkeypatch.setattr(Table, "query_all", gsi1_lags_once)

    reply = call("PATCH", "/orgs/acme/units/cache", {"parent_id": "ops"})

    assert (reply.status, reply.body["path"]) == (200, "/ops/cache"), reply.body


def test_a_unit_created_a_moment_before_its_ancestors_move_moves_with_it(acme, monkeypatch):
    # Given GSI1 that shows a unit only 0.2 s after its creation, and a settle time of 0.5 s
    import time

    from controlplane.dal.schema import GSI1_NAME
    from controlplane.dal.table import Table

    monkeypatch.setenv("GSI1_SETTLE_SECONDS", "0.5")
    config.reset()
    created, query = {}, Table.query

    def lagging(self, partition, **options):
        items, last = query(self, partition, **options)
        if options.get("index") == GSI1_NAME:
            items = [i for i in items if time.time() >= created.get(i.get("unit_id"), 0) + 0.2]
        return items, last

    monkeypatch.setattr(Table, "query", lagging)
    create_unit("fresh", "web")
    created["fresh"] = time.time()

    # When web's parent moves at once
    assert call("PATCH", "/orgs/acme/units/eng", {"parent_id": "ops"}).status == 200

    # Then the move waited for GSI1 to show the new unit, which moved with its subtree
    assert call("GET", "/orgs/acme/units/fresh").body["path"] == "/ops/eng/web/fresh"


def test_a_unit_whose_create_committed_long_after_its_stamp_moves_with_its_ancestor_after_one_wait(acme, monkeypatch):
    import time
    from decimal import Decimal

    from controlplane.dal.codec import to_dynamo
    from controlplane.dal.schema import GSI1_NAME
    from controlplane.dal.table import Table, api_table

    # Given a settle time of 0.5 s, a unit created under web whose create was stamped a second before
    # it committed (its transaction was retried), and GSI1 that shows it only 0.2 s after the commit
    monkeypatch.setenv("GSI1_SETTLE_SECONDS", "0.5")
    config.reset()
    create_unit("fresh", "web")
    table = api_table()
    table.client.update_item(
        TableName=table.name,
        Key=to_dynamo(keys.tree_key("acme")),
        UpdateExpression="SET #created = :at",
        ExpressionAttributeNames={"#created": tree.LAST_CREATED},
        ExpressionAttributeValues=to_dynamo({":at": Decimal(str(time.time() - 1))}),
    )
    shown_at, query, sleep, slept = time.time() + 0.2, Table.query, time.sleep, []

    def lagging(self, partition, **options):
        items, last = query(self, partition, **options)
        if options.get("index") == GSI1_NAME and time.time() < shown_at:
            items = [i for i in items if i.get("unit_id") != "fresh"]
        return items, last

    def recorded(seconds):
        slept.append(seconds)
        sleep(seconds)

    monkeypatch.setattr(Table, "query", lagging)
    monkeypatch.setattr(time, "sleep", recorded)

    # When web's parent moves at once
    assert call("PATCH", "/orgs/acme/units/eng", {"parent_id": "ops"}).status == 200

    # Then the move waited for GSI1 to show the new unit, which moved with its subtree; once, from its
    # lock (the other wait is GSI2's, for the users' second look)
    assert call("GET", "/orgs/acme/units/fresh").body["path"] == "/ops/eng/web/fresh"
    assert len([s for s in slept if s > 0]) == 2, slept


def test_a_listing_goes_on_through_unrelated_moves_one_between_each_two_pages(acme):
    # Given a listing of web's subtree, one unit a page, and three units elsewhere
    for unit_id, parent_id in [("w1", "web"), ("w2", "web"), ("a", None), ("b", None), ("c", None)]:
        create_unit(unit_id, parent_id)
    first = call("GET", "/orgs/acme/units", query={"under": "web", "limit": "1"})
    seen, cursor = ids(first), first.body["next_cursor"]

    # When an unrelated move happens before each next page
    for unit_id, parent_id in [("a", "b"), ("c", "b"), ("b", "ops")]:
        assert call("PATCH", f"/orgs/acme/units/{unit_id}", {"parent_id": parent_id}).status == 200
        page = call("GET", "/orgs/acme/units", query={"under": "web", "limit": "1", "cursor": cursor})
        seen, cursor = seen + ids(page), page.body["next_cursor"]

    # Then each page went on: the cursor carries the moves its page checked
    assert (seen, cursor) == (["web", "w1", "w2"], None)


def test_a_cursor_two_moves_old_starts_again_even_if_neither_overlaps(acme):
    for unit_id, parent_id in [("w1", "web"), ("a", None), ("b", None), ("c", None)]:
        create_unit(unit_id, parent_id)
    first = call("GET", "/orgs/acme/units", query={"under": "web", "limit": "1"})
    for unit_id in ("a", "c"):
        assert call("PATCH", f"/orgs/acme/units/{unit_id}", {"parent_id": "b"}).status == 200

    reply = call("GET", "/orgs/acme/units", query={"under": "web", "cursor": first.body["next_cursor"]})

    assert (reply.status, reply.error_code) == (409, "conflict")  # the tree item keeps the last move only


def test_a_move_whose_unit_another_move_moved_before_the_lock_moves_it_from_there(acme, monkeypatch):
    lock = tree.lock_move  # the move has read the tree when it calls this

    def platform_moves_first(*args):
        monkeypatch.setattr(tree, "lock_move", lock)
        assert moves.move_unit("acme", "platform", "web", OPERATOR) is True  # db is at /eng/web/platform/db
        return lock(*args)

    monkeypatch.setattr(tree, "lock_move", platform_moves_first)

    reply = call("PATCH", "/orgs/acme/units/db", {"parent_id": "ops"})

    assert (reply.status, reply.body["path"]) == (200, "/ops/db"), reply.body
    assert_tree_is({"eng": "/eng", "web": "/eng/web", "platform": "/eng/web/platform", "ops": "/ops", "db": "/ops/db"})


def test_units_created_below_a_unit_before_the_lock_count_in_its_depth(acme, monkeypatch):
    parent = "ops"
    for depth in range(2, 9):  # ops is at depth 1: a chain to d8, at depth 8
        create_unit(f"d{depth}", parent)
        parent = f"d{depth}"
    lock = tree.lock_move  # the move has read the tree when it calls this

    def web_deepens_first(*args):
        monkeypatch.setattr(tree, "lock_move", lock)
        assert create_unit("w1", "web").status == 201
        assert create_unit("w2", "w1").status == 201  # web's subtree is 3 deep now
        return lock(*args)

    monkeypatch.setattr(tree, "lock_move", web_deepens_first)

    reply = call("PATCH", "/orgs/acme/units/web", {"parent_id": "d8"})

    assert (reply.status, reply.error_code) == (409, "limit_exceeded")
    assert call("GET", "/orgs/acme/units/w2").body["path"] == "/eng/web/w1/w2"


def test_a_move_and_rename_refused_under_its_lock_moves_and_renames_nothing(acme, monkeypatch):
    # Given web's subtree deepened by two units after the PATCH below planned its move, before its lock
    parent = "ops"
    for depth in range(2, 9):  # ops is at depth 1: a chain to d8, at depth 8
        create_unit(f"d{depth}", parent)
        parent = f"d{depth}"
    lock = tree.lock_move

    def web_deepens_first(*args):
        monkeypatch.setattr(tree, "lock_move", lock)
        assert create_unit("w1", "web").status == 201
        assert create_unit("w2", "w1").status == 201
        return lock(*args)

    monkeypatch.setattr(tree, "lock_move", web_deepens_first)

    # When web is moved under d8 and renamed in one PATCH, at the version the client read
    reply = call("PATCH", "/orgs/acme/units/web", {"parent_id": "d8", "name": "Web team"}, headers={"If-Match": '"1"'})

    # Then it is refused under its lock, and moves and renames nothing; the lock's version stays (a
    # GET meanwhile may have shown it), so the client reads the unit again before a retry
    assert (reply.status, reply.error_code) == (409, "limit_exceeded"), reply.body
    web = call("GET", "/orgs/acme/units/web")
    assert (web.body["name"], web.body["path"], web.body["version"]) == ("Web", "/eng/web", 2)
    assert call("PATCH", "/orgs/acme/units/web", {"name": "Web team"}, headers={"If-Match": '"1"'}).status == 412
    assert (
        call("PATCH", "/orgs/acme/units/web", {"name": "Web team"}, headers={"If-Match": web.headers["ETag"]}).status
        == 200
    )


def test_a_move_and_rename_refused_after_a_rename_since_its_lock_keeps_that_renames_version(acme, monkeypatch):
    # Given platform renamed by someone else once the PATCH below holds its lock, then an outage
    def renamed_then_unreachable(*args, **kwargs):
        assert call("PATCH", "/orgs/acme/units/platform", {"name": "Platform team"}).status == 200
        _unreachable()

    monkeypatch.setattr(moves, "_settle", renamed_then_unreachable)

    # When platform is moved and renamed in one PATCH
    reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops", "name": "Core"})

    # Then it is 503, and the rename since stands at its own version (2: the lock's; 3: the rename)
    assert (reply.status, reply.error_code) == (503, "service_unavailable"), reply.body
    unit = call("GET", "/orgs/acme/units/platform").body
    assert (unit["name"], unit["path"], unit["version"]) == ("Platform team", "/eng/platform", 3)


def _unreachable(*args, **kwargs):
    from botocore.exceptions import EndpointConnectionError

    raise EndpointConnectionError(endpoint_url="https://dynamodb.us-east-1.amazonaws.com")


def test_a_version_read_while_a_refused_move_held_its_lock_never_names_a_later_state(acme, monkeypatch):
    # Given a client that reads platform while a move and rename of it holds the org's lock (its
    # ETag then is the lock's version), and the move then refused (an outage)
    seen = []

    def read_then_unreachable(*args, **kwargs):
        seen.append(call("GET", "/orgs/acme/units/platform").headers["ETag"])
        _unreachable()

    monkeypatch.setattr(moves, "_settle", read_then_unreachable)
    reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops", "name": "Core"})
    assert (reply.status, reply.error_code) == (503, "service_unavailable"), reply.body
    monkeypatch.undo()
    # And someone else renames it since, at the version they read after the refusal
    now = call("GET", "/orgs/acme/units/platform").headers["ETag"]
    assert (
        call("PATCH", "/orgs/acme/units/platform", {"name": "Platform team"}, headers={"If-Match": now}).status == 200
    )

    # When the first client writes with the ETag it read during the lock, which never saw that rename
    stale = call("PATCH", "/orgs/acme/units/platform", {"name": "Platforms"}, headers={"If-Match": seen[0]})

    # Then it is 412: a version, once shown, never names another state of the unit (no lost update)
    assert (stale.status, stale.error_code) == (412, "precondition_failed"), (seen, now, stale.body)
    assert call("GET", "/orgs/acme/units/platform").body["name"] == "Platform team"


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # the queue is moto's
def test_a_big_move_that_cannot_queue_itself_gives_its_lock_back(acme, monkeypatch, deletions_queue):
    # Given a move big enough for the queue, and SQS that cannot be reached
    monkeypatch.setattr(moves, "MOVE_IN_REQUEST", 2)
    with monkeypatch.context() as outage:
        outage.setattr(moves, "enqueue", _unreachable)

        # When the move is asked for
        reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"})

    # Then it is 503, moved nothing, and left no lock: the next move goes through
    assert (reply.status, reply.error_code) == (503, "service_unavailable"), reply.body
    assert call("GET", "/orgs/acme/units/platform").body["path"] == "/eng/platform"
    assert call("PATCH", "/orgs/acme/units/eng", {"parent_id": "ops"}).status == 202


def test_a_move_that_fails_under_its_lock_before_its_first_write_gives_the_lock_back(acme, monkeypatch):
    # Given DynamoDB cannot be reached once the move (and rename) holds its lock
    with monkeypatch.context() as outage:
        outage.setattr(moves, "_settle", _unreachable)
        reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops", "name": "Core"})

    # Then the move is 503 and left no lock (its version stays): asked again, it goes through at once
    assert (reply.status, reply.error_code) == (503, "service_unavailable"), reply.body
    assert call("GET", "/orgs/acme/units/platform").body["version"] == 2
    assert call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"}).status == 200
    assert_tree_is(MOVED)


def test_a_move_that_died_half_way_is_not_done_for_its_retry_until_it_is_finished(acme, monkeypatch):
    from controlplane.dal import tree as tree_module

    # Given a move of platform under ops whose request died after marking its units (a timeout, say:
    # it noted nothing on its lock, as it does when an outage stops it)
    with monkeypatch.context() as dying:
        dying.setattr(tree_module, "note_marked", _unreachable)
        dying.setattr(tree_module, "note_stopped", _unreachable)
        assert call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"}).status == 503

    # When it is asked for again while it could still be running, and once it is older than any request lives
    early = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"})
    monkeypatch.setattr(moves, "STALE_SECONDS", -1)
    late = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"})

    # Then the early retry is 409 (not a 200 over stale paths), and the late one finishes the move
    assert (early.status, early.error_code) == (409, "move_in_progress"), early.body
    assert (late.status, late.body["path"], late.body["moving"]) == (200, "/ops/platform", False), late.body
    assert_tree_is(MOVED)


def _stopped_half_way(monkeypatch) -> None:
    """A move of platform under ops with no queue (make run) whose request loses DynamoDB once its
    units are marked: answered 202, as in the cloud, and nothing has run it on since."""
    from controlplane.dal import tree as tree_module

    with monkeypatch.context() as outage:
        outage.setattr(tree_module, "note_marked", _unreachable)
        reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"})
    assert (reply.status, reply.body.get("status")) == (202, "moving"), reply.body
    assert api_table().get(keys.tree_key("acme"), consistent=True)[tree.MOVE][tree.STOPPED] is True


def test_a_move_an_outage_stops_half_way_with_no_queue_answers_202_and_its_units_get_finishes_it(acme, monkeypatch):
    # Given a move with no queue (make run) stopped half-way by an outage: 202, as in the cloud
    _stopped_half_way(monkeypatch)

    # When the unit is read, as the 202 says (until `moving` is false)
    read = call("GET", "/orgs/acme/units/platform")

    # Then that read ran the move on to its end, as the queue's job would have: every path is right,
    # and the org takes new units at once, with no one asking for a move again
    assert (read.status, read.body["path"], read.body["moving"]) == (200, "/ops/platform", False), read.body
    assert_tree_is(MOVED)
    assert create_unit("cache", "platform").status == 201


@pytest.mark.parametrize(
    "request_", ["create", "delete", "list", "list_users", "move_again", "create_user_in_it", "move_user_into_it"]
)
def test_a_move_stopped_with_no_queue_is_run_on_by_the_next_request_that_meets_its_lock(acme, monkeypatch, request_):
    # Given a move with no queue (make run) stopped half-way by an outage, and no GET of its unit since
    assert create_unit("spare", "web").status == 201
    _stopped_half_way(monkeypatch)

    # When a request on the org's units meets its lock
    reply = {
        "create": lambda: create_unit("cache", "web"),
        "delete": lambda: call("DELETE", "/orgs/acme/units/spare"),
        "list": lambda: call("GET", "/orgs/acme/units"),
        "list_users": lambda: call("GET", "/orgs/acme/units/eng/users"),
        "move_again": lambda: call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"}),
        # The users function's requests: db is marked, so no one joins it until the move has run on
        "create_user_in_it": lambda: create_user("acme", "eve", unit="db"),
        "move_user_into_it": lambda: call("PATCH", "/orgs/acme/users/ann", {"unit": "db"}),
    }[request_]()

    # Then it runs the move on first and is answered as after it, not 409 move_in_progress for a
    # lock that nothing would end
    assert reply.status < 300, reply.body
    if request_ == "move_again":
        assert (reply.body["path"], reply.body["moving"]) == ("/ops/platform", False), reply.body
    assert tree.MOVE not in api_table().get(keys.tree_key("acme"), consistent=True)
    assert call("GET", "/orgs/acme/units/db").body["path"] == "/ops/platform/db"
    assert call("GET", "/orgs/acme/users/dan").body["unit"] == "db"
    joined = {"create_user_in_it": ["eve"], "move_user_into_it": ["ann"]}.get(request_, [])
    assert ids(call("GET", "/orgs/acme/units/db/users", query={"direct": "true"})) == sorted(["dan", *joined])


def test_a_stopped_moves_run_on_that_an_outage_stops_again_leaves_it_for_the_next_read(acme, monkeypatch):
    # Given a move with no queue stopped half-way, and DynamoDB failing again as a read runs it on
    _stopped_half_way(monkeypatch)
    from controlplane.dal import tree as tree_module

    with monkeypatch.context() as outage:
        outage.setattr(tree_module, "unlock_move", _unreachable)
        first = call("GET", "/orgs/acme/units/platform")

    # Then that read answers the unit as moving (not a 503), the lock stays noted, and the next read finishes it
    assert (first.status, first.body["moving"]) == (200, True), first.body
    assert api_table().get(keys.tree_key("acme"), consistent=True)[tree.MOVE][tree.STOPPED] is True
    second = call("GET", "/orgs/acme/units/platform")
    assert (second.status, second.body["moving"]) == (200, False), second.body
    assert_tree_is(MOVED)


def test_a_user_import_into_a_unit_a_stopped_move_marked_runs_the_move_on_and_places_its_users(acme, monkeypatch):
    # Given a move with no queue (make run) stopped half-way by an outage: db is marked, no one may join it
    _stopped_half_way(monkeypatch)

    # When an import places a user in db (its job runs within the request, make run's way)
    row = {"user_id": "eve", "name": "Eve", "email": "eve@example.com", "unit": "db"}
    started = call("POST", "/orgs/acme/user-imports", {"rows": [row]})

    # Then the job ran the move on, as the unit routes do, and placed eve at db's new path: the import
    # is done, where it would wait, running, for a move that nothing would ever finish
    assert (started.status, started.body["status"], started.body["created"]) == (202, "done", 1), started.body
    assert tree.MOVE not in api_table().get(keys.tree_key("acme"), consistent=True)
    assert ids(call("GET", "/orgs/acme/units/db/users", query={"direct": "true"})) == ["dan", "eve"]
    assert call("GET", "/orgs/acme/units/db").body["path"] == "/ops/platform/db"


def test_a_stopped_moves_run_on_that_meets_a_bug_is_answered_as_the_bug(acme, monkeypatch):
    # Given a move with no queue stopped half-way, and a bug (no outage) as a read runs it on
    _stopped_half_way(monkeypatch)

    def bug(*args, **kwargs):
        raise KeyError("injected")

    with monkeypatch.context() as failing:
        failing.setattr(moves, "resume", bug)
        read = call("GET", "/orgs/acme/units/platform")

    # Then the read is the bug's 500, not a unit answered as still moving, and the lock stays for the next read
    assert (read.status, read.error_code) == (500, "internal_error"), read.body
    assert call("GET", "/orgs/acme/units/platform").body["moving"] is False
    assert_tree_is(MOVED)


def test_a_move_stopped_with_no_queue_whose_note_fails_too_is_503_and_waits_for_a_move_after_60_s(acme, monkeypatch):
    from controlplane.dal import tree as tree_module

    # Given a move with no queue whose request loses DynamoDB once its units are marked, and again as
    # it notes its lock stopped
    with monkeypatch.context() as outage:
        outage.setattr(tree_module, "note_marked", _unreachable)
        outage.setattr(tree_module, "note_stopped", _unreachable)
        reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"})

    # Then the outage's 503 stands (as when the queue fails too), and the lock is a dead request's:
    # a read of the unit does not run it on (it may still be running)
    assert (reply.status, reply.error_code) == (503, "service_unavailable"), reply.body
    read = call("GET", "/orgs/acme/units/platform")
    assert (read.status, read.body["moving"]) == (200, True), read.body
    refused = create_unit("cache", "web")
    assert (refused.status, refused.error_code) == (409, "move_in_progress"), refused.body


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # the queue is moto's
def test_a_move_that_fails_half_way_in_its_request_hands_the_rest_to_the_queue(acme, monkeypatch, deletions_queue):
    from controlplane.dal import tree as tree_module

    # Given a move of platform under ops whose request loses DynamoDB once its units are marked
    with monkeypatch.context() as outage:
        outage.setattr(tree_module, "note_marked", _unreachable)
        reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"})

    # Then it goes on from the queue (202), and no one has to ask for a move again to end its lock:
    # once its job has run, every path is right and the org takes new units again
    assert (reply.status, reply.body.get("status")) == (202, "moving"), reply.body
    messages = boto3.client("sqs").receive_message(QueueUrl=deletions_queue, MaxNumberOfMessages=1).get("Messages")
    assert messages, "the rest of the move was not queued"
    held = units.read("acme", "root")[1]["move"]["id"]
    assert json.loads(messages[0]["Body"]) == {"kind": move_queue.KIND, "org_id": "acme", "move_id": held}
    assert deliver(messages) == {"batchItemFailures": []}
    assert_tree_is(MOVED)
    assert create_unit("cache", "platform").status == 201


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # the queue is moto's
def test_a_move_that_fails_half_way_on_a_bug_is_not_queued(acme, monkeypatch, deletions_queue):
    from controlplane.dal import tree as tree_module

    # Given a move whose run in its request meets an error that is no outage (a bug)
    def bug(*args, **kwargs):
        raise KeyError("injected")

    with monkeypatch.context() as failing:
        failing.setattr(tree_module, "note_marked", bug)
        reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"})

    # Then it is answered as the bug it is, not as a move accepted, and nothing is queued
    assert (reply.status, reply.error_code) == (500, "internal_error"), reply.body
    assert "Messages" not in boto3.client("sqs").receive_message(QueueUrl=deletions_queue)


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # the queue is moto's
def test_a_move_failing_half_way_when_the_queue_fails_too_is_503_and_keeps_its_lock(acme, monkeypatch, deletions_queue):
    from controlplane.dal import tree as tree_module

    # Given a move whose request loses DynamoDB once its units are marked, and SQS as it hands the rest over
    def queue_down(*args, **kwargs):
        raise _sqs_unreachable()

    with monkeypatch.context() as outage:
        outage.setattr(tree_module, "note_marked", _unreachable)
        outage.setattr(move_queue, "enqueue", queue_down)
        reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"})

    # Then the outage's 503 stands, no job was queued, and the lock still holds the org's unit creates
    # (the next move of the org, once the lock is abandoned, finishes this one)
    assert (reply.status, reply.error_code) == (503, "service_unavailable"), reply.body
    assert "Messages" not in boto3.client("sqs").receive_message(QueueUrl=deletions_queue)
    refused = create_unit("cache", "platform")
    assert (refused.status, refused.error_code) == (409, "move_in_progress"), refused.body


def _sqs_unreachable():
    from botocore.exceptions import EndpointConnectionError

    return EndpointConnectionError(endpoint_url="https://sqs.us-east-1.amazonaws.com")


def test_a_move_another_run_finished_meanwhile_answers_the_moved_unit(acme, monkeypatch):
    from controlplane.dal import tree as tree_module

    # Given another run finishes the move while this one is about to note its marks
    note_marked, finished = tree_module.note_marked, []

    def finished_meanwhile(*args, **kwargs):
        if not finished:
            finished.append(True)
            with monkeypatch.context() as other_run:
                other_run.setattr(tree_module, "note_marked", note_marked)
                assert moves.resume("acme") is True
        return note_marked(*args, **kwargs)

    monkeypatch.setattr(tree_module, "note_marked", finished_meanwhile)

    # When the move runs
    reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"})

    # Then it answers the moved unit, not a 500
    assert finished == [True]  # the other run did finish it meanwhile
    assert (reply.status, reply.body["path"]) == (200, "/ops/platform"), reply.body
    assert_tree_is(MOVED)


def test_a_moves_if_match_that_loses_to_a_rename_before_the_lock_is_412(acme, monkeypatch):
    from controlplane.dal import tree as tree_module

    # Given platform is renamed (version 2) after the move read version 1 and before it takes its lock
    lock_move, renamed = tree_module.lock_move, []

    def renamed_meanwhile(*args, **kwargs):
        if not renamed:
            renamed.append(call("PATCH", "/orgs/acme/units/platform", {"name": "Platform team"}).status)
        return lock_move(*args, **kwargs)

    monkeypatch.setattr(tree_module, "lock_move", renamed_meanwhile)

    # When the move is asked for with If-Match: "1"
    reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"}, headers={"If-Match": '"1"'})

    # Then it is 412, and nothing moved
    assert renamed == [200]
    assert (reply.status, reply.error_code) == (412, "precondition_failed"), reply.body
    assert call("GET", "/orgs/acme/units/platform").body["path"] == "/eng/platform"


def test_a_listing_the_last_move_changed_waits_until_the_indexes_have_settled(acme, monkeypatch):
    import time

    # Given a settle time of 0.5 s and a move of platform under ops that has just ended
    monkeypatch.setenv("GSI1_SETTLE_SECONDS", "0.5")
    config.reset()
    assert call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"}).status == 200

    # When the subtrees it changed, and one it did not, are listed at once
    changed = [call("GET", f"/orgs/acme/units/{unit}/users") for unit in ("ops", "eng")]
    unrelated = call("GET", "/orgs/acme/units/web/users")

    # Then those it changed are 409 with Retry-After until GSI2 has had the settle time; the other is not
    assert [(r.status, r.error_code) for r in changed] == [(409, "move_in_progress")] * 2
    assert ids(unrelated) == ["dee"]
    time.sleep(0.5)
    assert sorted(ids(call("GET", "/orgs/acme/units/ops/users"))) == ["ann", "cid", "dan"]
    config.reset()


def test_a_move_refused_under_its_lock_does_not_end_the_wait_for_the_indexes_after_the_move_before(acme, monkeypatch):
    # Given a settle time of 5 s, a move of platform under ops that has just ended, and then a move
    # elsewhere (fin under hr) that fails under its lock before its first write (an outage: 503, released)
    create_unit("hr", None)
    create_unit("fin", None)
    monkeypatch.setenv("GSI1_SETTLE_SECONDS", "5")
    config.reset()
    monkeypatch.setattr(moves.time, "sleep", lambda seconds: None)  # the moves need not wait here
    assert call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"}).status == 200

    subtree, reads = moves._subtree, []

    def outage_under_the_lock(*args, **kwargs):
        reads.append(1)
        if len(reads) == 2:  # the plan's read went through; the one under the lock fails
            raise ServiceUnavailable("DynamoDB is failing")
        return subtree(*args, **kwargs)

    with monkeypatch.context() as failing:
        failing.setattr(moves, "_subtree", outage_under_the_lock)
        assert call("PATCH", "/orgs/acme/units/fin", {"parent_id": "hr"}).status == 503

    # When the subtrees the first move changed are listed at once
    changed = [call("GET", f"/orgs/acme/units/{unit}/users") for unit in ("ops", "eng")]

    # Then they still wait for the indexes to show the first move's writes: the refused move moved nothing
    assert [(r.status, r.error_code) for r in changed] == [(409, "move_in_progress")] * 2
    config.reset()


def test_a_run_finishing_a_dead_requests_move_stops_once_another_run_finished_it(acme, monkeypatch):
    # Given a move of platform under ops whose request died holding the lock, and a run that has read
    # that lock to finish it
    monkeypatch.setattr(moves, "resume", _never_finishes)
    assert call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"}).status == 200
    monkeypatch.undo()
    monkeypatch.setattr(moves, "STALE_SECONDS", -1)
    settle, overtaken = moves._settle, []

    def overtaken_meanwhile(*args, **kwargs):
        if not overtaken:  # meanwhile another run finishes it, and platform is moved back
            overtaken.append("read")
            overtaken.append(moves.resume("acme"))
            overtaken.append(call("PATCH", "/orgs/acme/units/platform", {"parent_id": "eng"}).status)
        return settle(*args, **kwargs)

    monkeypatch.setattr(moves, "_settle", overtaken_meanwhile)

    # When the run goes on (the resolver's, for a move of web that the lock refused), and web is moved after
    assert stopped_moves.run_stopped("acme") is True
    monkeypatch.undo()
    assert call("PATCH", "/orgs/acme/units/web", {"parent_id": "ops"}).status == 200

    # Then it moved nothing back: every path is where the last move put it, and no mark is left
    assert overtaken == ["read", True, 200]
    assert_tree_is({**MOVED, "platform": "/eng/platform", "db": "/eng/platform/db", "web": "/ops/web"})


def test_a_rename_with_the_if_match_a_move_and_rename_had_loses_to_it(acme, monkeypatch):
    # Given a PATCH of platform, If-Match "1", renamed with "1" too once the move+rename below holds its lock
    resume, renamed = moves.resume, []

    def renamed_meanwhile(*args, **kwargs):
        renamed.append(call("PATCH", "/orgs/acme/units/platform", {"name": "Team"}, headers={"If-Match": '"1"'}))
        return resume(*args, **kwargs)

    monkeypatch.setattr(moves, "resume", renamed_meanwhile)

    # When platform is moved under ops and renamed Core in one PATCH, If-Match "1"
    move_and_rename = {"parent_id": "ops", "name": "Core"}
    reply = call("PATCH", "/orgs/acme/units/platform", move_and_rename, headers={"If-Match": '"1"'})

    # Then one of the two writes made at version 1 wins, the other is 412: no 200 whose name is lost
    assert reply.status == 200, reply.body
    assert renamed[0].status == 412, renamed[0].body
    unit = call("GET", "/orgs/acme/units/platform").body
    assert (unit["name"], unit["path"]) == ("Core", "/ops/platform")
    assert (reply.body["name"], reply.body["version"]) == ("Core", unit["version"])


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # the queue is moto's
def test_a_rename_at_the_version_a_queued_move_and_rename_was_accepted_at_is_412(acme, monkeypatch, deletions_queue):
    monkeypatch.setattr(moves, "MOVE_IN_REQUEST", 2)
    move_and_rename = {"parent_id": "ops", "name": "Core"}
    reply = call("PATCH", "/orgs/acme/units/platform", move_and_rename, headers={"If-Match": '"1"'})
    assert reply.status == 202, reply.body

    # A rename at the version the accepted PATCH was checked at does not silently undo its rename
    late = call("PATCH", "/orgs/acme/units/platform", {"name": "Team"}, headers={"If-Match": '"1"'})
    messages = boto3.client("sqs").receive_message(QueueUrl=deletions_queue, MaxNumberOfMessages=1)["Messages"]
    assert deliver(messages) == {"batchItemFailures": []}

    assert late.status == 412, late.body
    unit = call("GET", "/orgs/acme/units/platform").body
    assert (unit["name"], unit["path"]) == ("Core", "/ops/platform")


BEFORE = {"eng": "/eng", "web": "/eng/web", "ops": "/ops", "platform": "/eng/platform", "db": "/eng/platform/db"}


def _move_lock_held() -> bool:
    return tree.MOVE in (api_table().get(keys.tree_key("acme"), consistent=True) or {})


def test_a_move_whose_unit_is_moved_again_before_each_of_its_three_locks_is_409_and_moves_nothing(acme, monkeypatch):
    # Given platform, which another move moves (and finishes) between this move's every plan and its lock
    lock_move, others, inside = tree.lock_move, [], []

    def moved_meanwhile(*args, **kwargs):
        if not inside and len(others) < 3:  # this move's lock (not the other's): the other moves first
            inside.append(True)
            others.append(
                call("PATCH", "/orgs/acme/units/platform", {"parent_id": ("web", "eng", "web")[len(others)]}).status
            )
            inside.clear()
        return lock_move(*args, **kwargs)

    monkeypatch.setattr(tree, "lock_move", moved_meanwhile)

    # When platform is moved under ops
    reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"})

    # Then it gives up (the client retries), holds no lock, and platform is where the last other move put it
    assert others == [200, 200, 200]
    assert (reply.status, reply.error_code) == (409, "move_in_progress"), reply.body
    assert int(reply.headers["Retry-After"]) > 0
    assert not _move_lock_held()
    monkeypatch.undo()
    assert_tree_is(BEFORE | {"platform": "/eng/web/platform", "db": "/eng/web/platform/db"})


def test_a_move_of_a_unit_its_delete_has_marked_is_409_and_takes_no_lock(acme):
    # Given web, which a delete under way has marked
    api_table().mark(keys.unit_key("acme", "web"), stamps.DELETING, stamps.now())

    # When web is moved under ops
    reply = call("PATCH", "/orgs/acme/units/web", {"parent_id": "ops"})

    # Then it is refused at once as the unit's delete under way (retry shortly: that delete may yet be
    # refused), and no lock is left
    assert (reply.status, reply.error_code) == (409, "conflict"), reply.body
    assert call("GET", "/orgs/acme/units/web").body["path"] == "/eng/web"
    assert not _move_lock_held()


def test_a_move_to_where_a_move_finishing_meanwhile_puts_the_unit_answers_the_unit(acme, monkeypatch):
    # Given a move of platform under ops that has put platform there (marked) and not finished yet
    monkeypatch.setattr(moves, "resume", _never_finishes)
    assert call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"}).status == 200
    monkeypatch.undo()
    budget = iter([60.0])
    assert moves.resume("acme", time_left=lambda: next(budget, 0.0)) is False
    read, finished = units.read, []

    def finished_after_the_plans_reads(org_id, unit_id):
        found = read(org_id, unit_id)
        if unit_id == "ops" and not finished:  # the plan's second read: the move ends now
            finished.append(moves.resume("acme"))
        return found

    monkeypatch.setattr(units, "read", finished_after_the_plans_reads)

    # When platform is moved under ops again, and the move under way finishes before it looks at the lock
    reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"})

    # Then it answers platform where it is: nothing more to move, not a 500
    assert finished == [True]
    assert (reply.status, reply.body["path"], reply.body["moving"]) == (200, "/ops/platform", False), reply.body
    monkeypatch.undo()
    assert_tree_is(MOVED)


def test_a_run_without_the_time_to_wait_for_gsi1_stops_before_any_write_and_the_next_run_finishes(acme, monkeypatch):
    # Given a settle time of 1 s since the org's last unit was created, and a move that holds its lock
    monkeypatch.setenv("GSI1_SETTLE_SECONDS", "1")
    config.reset()
    with monkeypatch.context() as stalled:
        stalled.setattr(moves, "resume", _never_finishes)
        assert call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"}).status == 200

    # When a run has less time left than the wait and a step, then it stops (to be queued again) and writes nothing
    assert moves.resume("acme", time_left=lambda: moves.STEP_SECONDS + 0.5) is False
    assert call("GET", "/orgs/acme/units/platform").body["path"] == "/eng/platform"

    # And a run with the time finishes the move
    assert moves.resume("acme") is True
    monkeypatch.setenv("GSI1_SETTLE_SECONDS", "0")  # the listings need not wait for the indexes either
    config.reset()
    assert_tree_is(MOVED)


def test_a_run_whose_move_another_run_finished_and_a_later_move_undid_moves_no_user_back(acme, monkeypatch):
    # Given a move of platform under ops whose run has marked its units; meanwhile another run
    # finishes that move, and a later move puts platform back under eng
    note_marked, meanwhile = tree.note_marked, []

    def overtaken(*args, **kwargs):
        noted = note_marked(*args, **kwargs)
        if not meanwhile:
            meanwhile.append("marked")
            with monkeypatch.context() as others:
                others.setattr(tree, "note_marked", note_marked)
                meanwhile.append(moves.resume("acme"))
                meanwhile.append(call("PATCH", "/orgs/acme/units/platform", {"parent_id": "eng"}).status)
        return noted

    monkeypatch.setattr(tree, "note_marked", overtaken)

    # When the first run goes on to the users
    call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"})

    # Then it stops there: every unit and user is where the last move put them
    assert meanwhile == ["marked", True, 200]
    monkeypatch.undo()
    assert_tree_is(BEFORE)


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # the queue is moto's
def test_a_queued_move_out_of_time_queues_the_rest_and_its_next_delivery_finishes_it(
    acme, monkeypatch, deletions_queue
):
    # Given a move big enough for the queue
    monkeypatch.setattr(moves, "MOVE_IN_REQUEST", 2)
    assert call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"}).status == 202
    sqs = boto3.client("sqs")
    [message] = sqs.receive_message(QueueUrl=deletions_queue, MaxNumberOfMessages=10)["Messages"]
    sqs.delete_message(QueueUrl=deletions_queue, ReceiptHandle=message["ReceiptHandle"])

    # When its delivery runs out of time at once (every step needs more than the function has left)
    with monkeypatch.context() as short:
        short.setattr(moves, "STEP_SECONDS", math.inf)
        assert deliver([message]) == {"batchItemFailures": []}

    # Then the rest is queued again, and that delivery finishes the move
    [again] = sqs.receive_message(QueueUrl=deletions_queue, MaxNumberOfMessages=10)["Messages"]
    assert json.loads(again["Body"]) == json.loads(message["Body"])  # the same move's rest
    assert call("GET", "/orgs/acme/units/platform").body["path"] == "/eng/platform"
    assert deliver([again]) == {"batchItemFailures": []}
    assert_tree_is(MOVED)


def test_a_move_to_a_units_old_parent_while_its_own_move_has_not_reached_it_is_409(acme, monkeypatch):
    # Given a move of platform under ops that holds the lock and has not rewritten platform yet
    monkeypatch.setattr(moves, "resume", _never_finishes)
    assert call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"}).status == 200
    monkeypatch.undo()

    # When platform is asked to be under eng, where it still is, for now
    reply = call("PATCH", "/orgs/acme/units/platform", {"parent_id": "eng"})

    # Then that is refused as any second move is, not answered 200 "under eng" as the move goes on to ops
    assert (reply.status, reply.error_code) == (409, "move_in_progress"), reply.body
    assert reply.headers["Retry-After"]
    assert moves.resume("acme") is True
    assert_tree_is(MOVED)
