"""Which lifecycle events start a sign-ins job (derived from the contract's catalogue), and the job
each one's message holds on the deletions queue."""

import pytest

from controlplane.lifecycle.contract import DETAILS
from controlplane.logic import signins


def test_a_suspension_disables_and_a_reactivation_enables_and_no_other_event_starts_a_job():
    assert signins.events() == {"Organization Suspended": False, "Organization Reactivated": True}
    assert set(signins.events()) <= set(DETAILS)


@pytest.mark.parametrize(
    ("detail_type", "enabled"), [("Organization Suspended", False), ("Organization Reactivated", True)]
)
def test_a_status_event_from_the_bus_is_its_orgs_job_from_its_first_user(detail_type, enabled):
    event = {"source": "controlplane", "detail-type": detail_type, "detail": {"org_id": "acme", "event_id": "e1"}}

    assert signins.job(event) == {"kind": "sign-ins", "org_id": "acme", "enabled": enabled, "after": None}


def test_a_message_of_its_own_is_its_job_and_a_delete_is_none():
    job = {"kind": "sign-ins", "org_id": "acme", "enabled": False, "after": "alice"}

    assert signins.job(job) == job
    assert signins.job({"org_id": "acme", "deleting_since": "2026-11-27T13:00:00.000Z"}) is None


def test_an_event_that_starts_no_job_fails_its_message_rather_than_being_taken_for_a_delete():
    with pytest.raises(KeyError):
        signins.job({"source": "controlplane", "detail-type": "Organization Updated", "detail": {"org_id": "acme"}})
