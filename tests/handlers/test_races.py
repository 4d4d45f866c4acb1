"""Races on the real engine: concurrent Lambda-like processes against DynamoDB Local."""

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import boto3
import pytest

from controlplane import config
from tests.api import call, create_org, create_user

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)
WORKERS = 10

_start = None  # the barrier that releases a round of requests together


def _ready(barrier) -> None:
    """Each worker is one Lambda instance: its own process, its own client."""
    global _start
    _start = barrier
    config.reset()


def _create_alice(attempt: int) -> int:
    _start.wait()
    body = {"user_id": "alice", "name": f"Alice {attempt}", "email": f"alice{attempt}@example.com"}
    return call("POST", "/orgs/acme/users", body).status


def _create_user_n(attempt: int) -> tuple[int, str | None]:
    _start.wait()
    body = {"user_id": f"late-{attempt}", "name": f"Late {attempt}", "email": f"late{attempt}@example.com"}
    reply = call("POST", "/orgs/acme/users", body)
    return reply.status, reply.error_code


def _rename_at_version_1(attempt: int) -> int:
    _start.wait()
    return call("PATCH", "/orgs/acme/users/alice", {"name": f"Alice {attempt}"}, headers={"If-Match": ['"1"']}).status


def _import_the_same_rows(attempt: int) -> tuple[int, dict]:
    _start.wait()
    rows = [{"user_id": f"user-{i}", "name": f"User {i}", "email": f"user{i}@example.com"} for i in range(8)]
    reply = call("POST", "/orgs/acme/user-imports", {"rows": rows})
    return reply.status, reply.body


def _create_or_delete_the_org(attempt: int) -> tuple[str, int]:
    _start.wait()
    if attempt == 0:
        return "delete", call("DELETE", "/orgs/acme").status
    body = {"user_id": f"late-{attempt}", "name": f"Late {attempt}", "email": f"late{attempt}@example.com"}
    return "create", call("POST", "/orgs/acme/users", body).status


def _race(task, times: int, workers: int = WORKERS) -> list:
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(workers)
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_ready, initargs=(barrier,)) as pool:
        # Rounds of ``workers`` requests released together by the barrier.
        return list(pool.map(task, range(times)))


def test_50_concurrent_creates_of_one_user_make_one_201_and_49_409(table):
    create_org("acme")

    statuses = _race(_create_alice, 50)

    assert sorted(statuses) == [201] + [409] * 49
    stored = call("GET", "/orgs/acme/users/alice").body
    assert stored["version"] == 1
    assert stored["name"] == f"Alice {stored['email'].removeprefix('alice').split('@')[0]}"


def test_20_concurrent_patches_with_one_if_match_make_one_200_and_19_412(table):
    create_org("acme")
    create_user("acme", "alice")

    statuses = _race(_rename_at_version_1, 20)

    assert sorted(statuses) == [200] + [412] * 19
    assert call("GET", "/orgs/acme/users/alice").body["version"] == 2


def test_20_concurrent_creates_for_the_last_seat_make_one_201_and_19_quota_exceeded(table):
    create_org("acme")  # free: 5 seats
    for i in range(4):
        create_user("acme", f"user-{i}")

    answers = _race(_create_user_n, 20, workers=20)  # 20 processes released at once

    assert sorted(answers) == [(201, None)] + [(409, "quota_exceeded")] * 19
    org = call("GET", "/orgs/acme").body
    assert (org["usage"], org["limits"]) == ({"users": 5}, {"users": 5})
    assert len(call("GET", "/orgs/acme/users").body["items"]) == 5


def test_4_concurrent_imports_of_the_same_8_rows_into_5_seats_create_5_users_each_reported_once(table):
    # Given an org with 5 seats (free), and no queue: each import's job runs in its own request
    create_org("acme")

    # When 4 imports of the same 8 users are sent at once
    answers = _race(_import_the_same_rows, 4, workers=4)

    # Then 5 users, 5 seats taken, each user reported created by exactly one import, and every other
    # row refused as existing (another import's) or over the seats; every import done
    assert [(status, body["status"]) for status, body in answers] == [(202, "done")] * 4, answers
    users = [u["user_id"] for u in call("GET", "/orgs/acme/users").body["items"]]
    assert len(users) == 5
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 5}
    created = []
    for _, body in answers:
        follow = call("GET", f"/orgs/acme/user-imports/{body['import_id']}").body
        assert {row["code"] for row in follow["refused"]} <= {"already_exists", "quota_exceeded"}, follow
        assert follow["created"] + len(follow["refused"]) == 8
        created += [f"user-{i}" for i in range(8) if f"user-{i}" not in {r["user_id"] for r in follow["refused"]}]
    assert sorted(created) == sorted(users)


def test_users_created_while_their_org_is_deleted_are_refused_or_go_with_it(table):
    # Given acme with a user
    create_org("acme", plan="pro")
    create_user("acme", "alice")

    # When 9 users are created as the org is deleted, all released at once
    answers = _race(_create_or_delete_the_org, WORKERS)

    # Then the delete is done, each create is a 201 (before the mark: the delete took the user) or a
    # 404, and nothing of acme is left: no user, seat counter, or sign-in subject outlives the org
    assert ("delete", 204) in answers
    assert {status for kind, status in answers if kind == "create"} <= {201, 404}, answers
    client = boto3.client("dynamodb", endpoint_url=config.dynamodb().meta.endpoint_url)
    items = client.scan(TableName=table)["Items"]
    assert [item for item in items if "acme" in item["PK"]["S"]] == []
