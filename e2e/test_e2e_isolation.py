"""Who may do what, over HTTP: each route as each kind of caller, in two orgs of the suite's own.

Callers: an operator; org A's admin; member alice of A on her own user and tickets, and on member
amy's; org B's admin; no token. A refused call must change nothing and show nothing of the other org.
"""

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass

import pytest

from controlplane.http.routes import ROUTES
from cpctl.client import Client
from cpctl.errors import AlreadyExists, ApiError
from e2e import waits
from e2e.conftest import Tenants, delete_org, new_id
from local import isolation
from local.isolation import CALLERS, EXPECTED


@dataclass
class Cell:
    """Where a call lands: org A, and the user (and their ticket) it acts on."""

    org_id: str
    user_id: str
    ticket_id: str
    unit_id: str = "e2e-team"
    import_id: str = ""


# Each route through its client method. Allowed deletes act on a resource made for the cell; a
# refused one is sent at the shared fixtures, which it must leave as they were.
CALLS: dict[tuple[str, str], Callable[[Client, Cell], object]] = {
    ("POST", "/orgs"): lambda api, c: api.create_org(new_id(), name="E2E extra"),
    ("GET", "/orgs"): lambda api, c: api.list_orgs(limit=5),
    ("GET", "/orgs/{org_id}"): lambda api, c: api.get_org(c.org_id),
    ("PATCH", "/orgs/{org_id}"): lambda api, c: api.update_org(c.org_id, name="E2E Renamed"),
    ("DELETE", "/orgs/{org_id}"): lambda api, c: api.delete_org(c.org_id),
    ("GET", "/plans"): lambda api, c: api.list_plans(),
    ("GET", "/orgs/{org_id}/activity"): lambda api, c: api.list_activity(c.org_id, limit=5),
    ("POST", "/orgs/{org_id}/users"): lambda api, c: api.create_user(
        c.org_id, new_id("u"), name="New", email="new@e2e.example"
    ),
    ("GET", "/orgs/{org_id}/users"): lambda api, c: api.list_users(c.org_id),
    ("GET", "/orgs/{org_id}/users/{user_id}"): lambda api, c: api.get_user(c.org_id, c.user_id),
    ("PATCH", "/orgs/{org_id}/users/{user_id}"): lambda api, c: api.update_user(c.org_id, c.user_id, name="Renamed"),
    ("DELETE", "/orgs/{org_id}/users/{user_id}"): lambda api, c: api.delete_user(c.org_id, c.user_id),
    ("POST", "/orgs/{org_id}/users/{user_id}/tickets"): lambda api, c: api.create_ticket(c.org_id, c.user_id, "Help"),
    ("GET", "/orgs/{org_id}/users/{user_id}/tickets"): lambda api, c: api.list_tickets(c.org_id, c.user_id),
    ("GET", "/orgs/{org_id}/tickets/{ticket_id}"): lambda api, c: api.get_ticket(c.org_id, c.ticket_id),
    ("PATCH", "/orgs/{org_id}/tickets/{ticket_id}"): lambda api, c: api.update_ticket(
        c.org_id, c.ticket_id, status="pending"
    ),
    ("DELETE", "/orgs/{org_id}/tickets/{ticket_id}"): lambda api, c: api.delete_ticket(c.org_id, c.ticket_id),
    ("POST", "/orgs/{org_id}/units"): lambda api, c: api.create_unit(c.org_id, new_id("t"), "New team"),
    ("GET", "/orgs/{org_id}/units"): lambda api, c: api.list_units(c.org_id),
    ("GET", "/orgs/{org_id}/units/{unit_id}"): lambda api, c: api.get_unit(c.org_id, c.unit_id),
    ("PATCH", "/orgs/{org_id}/units/{unit_id}"): lambda api, c: api.update_unit(c.org_id, c.unit_id, name="Renamed"),
    ("DELETE", "/orgs/{org_id}/units/{unit_id}"): lambda api, c: api.delete_unit(c.org_id, c.unit_id),
    ("GET", "/orgs/{org_id}/units/{unit_id}/users"): lambda api, c: api.list_unit_users(c.org_id, c.unit_id),
    ("POST", "/orgs/{org_id}/user-imports"): lambda api, c: api.import_users(
        c.org_id, [{"user_id": new_id("u"), "name": "Imported", "email": "imported@e2e.example"}]
    ),
    ("GET", "/orgs/{org_id}/user-imports/{import_id}"): lambda api, c: api.get_user_import(c.org_id, c.import_id),
}


