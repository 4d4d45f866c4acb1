"""The e2e suite's checks against fakes that read as a deployment does: a GET just after a delete
reads eventually consistent and may still find what was deleted; a user's tickets are listed from
GSI1, which shows a new user, and answers 404 until then, a moment after the create. ``make run``
answers at once, so only fakes show the suite copes."""

from collections.abc import Iterator
from types import SimpleNamespace

import httpx
import pytest

from cpctl.errors import IdempotencyKeyReused, NotFound
from e2e import test_e2e_isolation, test_e2e_routes, waits
from e2e.conftest import Tenants


@pytest.fixture(autouse=True)
def fast(monkeypatch):
    monkeypatch.setattr(waits, "POLL_SECONDS", 0.001)


def _error(kind: type, status: int, code: str) -> Exception:
    return kind(httpx.Response(status, json={"error": {"code": code, "message": code}}))


class StaleAfterDelete:
    """An operator whose org delete answers 204, and whose next ``stale`` GETs of it still find it."""

    def __init__(self, stale: int) -> None:
        self.stale, self.orgs = stale, set()
        self.last_response = httpx.Response(204)

    def create_org(self, org_id: str, name: str) -> object:
        self.orgs.add(org_id)
        return type("Org", (), {"org_id": org_id})()

    def delete_org(self, org_id: str) -> None:
        if org_id not in self.orgs:
            raise _error(NotFound, 404, "not_found")
        self.orgs.discard(org_id)

    def get_org(self, org_id: str) -> object:
        if org_id in self.orgs or self.stale > 0:
            self.stale -= org_id not in self.orgs
            return {"org_id": org_id}
        raise _error(NotFound, 404, "not_found")


def test_an_allowed_org_delete_is_checked_by_reading_until_the_404():
    # Given an operator whose GET still finds the org once just after its delete, as a replica may
    operator = StaleAfterDelete(stale=1)
    tenants = Tenants("e2e-a", "e2e-b", {"alice": "t-1", "amy": "t-2"}, {"operator": operator})

    # When the matrix's cell for the operator's org delete runs; Then it passes, read until the 404
    test_e2e_isolation.test_each_caller_gets_what_the_policy_says_and_nothing_of_another_org(
        None, tenants, operator, ("DELETE", "/orgs/{org_id}"), "operator"
    )
    assert operator.stale == 0


class NewUserOnGsi1Late:
    """An operator whose list of a new user's tickets answers 404 (the user not on GSI1 yet) ``late`` times."""

    def __init__(self, late: int) -> None:
        self.late, self.ticket, self.key = late, SimpleNamespace(ticket_id="t-1"), None

    def create_org(self, org_id: str, name: str) -> None:
        pass

    def create_user(self, org_id: str, user_id: str, name: str, email: str) -> None:
        pass

    def create_ticket(self, org_id: str, user_id: str, title: str, idempotency_key: str) -> object:
        self.key = self.key or (idempotency_key, title)
        if self.key != (idempotency_key, title):
            raise _error(IdempotencyKeyReused, 422, "idempotency_key_reused")
        return self.ticket

    def iter_tickets(self, org_id: str, user_id: str) -> Iterator[object]:
        if self.late > 0:
            self.late -= 1
            raise _error(NotFound, 404, "not_found")
        yield self.ticket


def test_a_new_users_tickets_are_read_until_gsi1_shows_the_user():
    # Given an operator whose GSI1 shows the new user only from the second read on
    operator = NewUserOnGsi1Late(late=1)

    # When the idempotency check runs; Then it passes, having read until the list answered
    test_e2e_routes.test_a_create_retried_with_its_idempotency_key_happens_once(operator, "e2e-1")
    assert operator.late == 0
