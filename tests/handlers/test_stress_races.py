"""Races the stress harness found: a plan change racing its org's create; a user move racing the user's delete."""

from controlplane.dal import seats
from tests.api import call, create_org, create_user


def test_a_plan_change_that_read_no_org_does_not_leave_the_new_orgs_counter_at_another_plan(table, monkeypatch):
    # Given a PATCH of acme's plan that finds no org (nothing to count), and acme is created on
    # `pro` (50 seats) right after that read
    read_counter = seats.move

    def created_meanwhile(*args, **kwargs):
        counted = read_counter(*args, **kwargs)
        monkeypatch.setattr(seats, "move", read_counter)
        assert create_org("acme", plan="pro").status == 201
        return counted

    monkeypatch.setattr(seats, "move", created_meanwhile)

    # When the PATCH to `free` goes on
    reply = call("PATCH", "/orgs/acme", {"plan": "free"})

    # Then the org either stays `pro` (the PATCH found no org: 404) or is `free` with 5 seats on its
    # counter; never `free` on the org item and 50 seats on the counter
    org = call("GET", "/orgs/acme").body
    assert (org["plan"], org["limits"]["users"]) in {("pro", 50), ("free", 5)}, (reply.status, org)
    created = [create_user("acme", f"user-{i}").status for i in range(6)]
    assert created.count(201) == org["limits"]["users"] if org["plan"] == "free" else 6


def test_a_user_moved_into_a_unit_and_deleted_meanwhile_is_a_404_not_a_500(table, monkeypatch):
    # Given alice is moved into eng, and deleted right after the move's transaction
    from controlplane.dal import transactions

    create_org("acme")
    create_user("acme", "alice")
    assert call("POST", "/orgs/acme/units", {"unit_id": "eng", "name": "Eng"}).status == 201
    moved = transactions.update_with_check

    def deleted_meanwhile(*args, **kwargs):
        moved(*args, **kwargs)
        assert call("DELETE", "/orgs/acme/users/alice").status == 204

    monkeypatch.setattr(transactions, "update_with_check", deleted_meanwhile)

    reply = call("PATCH", "/orgs/acme/users/alice", {"unit": "eng"})

    # Then the move answers as for a missing user, with the error body
    assert reply.status == 404, reply.body
    assert reply.error_code == "not_found"