def test_the_matrix_and_the_calls_cover_every_route():
    routes = {(route.method, route.path) for route in ROUTES}
    assert set(EXPECTED) == routes
    assert set(CALLS) == routes


def _cell(route: tuple[str, str], who: str, allowed: bool, tenants: Tenants, operator: Client) -> Cell:
    user_id = "amy" if who == "member_a_on_amy" else "alice"
    cell = Cell(tenants.a, user_id, tenants.tickets[user_id])
    if "{unit_id}" in route[1]:
        with suppress(AlreadyExists):  # made by the first cell that needs it
            operator.create_unit(tenants.a, cell.unit_id, "E2E team")
    if "{import_id}" in route[1]:
        rows = [{"user_id": new_id("u"), "name": "Imported", "email": "imported@e2e.example"}]
        cell.import_id = operator.import_users(tenants.a, rows).import_id
        import_done(operator, tenants.a, cell.import_id)  # on AWS its job would add a user mid-snapshot
    if allowed and route[0] == "DELETE":
        if route[1] == "/orgs/{org_id}/units/{unit_id}":
            cell.unit_id = operator.create_unit(tenants.a, new_id("t"), "Doomed").unit_id
        elif route[1] == "/orgs/{org_id}":
            cell.org_id = operator.create_org(new_id(), name="E2E doomed").org_id
        elif route[1] == "/orgs/{org_id}/users/{user_id}":
            cell.user_id = operator.create_user(tenants.a, new_id("u"), name="Doomed", email="d@e2e.example").user_id
        else:
            cell.ticket_id = operator.create_ticket(tenants.a, user_id, "Doomed").ticket_id
    return cell


def import_done(operator: Client, org_id: str, import_id: str) -> None:
    """Wait for an import's job: on AWS it runs from a queue after the 202 and adds its users then."""
    waits.eventually(
        lambda: operator.get_user_import(org_id, import_id).status,
        lambda status: status == "done",
        f"import {import_id}'s job",
        waits.JOB_SECONDS,
    )


def _snapshot(operator: Client, cell: Cell) -> tuple:
    return (
        operator.get_org(cell.org_id),
        operator.get_user(cell.org_id, cell.user_id),
        operator.get_ticket(cell.org_id, cell.ticket_id),
        operator.list_users(cell.org_id, limit=100).items,
        operator.list_tickets(cell.org_id, cell.user_id, limit=100).items,
        operator.list_units(cell.org_id, limit=100).items,
    )


@pytest.mark.parametrize("who", CALLERS)
@pytest.mark.parametrize("route", list(EXPECTED), ids=lambda route: f"{route[0]} {route[1]}")
def test_each_caller_gets_what_the_policy_says_and_nothing_of_another_org(target, tenants, operator, route, who):
    expected = isolation.expected(route, who)
    api = tenants.callers["member_a" if who.startswith("member_a") else who]
    if api is None:
        pytest.skip(f"{who}: {target.no_user_tokens}")
    allowed = expected < 400
    cell = _cell(route, who, allowed, tenants, operator)
    # Settled: on AWS the lists in it read GSI1, which may show an earlier test's write only now.
    before = None if allowed else waits.settled(lambda: _snapshot(operator, cell), "the snapshot")

    result = None
    try:
        try:
            result = CALLS[route](api, cell)
            status = api.last_response.status_code
        except ApiError as error:
            status = error.status

        assert status == expected, api.last_response.text
        if who not in ("operator", "no_token"):
            foreign = tenants.b if who != "admin_b" else tenants.a
            assert foreign not in api.last_response.text
        assert "bolt secret" not in api.last_response.text
        if not allowed:
            assert _snapshot(operator, cell) == before
        elif route == ("DELETE", "/orgs/{org_id}"):  # on AWS a GET just after may still find it
            waits.gone(lambda: operator.get_org(cell.org_id), "the deleted org")
        elif route == ("POST", "/orgs/{org_id}/user-imports"):
            import_done(operator, tenants.a, result.import_id)  # its user is added before the next test reads
    finally:  # an org the cell made or the call created goes, whether the checks passed or not
        if route == ("POST", "/orgs") and result is not None:
            delete_org(operator, result.org_id)
        elif route == ("DELETE", "/orgs/{org_id}") and cell.org_id != tenants.a:
            delete_org(operator, cell.org_id)
