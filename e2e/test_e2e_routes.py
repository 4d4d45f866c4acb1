"""Every route, over HTTP, through the client: what a deployment must do for its users."""

import uuid

import pytest

from controlplane.http.routes import ROUTES
from cpctl.client import etag
from cpctl.errors import (
    BadRequest,
    IdempotencyKeyReused,
    PreconditionFailed,
    Unauthorized,
    ValidationFailed,
)
from e2e import waits
from e2e.conftest import delete_org, new_id
from e2e.waits import eventually


@pytest.fixture
def org_id(operator):
    org_id = new_id()
    yield org_id
    delete_org(operator, org_id)


def test_every_route_answers_as_documented(target, org_id):
    seen: set[tuple[str, str]] = set()
    with target.client(target.operator_token, seen) as api:
        org = api.create_org(org_id, name="E2E Org", plan="pro")
        assert (org.org_id, org.plan, org.version) == (org_id, "pro", 1)
        assert api.last_response.headers["ETag"] == etag(org)
        # Lists that read GSI1 or GSI2 follow a write asynchronously on AWS: each is awaited, bounded.
        eventually(lambda: {o.org_id for o in api.iter_orgs(limit=100)}, lambda ids: org_id in ids, "the org in GSI1")
        assert api.get_org(org_id) == org

        renamed = api.update_org(org_id, name="E2E Renamed", if_match=org)
        assert (renamed.name, renamed.version) == ("E2E Renamed", 2)
        with pytest.raises(PreconditionFailed):
            api.update_org(org_id, name="Lost update", if_match=org)  # version 1 is stale
        assert api.get_org(org_id).name == "E2E Renamed"

        for user_id in ("ann", "ben", "cid"):
            api.create_user(org_id, user_id, name=user_id.title(), email=f"{user_id}@e2e.example")
        assert [user.user_id for user in api.iter_users(org_id, limit=2)] == ["ann", "ben", "cid"]
        with_users = api.get_org_with_users(org_id, limit=2)
        assert [user.user_id for user in with_users.users] == ["ann", "ben"]
        assert [user.user_id for user in api.list_users(org_id, cursor=with_users.next_cursor).items] == ["cid"]
        ann = api.update_user(org_id, "ann", role="admin", if_match=api.get_user(org_id, "ann"))
        assert (ann.role, ann.version) == ("admin", 2)
        # The activity log is written from the table's stream: it follows within seconds.
        log = eventually(
            lambda: api.list_activity(org_id, 100).items,
            lambda log: any(entry.type == "User Role Changed" for entry in log),
            "the activity entry of the role change",
        )
        assert (log[0].type, log[0].resource.id, log[0].changes) == (
            "User Role Changed",
            "ann",
            {"role": {"old": "member", "new": "admin"}},
        )
        assert log[-1].type == "Organization Created"

        opened = [api.create_ticket(org_id, "ben", f"Ticket {i}", priority="high", tags=["e2e"]) for i in range(5)]
        newest_first = [ticket.ticket_id for ticket in reversed(opened)]
        listed = eventually(
            lambda: [ticket.ticket_id for ticket in api.iter_tickets(org_id, "ben", limit=2)],
            lambda ids: len(ids) == len(opened),
            "ben's 5 tickets in GSI1",
        )
        assert listed == newest_first
        assert [ticket.ticket_id for ticket in api.get_user_with_tickets(org_id, "ben", limit=3).tickets] == (
            newest_first[:3]
        )
        ticket = api.get_ticket(org_id, opened[0].ticket_id)
        solved = api.update_ticket(org_id, ticket.ticket_id, status="solved", if_match=ticket)
        assert (solved.status, solved.version) == ("solved", 2)
        api.delete_ticket(org_id, ticket.ticket_id, if_match=solved)
        waits.gone(lambda: api.get_ticket(org_id, ticket.ticket_id), "the deleted ticket")

        # Units: a small tree, a user placed in it and listed from above, then the tree taken down
        api.create_unit(org_id, "eng", "Engineering")
        api.create_unit(org_id, "platform", "Platform", parent_id="eng")
        units = eventually(lambda: api.list_units(org_id).items, lambda units: len(units) == 2, "both units in GSI1")
        assert [unit.unit_id for unit in units] == ["eng", "platform"]  # depth-first
        assert api.get_unit(org_id, "platform").path == "/eng/platform"
        assert api.update_user(org_id, "cid", unit="platform").unit == "platform"
        under_eng = eventually(lambda: api.list_unit_users(org_id, "eng").items, bool, "cid under eng in GSI2")
        assert [user.user_id for user in under_eng] == ["cid"]
        assert api.list_unit_users(org_id, "eng", direct=True).items == []
        assert api.update_unit(org_id, "platform", name="Platform team").name == "Platform team"
        api.update_user(org_id, "cid", unit="root")
        api.delete_unit(org_id, "platform")
        waits.gone(lambda: api.get_unit(org_id, "platform"), "the deleted unit")

        # A user import: a job, followed until it is done
        started = api.import_users(org_id, [{"user_id": "dee", "name": "Dee", "email": "dee@e2e.example"}])
        done = eventually(
            lambda: api.get_user_import(org_id, started.import_id),
            lambda job: job.status == "done",
            "the import (a queued job on AWS)",
            waits.JOB_SECONDS,
        )
        assert (done.created, done.refused) == (1, [])
        assert api.get_user(org_id, "dee").unit == "root"

        api.delete_user(org_id, "ben")
        waits.gone(lambda: api.get_user(org_id, "ben"), "the deleted user")
        waits.gone(lambda: api.get_ticket(org_id, opened[1].ticket_id), "the deleted user's ticket")  # went with them

        assert {plan.plan for plan in api.list_plans().items} == {"free", "pro", "enterprise"}

        assert api.delete_org(org_id) is None
        waits.gone(lambda: api.get_org(org_id), "the deleted org")
        waits.gone(lambda: api.get_user(org_id, "ann"), "the deleted org's user")

    assert seen == {(route.method, route.path) for route in ROUTES}


