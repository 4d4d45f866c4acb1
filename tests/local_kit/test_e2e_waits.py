"""The e2e suite's waits (e2e/waits.py, e2e/conftest.py), against fakes that lag as a deployment
does: a GSI that shows a write a few reads late, an org delete that answers 202 and finishes later,
or never. ``make run`` does all of it within the request, so only fakes show the suite copes."""

import httpx
import pytest

from cpctl.errors import NotFound, ServiceUnavailable
from e2e import conftest, waits


@pytest.fixture(autouse=True)
def fast(monkeypatch):
    monkeypatch.setattr(waits, "POLL_SECONDS", 0.001)


class Lagging:
    """A list that shows ``items`` only from the ``lag``-th read on, as a GSI after a write."""

    def __init__(self, items: list[str], lag: int) -> None:
        self.items, self.lag, self.reads = items, lag, 0

    def read(self) -> list[str]:
        self.reads += 1
        return self.items if self.reads > self.lag else []


class QueuedDelete:
    """An org whose delete answers 202 and is gone after ``reads`` GETs (never, with None)."""

    def __init__(self, reads: int | None, missing: set[str] = frozenset()) -> None:
        self.reads, self.missing, self.deleted = reads, set(missing), []

    def delete_org(self, org_id: str) -> object:
        if org_id in self.missing:
            raise RuntimeError(f"{org_id}: 503")
        self.deleted.append(org_id)
        return {"status": "deleting"}

    def get_org(self, org_id: str) -> object:
        if self.reads is not None:
            self.reads -= 1
            if self.reads < 0:
                raise NotFound(httpx.Response(404, json={"error": {"code": "not_found", "message": "gone"}}))
        return {"org_id": org_id}


def test_a_read_of_a_lagging_index_is_polled_until_the_write_shows():
    # Given a listing that shows the new ticket only from the third read on
    index = Lagging(["t-1"], lag=2)

    # When the suite waits for it
    seen = waits.eventually(index.read, lambda items: "t-1" in items, "ticket t-1 in the list")

    # Then it got it, on the third read
    assert (seen, index.reads) == (["t-1"], 3)


def test_a_write_that_never_shows_fails_with_what_was_awaited_and_the_last_read():
    # Given a listing that never shows the write
    index = Lagging(["t-1"], lag=10**9)

    # When the suite waits for it, with a short bound; Then it fails saying what and what it read
    with pytest.raises(AssertionError, match=r"ticket t-1 in the list: not within 0.05 s; last read: \[\]"):
        waits.eventually(index.read, lambda items: "t-1" in items, "ticket t-1 in the list", timeout=0.05)


def test_a_settled_snapshot_waits_for_the_index_to_stop_changing(monkeypatch):
    # Given a deployment's settle time and a listing that shows an earlier write on its second read
    monkeypatch.setenv("E2E_SETTLE_SECONDS", "0.001")
    index = Lagging(["t-1"], lag=1)

    # When the suite takes its snapshot before a refused call
    before = waits.settled(index.read, "snapshot")

    # Then it holds the earlier write, so a read after the call compares equal
    assert before == ["t-1"] == index.read()


def test_a_get_just_after_a_delete_is_polled_until_it_is_404():
    # Given a resource an eventually consistent read still finds twice after its delete
    stale = QueuedDelete(reads=2)

    # When the suite checks that it is gone; Then it read until the 404
    waits.gone(lambda: stale.get_org("e2e-1"), "the deleted org")
    assert stale.reads == -1


def test_a_resource_still_there_after_the_bound_fails_naming_it():
    with pytest.raises(AssertionError, match=r"the deleted org: still found after"):
        waits.gone(lambda: QueuedDelete(reads=None).get_org("e2e-1"), "the deleted org", timeout=0.05)


def test_an_org_delete_answered_202_is_awaited_until_the_org_is_gone():
    # Given a delete that is queued and done after three GETs
    api = QueuedDelete(reads=3)

    # When the suite deletes the org; Then it returned once the org was gone
    conftest.delete_org(api, "e2e-1")
    assert api.reads < 0


def test_an_org_delete_that_never_finishes_fails_naming_the_org_left_behind():
    # Given a queued delete that never finishes (its queue stuck)
    api = QueuedDelete(reads=None)

    # When the suite deletes the org; Then it fails and names it, not leaving it behind in silence
    with pytest.raises(AssertionError, match="org e2e-1's delete"):
        conftest.delete_org(api, "e2e-1", timeout=0.05)


def test_one_orgs_failed_delete_does_not_leave_the_next_org_behind():
    # Given two orgs of the suite's, the first one's delete failing
    api = QueuedDelete(reads=0, missing={"e2e-a"})

    # When the suite removes both; Then the second went all the same, and the failure is raised
    with pytest.raises(RuntimeError, match="e2e-a"):
        conftest.delete_orgs(api, ["e2e-a", "e2e-b"])
    assert api.deleted == ["e2e-b"]


class KeyPending:
    """An org whose API key is in its usage plan from the ``pending``-th call on: 503 before."""

    def __init__(self, pending: int) -> None:
        self.pending, self.calls = pending, 0

    def get_org(self, org_id: str) -> object:
        self.calls += 1
        if self.calls <= self.pending:
            raise ServiceUnavailable(httpx.Response(503, json={"error": {"code": "x", "message": "m"}}))
        return {"org_id": org_id}


def test_an_org_users_first_call_waits_until_the_orgs_api_key_is_in_its_usage_plan():
    # Given a new org whose key is in its usage plan only after the client's own retries gave up, twice
    api = KeyPending(pending=2)

    # When the suite waits for its limits; Then it returned once a call was served
    conftest.limits_ready(api, "e2e-1")
    assert api.calls == 3


def test_an_org_whose_key_never_comes_fails_naming_it():
    # Given an org whose key never reaches its usage plan (the tenant-keys consumer stuck)
    api = KeyPending(pending=10**9)

    # When the suite waits for its limits; Then it fails, naming the org and the 503
    with pytest.raises(AssertionError, match=r"org e2e-1's API key \(503 until then\)"):
        conftest.limits_ready(api, "e2e-1", timeout=0.05)
