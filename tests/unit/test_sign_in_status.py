"""A sign-in set by a suspension's or a reactivation's job ends as the org was last read, however
often its status changed meanwhile (the org and the directory are stand-ins: no AWS)."""

import math

from controlplane.logic import signins
from controlplane.pacing import Throttle


class Org:
    """The org's status as each consistent GetItem sees it, in turn, then as it stays."""

    def __init__(self, statuses: list[str], final: str):
        self.statuses, self.final = statuses, final

    def get(self, key, consistent=False):
        assert consistent
        return {"status": self.statuses.pop(0) if self.statuses else self.final}


class Directory:
    def __init__(self):
        self.enabled: dict[str, bool] = {}

    def enable(self, org_id, user_id):
        self.enabled[user_id] = True

    def disable(self, org_id, user_id):
        self.enabled[user_id] = False


def test_a_sign_in_whose_org_changed_status_three_times_is_set_as_it_was_last_read(monkeypatch):
    # Given a suspension's job setting bob while the org is reactivated, suspended and reactivated
    # (each newer job having passed bob already)
    org = Org(["active", "suspended", "active"], "active")
    monkeypatch.setattr(signins, "api_table", lambda: org)
    directory = Directory()

    # When the job sets bob
    went_on = signins._set(directory, "acme", "bob", False, Throttle(math.inf))

    # Then the job is superseded, and bob can sign in to the active org
    assert went_on is False
    assert directory.enabled == {"bob": True}


def test_a_sign_in_whose_org_did_not_change_keeps_the_jobs_state(monkeypatch):
    org = Org([], "suspended")
    monkeypatch.setattr(signins, "api_table", lambda: org)
    directory = Directory()

    assert signins._set(directory, "acme", "bob", False, Throttle(math.inf)) is True
    assert directory.enabled == {"bob": False}
