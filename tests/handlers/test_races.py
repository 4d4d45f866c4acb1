"""Races on the real engine: concurrent Lambda-like processes against DynamoDB Local."""

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

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
