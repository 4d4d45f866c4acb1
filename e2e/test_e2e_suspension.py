"""The isolation matrix's suspended-org column, over HTTP, in an org of its own: once the
authorizer's cache has passed, every route answers the suspended org's admin and member
``403 org_suspended``; operators are unaffected; reactivated, every cell is as before, no item lost.

Against a deployment, E2E_AUTHORIZER_TTL_SECONDS is the stack's ``authorizer_ttl_seconds`` (60).
"""

import os
import time
from collections.abc import Callable

import pytest

from cpctl.client import Client
from cpctl.errors import ApiError
from e2e import waits
from e2e.conftest import LOCAL_TTL, delete_org, limits_ready, new_id
from e2e.test_e2e_isolation import CALLS, Cell, import_done
from local import isolation
from local.isolation import EXPECTED

POLL_SECONDS = 0.5


def _ttl() -> float:
    return float(os.environ.get("E2E_AUTHORIZER_TTL_SECONDS") or (60 if os.environ.get("E2E_API_URL") else LOCAL_TTL))


def _status(api: Client, call: Callable[[], object]) -> tuple[int, str | None]:
    try:
        call()
    except ApiError as error:
        return error.status, error.code
    return api.last_response.status_code, None


def _until(check: Callable[[], bool], what: str) -> None:
    """Poll until ``check`` holds, for at most the authorizer's TTL and a margin: a cached decision
    may outlive the change by up to the TTL."""
    deadline = time.monotonic() + _ttl() + 15
    while not check():
        assert time.monotonic() < deadline, f"still not {what} after the authorizer's TTL"
        time.sleep(POLL_SECONDS)


@pytest.fixture
def org_c(target, operator):
    """An org of this test's own: admin root, member alice with a ticket; removed afterwards."""
    if target.no_user_tokens:  # before any user: each is an invitation e-mail, of Cognito's 50 a day
        pytest.skip(target.no_user_tokens)
    org_id = new_id()
    operator.create_org(org_id, name="E2E suspended", plan="enterprise")
    try:
        for user_id, role in (("root", "admin"), ("alice", "member")):
            operator.create_user(org_id, user_id, name=user_id.title(), email=f"{user_id}@{org_id}.example", role=role)
        ticket = operator.create_ticket(org_id, "alice", "alice's ticket").ticket_id
        cell = Cell(org_id, "alice", ticket)
        operator.create_unit(org_id, cell.unit_id, "E2E team")  # what the unit routes act on
        rows = [{"user_id": "imported", "name": "Imported", "email": f"imported@{org_id}.example"}]
        cell.import_id = operator.import_users(org_id, rows).import_id
        import_done(operator, org_id, cell.import_id)  # on AWS its job adds the user after the 202
        callers = {who: target.token_for(org_id, user, role) for who, user, role in
                   (("admin_a", "root", "admin"), ("member_a_own", "alice", "member"))}  # fmt: skip
        if None in callers.values():
            pytest.skip(target.no_user_tokens)
        clients = {who: target.client(token) for who, token in callers.items()}
        limits_ready(clients["admin_a"], org_id)
        yield cell, clients
    finally:
        try:
            operator.update_org(org_id, status="active")
        finally:
            delete_org(operator, org_id)


def _snapshot(operator: Client, cell: Cell) -> tuple:
    return (
        operator.get_user(cell.org_id, cell.user_id),
        operator.get_ticket(cell.org_id, cell.ticket_id),
        operator.list_users(cell.org_id, limit=100).items,
        operator.list_tickets(cell.org_id, cell.user_id, limit=100).items,
    )


# Reads only, and the refused writes: an allowed write would change what the snapshot compares.
READS = [route for route in EXPECTED if route[0] == "GET"]


def test_a_suspended_orgs_callers_get_org_suspended_everywhere_until_reactivated(operator, org_c):
    cell, callers = org_c
    before = waits.settled(lambda: _snapshot(operator, cell), "the snapshot")  # its lists read GSI1

    operator.update_org(cell.org_id, status="suspended", suspension_reason="e2e: unpaid invoices")
    _until(lambda: _status(callers["member_a_own"], lambda: callers["member_a_own"].list_plans())[0] == 403, "denied")
    _until(lambda: _status(callers["admin_a"], lambda: callers["admin_a"].list_plans())[0] == 403, "denied")

    for who, api in callers.items():
        for route in EXPECTED:
            status, code = _status(api, lambda route=route, api=api: CALLS[route](api, cell))
            assert (status, code) == (isolation.expected_suspended(route, who), isolation.SUSPENDED_CODE), route
            assert "unpaid" not in api.last_response.text  # the reason is for operators only
    for route in READS:
        status, _ = _status(operator, lambda route=route: CALLS[route](operator, cell))
        assert status == isolation.expected_suspended(route, "operator"), route

    operator.update_org(cell.org_id, status="active")
    for api in callers.values():
        _until(lambda api=api: _status(api, lambda: api.list_plans())[0] == 200, "allowed again")

    assert _snapshot(operator, cell) == before
    for who, api in callers.items():
        for route in READS:
            status, _ = _status(api, lambda route=route, api=api: CALLS[route](api, cell))
            assert status == isolation.expected(route, who), (route, who)
