"""The e2e isolation matrix's checks after an allowed call, against a fake that reads as a
deployment does: a GET just after a delete reads eventually consistent and may still find what
was deleted. ``make run`` answers 404 at once, so only a fake shows the suite copes."""

import httpx
import pytest

from cpctl.errors import NotFound
from e2e import test_e2e_isolation, waits
from e2e.conftest import Tenants


@pytest.fixture(autouse=True)
def fast(monkeypatch):
    monkeypatch.setattr(waits, "POLL_SECONDS", 0.001)


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
            raise NotFound(httpx.Response(404, json={"error": {"code": "not_found", "message": "gone"}}))
        self.orgs.discard(org_id)

    def get_org(self, org_id: str) -> object:
        if org_id in self.orgs or self.stale > 0:
            self.stale -= org_id not in self.orgs
            return {"org_id": org_id}
        raise NotFound(httpx.Response(404, json={"error": {"code": "not_found", "message": "gone"}}))


def test_an_allowed_org_delete_is_checked_by_reading_until_the_404():
    # Given an operator whose GET still finds the org once just after its delete, as a replica may
    operator = StaleAfterDelete(stale=1)
    tenants = Tenants("e2e-a", "e2e-b", {"alice": "t-1", "amy": "t-2"}, {"operator": operator})

    # When the matrix's cell for the operator's org delete runs; Then it passes, read until the 404
    test_e2e_isolation.test_each_caller_gets_what_the_policy_says_and_nothing_of_another_org(
        None, tenants, operator, ("DELETE", "/orgs/{org_id}"), "operator"
    )
    assert operator.stale == 0
