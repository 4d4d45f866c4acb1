"""Route x caller matrix: who may do what, decided before DynamoDB, with no cross-tenant leak."""

import json

import pytest

from controlplane.routes import ROUTES
from local.samples import BODIES
from tests.api import OPERATOR, admin, call, create_org, create_ticket, create_user, member

# Callers, and whose resources they act on in acme: their own (alice's) or another member's (amy's).
CALLERS = {
    "operator": (OPERATOR, "alice"),
    "admin_a": (admin("acme", "root"), "alice"),
    "member_a1_own": (member("acme", "alice"), "alice"),
    "member_a1_on_a2": (member("acme", "alice"), "amy"),
    "admin_b": (admin("bolt", "bob"), "alice"),
    "no_token": (None, "alice"),
}
#                                                   op   adminA A1own A1>A2 adminB none
EXPECTED = {
    ("POST", "/orgs"):                                 (201, 403, 403, 403, 403, 401),
    ("GET", "/orgs"):                                  (200, 403, 403, 403, 403, 401),
    ("GET", "/orgs/{org_id}"):                         (200, 200, 200, 200, 403, 401),
    ("PATCH", "/orgs/{org_id}"):                       (200, 200, 403, 403, 403, 401),
    ("DELETE", "/orgs/{org_id}"):                      (204, 403, 403, 403, 403, 401),
    ("GET", "/plans"):                                 (200, 200, 200, 200, 200, 401),
    ("POST", "/orgs/{org_id}/users"):                  (201, 201, 403, 403, 403, 401),
    ("GET", "/orgs/{org_id}/users"):                   (200, 200, 200, 200, 403, 401),
    ("GET", "/orgs/{org_id}/users/{user_id}"):         (200, 200, 200, 403, 403, 401),
    ("PATCH", "/orgs/{org_id}/users/{user_id}"):       (200, 200, 200, 403, 403, 401),
    ("DELETE", "/orgs/{org_id}/users/{user_id}"):      (204, 204, 403, 403, 403, 401),
    ("POST", "/orgs/{org_id}/users/{user_id}/tickets"): (201, 201, 201, 403, 403, 401),
    ("GET", "/orgs/{org_id}/users/{user_id}/tickets"): (200, 200, 200, 403, 403, 401),
    ("GET", "/orgs/{org_id}/tickets/{ticket_id}"):     (200, 200, 200, 403, 403, 401),
    ("PATCH", "/orgs/{org_id}/tickets/{ticket_id}"):   (200, 200, 200, 403, 403, 401),
    ("DELETE", "/orgs/{org_id}/tickets/{ticket_id}"):  (204, 204, 204, 403, 403, 401),
}  # fmt: skip
# Only a ticket's stored owner can tell a member's own ticket from another's: these routes decide
# with the one DynamoDB request they make anyway (a condition on the write, or a check of the read).
DECIDED_BY_THE_ITEM = {(m, "/orgs/{org_id}/tickets/{ticket_id}") for m in ("GET", "PATCH", "DELETE")}


@pytest.fixture
def tenants(table):
    """Two orgs: acme (admin root, members alice and amy, one ticket each) and bolt (admin bob)."""
    create_org("acme")
    create_org("bolt")
    for org_id, user_id, role in [("acme", "root", "admin"), ("acme", "alice", "member"), ("acme", "amy", "member")]:
        create_user(org_id, user_id, role=role)
    create_user("bolt", "bob", role="admin")
    create_ticket("bolt", "bob", subject="bolt secret")
    return {user_id: create_ticket("acme", user_id).body["ticket_id"] for user_id in ("alice", "amy")}


def test_matrix_covers_every_route():
    assert set(EXPECTED) == {(r.method, r.path) for r in ROUTES}


@pytest.mark.parametrize("who", list(CALLERS))
@pytest.mark.parametrize("route", list(EXPECTED), ids=lambda r: f"{r[0]} {r[1]}")
def test_route_answers_each_caller_as_the_policy_says(tenants, dynamodb_calls, route, who):
    caller, subject = CALLERS[who]
    expected = EXPECTED[route][list(CALLERS).index(who)]
    path = route[1].format(org_id="acme", user_id=subject, ticket_id=tenants[subject])
    ticket_before = call("GET", f"/orgs/acme/tickets/{tenants[subject]}").body
    dynamodb_calls.clear()

    reply = call(route[0], path, BODIES.get(route), caller=caller)

    assert reply.status == expected, reply.body
    text = json.dumps(reply.body)
    if caller is not None and caller is not OPERATOR:
        foreign = "bolt" if caller["custom:org_id"] == "acme" else "acme"
        assert foreign not in text
    assert "bolt secret" not in text
    if expected in (401, 403):
        assert reply.error_code == {401: "unauthorized", 403: "forbidden"}[expected]
        if route in DECIDED_BY_THE_ITEM and who == "member_a1_on_a2":
            assert len(dynamodb_calls) == 1
            assert call("GET", f"/orgs/acme/tickets/{tenants[subject]}").body == ticket_before
        else:
            assert dynamodb_calls == []


@pytest.mark.parametrize("org_id", ["bolt", "does-not-exist"])
def test_other_org_is_403_whether_or_not_it_exists(tenants, dynamodb_calls, org_id):
    dynamodb_calls.clear()

    reply = call("GET", f"/orgs/{org_id}", caller=admin("acme", "root"))

    assert reply.status == 403
    assert dynamodb_calls == []


def test_member_may_not_change_their_own_role(tenants, dynamodb_calls):
    reply = call("PATCH", "/orgs/acme/users/alice", {"role": "admin"}, caller=member("acme", "alice"))

    assert reply.status == 403
    assert call("GET", "/orgs/acme/users/alice").body["role"] == "member"


def test_admin_may_change_roles_but_not_the_plan(tenants):
    assert call("PATCH", "/orgs/acme/users/alice", {"role": "admin"}, caller=admin()).status == 200

    reply = call("PATCH", "/orgs/acme", {"plan": "enterprise"}, caller=admin())

    assert reply.status == 403
    assert call("GET", "/orgs/acme").body["plan"] == "free"


def test_member_creating_a_ticket_for_someone_else_is_403(tenants, dynamodb_calls):
    dynamodb_calls.clear()

    reply = create_ticket("acme", "amy", caller=member("acme", "alice"))

    assert reply.status == 403
    assert dynamodb_calls == []


@pytest.mark.parametrize(
    "claims",
    [{}, {"sub": ""}, {"custom:org_id": "acme", "custom:role": "admin"}],
    ids=["empty", "blank-sub", "no-sub"],
)
def test_claims_without_a_subject_are_401(table, claims):
    reply = call("GET", "/orgs/acme", caller=claims)

    assert reply.status == 401
    assert reply.error_code == "unauthorized"


def test_a_caller_without_org_or_role_claims_gets_403_not_data(tenants):
    reply = call("GET", "/orgs/acme", caller={"sub": "someone"})

    assert reply.status == 403