def test_a_create_retried_with_its_idempotency_key_happens_once(operator, org_id):
    operator.create_org(org_id, name="E2E")
    operator.create_user(org_id, "ann", name="Ann", email="ann@e2e.example")
    key = str(uuid.uuid4())

    first = operator.create_ticket(org_id, "ann", "Only once", idempotency_key=key)
    again = operator.create_ticket(org_id, "ann", "Only once", idempotency_key=key)

    assert again == first
    # Her tickets are listed with her from GSI1: a 404 until GSI1 shows the new user.
    eventually(
        lambda: waits.or_none(lambda: list(operator.iter_tickets(org_id, "ann"))), bool, "ann and her ticket in GSI1"
    )
    listed = waits.settled(lambda: list(operator.iter_tickets(org_id, "ann")), "ann's tickets in GSI1")
    assert [ticket.ticket_id for ticket in listed] == [first.ticket_id]
    with pytest.raises(IdempotencyKeyReused):
        operator.create_ticket(org_id, "ann", "Another body", idempotency_key=key)


def test_errors_arrive_typed_with_code_message_and_request_id(target, operator, org_id):
    operator.create_org(org_id, name="E2E")

    with pytest.raises(BadRequest) as bad_cursor:
        operator.list_users(org_id, cursor="not-a-cursor")
    with pytest.raises(ValidationFailed) as bad_id:
        operator.get_user(org_id, "Not A Slug")
    with target.client(None) as anonymous, pytest.raises(Unauthorized) as no_token:
        anonymous.get_org(org_id)

    assert (bad_cursor.value.status, bad_cursor.value.code) == (400, "invalid_cursor")
    assert (bad_id.value.status, bad_id.value.code) == (422, "validation_error")
    assert bad_id.value.details
    assert (no_token.value.status, no_token.value.code) == (401, "unauthorized")
    for error in (bad_cursor.value, bad_id.value, no_token.value):
        assert error.message and error.request_id
