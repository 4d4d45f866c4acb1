"""Route x caller matrix: who may do what, decided before DynamoDB, with no cross-tenant leak."""

import json

import pytest

from controlplane import config
from controlplane.http import routes
from controlplane.http.resolver import Resolver
from controlplane.http.routes import ROUTES
from controlplane.logic import organizations
from local import authorizer as local_authorizer
from local import isolation, tokens
from local.apigw import LambdaContext, build_event
from local.isolation import EXPECTED
from local.samples import BODIES
from local.seed import fetch
from tests.api import OPERATOR, Reply, admin, call, create_org, create_ticket, create_user, member

# Each caller of the matrix (local.isolation.CALLERS), and whose resources they act on in acme.
CALLERS = {
    "operator": (OPERATOR, "alice"),
    "admin_a": (admin("acme", "root"), "alice"),
    "member_a_own": (member("acme", "alice"), "alice"),
    "member_a_on_amy": (member("acme", "alice"), "amy"),
    "admin_b": (admin("bolt", "bob"), "alice"),
    "no_token": (None, "alice"),
}
# Only a ticket's stored owner can tell a member's own ticket from another's: these routes decide
# with the one DynamoDB request they make anyway (a condition on the write, or a check of the read).
IMPORT = "import"  # the tenants fixture's key of acme's user import
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
    SUSPENDED_TOKENS.update(
        operator=tokens.issue(tokens.OPERATOR),
        admin_a=tokens.for_user("acme", "root"),
        member_a_own=tokens.for_user("acme", "alice"),
    )
    for org_id in ("acme", "bolt"):  # each org has a unit "eng"; bolt's holds its secret-named user
        call("POST", f"/orgs/{org_id}/units", {"unit_id": "eng", "name": f"{org_id} eng"})
    create_user("bolt", "bolt-secret-keeper", unit="eng")
    tickets = {user_id: create_ticket("acme", user_id).body["ticket_id"] for user_id in ("alice", "amy")}
    rows = [{"user_id": "ann", "name": "Ann", "email": "ann@example.com"}]
    return {**tickets, IMPORT: call("POST", "/orgs/acme/user-imports", {"rows": rows}).body["import_id"]}


def test_matrix_covers_every_route_and_caller():
    assert set(EXPECTED) == {(r.method, r.path) for r in ROUTES}
    assert tuple(CALLERS) == isolation.CALLERS


@pytest.mark.parametrize("who", list(CALLERS))
@pytest.mark.parametrize("route", list(EXPECTED), ids=lambda r: f"{r[0]} {r[1]}")
def test_route_answers_each_caller_as_the_policy_says(tenants, dynamodb_calls, route, who):
    caller, subject = CALLERS[who]
    expected = isolation.expected(route, who)
    ids = {"ticket_id": tenants[subject], "import_id": tenants[IMPORT], "unit_id": "eng"}
    path = route[1].format(org_id="acme", user_id=subject, **ids)
    ticket_before = call("GET", f"/orgs/acme/tickets/{tenants[subject]}").body
    dynamodb_calls.clear()

    reply = call(route[0], path, BODIES.get(route), caller=caller)

    assert reply.status == expected, reply.body
    text = json.dumps(reply.body)
    if caller is not None and caller is not OPERATOR:
        foreign = "bolt" if caller["org_id"] == "acme" else "acme"
        assert foreign not in text
    assert "bolt secret" not in text
    if expected in (401, 403):
        assert reply.error_code == {401: "unauthorized", 403: "forbidden"}[expected]
        if route in DECIDED_BY_THE_ITEM and who == "member_a_on_amy":
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


def test_an_org_admin_on_an_operators_route_is_told_it_is_for_operators(table, dynamodb_calls):
    dynamodb_calls.clear()

    reply = call("GET", "/orgs", caller=admin("acme", "root"))

    assert (reply.status, reply.error_code) == (403, "forbidden")
    assert reply.body["error"]["message"] == "Only operators may do this"
    assert dynamodb_calls == []


def test_member_may_not_change_their_own_role(tenants, dynamodb_calls):
    reply = call("PATCH", "/orgs/acme/users/alice", {"role": "admin"}, caller=member("acme", "alice"))

    assert reply.status == 403
    assert call("GET", "/orgs/acme/users/alice").body["role"] == "member"


def test_member_may_not_change_their_own_email_which_the_sign_in_takes_as_verified(tenants, dynamodb_calls):
    reply = call("PATCH", "/orgs/acme/users/alice", {"email": "a@elsewhere.example"}, caller=member("acme", "alice"))

    assert reply.status == 403 and "email" in reply.body["error"]["message"]
    assert dynamodb_calls == []
    assert call("PATCH", "/orgs/acme/users/alice", {"name": "Al"}, caller=member("acme", "alice")).status == 200


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
    "context",
    [{}, {"sub": ""}, {"org_id": "acme", "role": "admin"}],
    ids=["empty", "blank-sub", "no-sub"],
)
def test_an_authorizer_context_without_a_subject_is_401(table, context):
    reply = call("GET", "/orgs/acme", caller=context)

    assert reply.status == 401
    assert reply.error_code == "unauthorized"


def test_no_token_is_401_before_a_malformed_id_is_422(table, dynamodb_calls):
    dynamodb_calls.clear()

    reply = call("GET", "/orgs/ACME/users", caller=None)

    assert (reply.status, reply.error_code) == (401, "unauthorized")
    assert dynamodb_calls == []


def test_a_tenants_malformed_id_is_422_before_access_is_decided(table, dynamodb_calls):
    # "acme\n" passes a regex that ends in $ (as the resolver's does); checked whole, it is no org id,
    # so acme's admin is told it is malformed, as an operator is, not that it is another org. Sent
    # decoded: API Gateway hands "acme%0A" on as it is, which no regex takes for "acme".
    dynamodb_calls.clear()

    reply = call("GET", "/orgs/acme\n/users", caller=admin("acme", "root"))

    assert (reply.status, reply.error_code) == (422, "validation_error"), reply.body
    assert reply.body["error"]["details"][0]["loc"] == ["path", "org_id"]
    assert dynamodb_calls == []


def test_a_caller_without_org_or_role_gets_403_not_data(tenants):
    reply = call("GET", "/orgs/acme", caller={"sub": "someone"})

    assert reply.status == 403


# Fail closed: a route the table does not describe is for operators only.


@pytest.fixture
def unlisted_route(table):
    """A route registered in a handler at run time, with no record in the route table: it reads
    the org, so any DynamoDB request it would make is seen."""
    app = Resolver()

    @app.get("/orgs/<org_id>/unlisted")
    def unlisted(org_id: str) -> dict:
        return organizations.get_org(org_id, app.caller).model_dump()

    create_org("acme")
    return app.entry_point()


@pytest.mark.parametrize(
    "caller", [member("acme", "alice"), admin("acme", "root"), admin("bolt", "bob")], ids=["member", "admin", "other"]
)
def test_a_route_without_a_rule_is_403_with_no_dynamodb_request(unlisted_route, dynamodb_calls, caller):
    assert routes.find("GET", "/orgs/{org_id}/unlisted") is None
    dynamodb_calls.clear()

    reply = _invoke(unlisted_route, "GET", "/orgs/acme/unlisted", caller)

    assert reply.status == 403
    assert reply.error_code == "forbidden"
    assert dynamodb_calls == []


def test_a_route_without_a_rule_serves_operators(unlisted_route):
    reply = _invoke(unlisted_route, "GET", "/orgs/acme/unlisted", OPERATOR)

    assert reply.status == 200
    assert reply.body["org_id"] == "acme"


def _invoke(handler, method: str, path: str, caller: dict) -> Reply:
    event = build_event(method, path, authorizer=caller)
    event["resource"] = "/orgs/{org_id}/unlisted"  # API Gateway's resource, as if it were deployed
    event["pathParameters"] = {"org_id": "acme"}
    response = handler(event, LambdaContext(function_name="organizations"))
    return Reply(response["statusCode"], {}, json.loads(response["body"]))


# Who before what: the caller is refused before anything they sent is parsed or validated.

BAD_BODY = '{"name": ' + "[" * 5  # not JSON


@pytest.mark.parametrize(
    ("caller", "status"),
    [(None, 401), (admin("bolt", "bob"), 403), (member("acme", "alice"), 403)],
    ids=["no-token", "other-org", "member"],
)
@pytest.mark.parametrize(
    ("method", "path", "extra"),
    [
        ("PATCH", "/orgs/acme", {}),
        ("POST", "/orgs/acme/users", {}),
        ("PATCH", "/orgs/acme/users/root", {}),
        ("GET", "/orgs", {"query": {"limit": "many"}}),
        ("POST", "/orgs/acme/users", {"headers": {"Content-Type": ["multipart/form-data"]}}),
    ],
    ids=["patch-org", "create-user", "patch-user", "bad-query", "not-json"],
)
def test_callers_are_refused_before_what_they_sent_is_read(
    tenants, dynamodb_calls, caller, status, method, path, extra
):
    dynamodb_calls.clear()
    body = None if method == "GET" else BAD_BODY

    reply = call(method, path, body, caller=caller, **extra)

    assert reply.status == status, reply.body
    assert dynamodb_calls == []


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [("GET", "/nowhere", 404), ("PUT", "/orgs/acme", 405), ("POST", "/orgs/acme/tickets/x", 405)],
)
@pytest.mark.parametrize("caller", [None, member("acme", "alice"), OPERATOR], ids=["no-token", "member", "operator"])
def test_unknown_routes_stay_404_and_405_for_every_caller(table, method, path, status, caller):
    assert call(method, path, caller=caller).status == status


# The suspended-org column (local.isolation.expected_suspended): through the local gateway, which
# runs the API's authorizer as API Gateway does, with its cache's clock moved past the TTL.

# Each caller's token, minted by ``tenants`` once its users exist: a user's token carries the subject
# stored on their item.
SUSPENDED_TOKENS: dict[str, str] = {}


def _set_status(table: str, status: str) -> None:
    """The operators' PATCH: one UpdateItem of the org's status."""
    body = {"status": status} | ({"suspension_reason": "Unpaid invoices"} if status == "suspended" else {})
    assert call("PATCH", "/orgs/acme", body).status == 200


# What a status change itself writes on the org item; every other attribute, and every other item, stays.
_STATUS_CHANGE = {"status", "suspended_at", "suspension_reason", "version", "updated_at", "updated_by"}


def _items(table: str) -> list[dict]:
    """acme's items, the org item without what a status change writes."""
    items = config.dynamodb().scan(TableName=table)["Items"]
    acme = [
        {k: v for k, v in item.items() if not (item["SK"]["S"].startswith("METADATA#") and k in _STATUS_CHANGE)}
        for item in items
        if item["PK"]["S"].startswith("ORG#acme")
    ]
    return sorted(acme, key=json.dumps)


def _over_http(gateway: str, route: tuple[str, str], who: str, tenants: dict[str, str]):
    ids = {"ticket_id": tenants["alice"], "import_id": tenants[IMPORT], "unit_id": "eng"}
    path = route[1].format(org_id="acme", user_id="alice", **ids)
    headers = {"Authorization": f"Bearer {SUSPENDED_TOKENS[who]}"}
    return fetch(f"{gateway}{path}", route[0], BODIES.get(route), headers)


@pytest.fixture
def suspended(tenants, table, gateway, monkeypatch):
    """acme suspended, and the authorizer's cache (a minute) past its TTL."""
    clock = [1000.0]
    monkeypatch.setattr(local_authorizer.time, "monotonic", lambda: clock[0])
    for who in SUSPENDED_TOKENS:  # each token's Allow, cached before the suspension
        assert _over_http(gateway, ("GET", "/plans"), who, tenants)[0] == 200
    _set_status(table, "suspended")
    clock[0] += local_authorizer.DEFAULT_TTL_SECONDS
    return gateway


@pytest.mark.parametrize("who", isolation.SUSPENDED_CALLERS)
@pytest.mark.parametrize("route", list(EXPECTED), ids=lambda r: f"{r[0]} {r[1]}")
def test_a_suspended_orgs_callers_get_403_org_suspended_on_every_route(suspended, tenants, route, who):
    status, _, body = _over_http(suspended, route, who, tenants)

    assert status == isolation.expected_suspended(route, who), body
    if who != "operator":
        assert body["error"] == {
            "code": isolation.SUSPENDED_CODE,
            "message": "Organization acme is suspended",
            "request_id": body["error"]["request_id"],
        }


def test_after_reactivation_every_cell_is_as_before_and_no_item_was_lost(tenants, table, gateway, monkeypatch):
    # Given acme's items, then a suspension that every caller of acme has met
    monkeypatch.setenv("AUTHORIZER_TTL_SECONDS", "0")
    before = _items(table)
    _set_status(table, "suspended")
    reads = [_over_http(gateway, route, "member_a_own", tenants)[0] for route in EXPECTED]
    assert set(reads) == {403}

    # When acme is active again
    _set_status(table, "active")

    # Then its items are all there, unchanged but for the status, and the callers' reads answer as before
    assert _items(table) == before
    for who in isolation.SUSPENDED_CALLERS:
        for route in [r for r in EXPECTED if r[0] == "GET"]:
            assert _over_http(gateway, route, who, tenants)[0] == isolation.expected(route, who), (route, who)


# Fail closed on the context itself: a caller who is not an operator names an org, a user and a role


@pytest.mark.parametrize("missing", ["user_id", "org_id", "role"])
def test_a_member_context_without_a_user_id_org_or_role_is_refused_before_any_read(tenants, dynamodb_calls, missing):
    context = {**member("acme", "alice"), missing: ""}
    dynamodb_calls.clear()

    reply = call("GET", f"/orgs/acme/tickets/{tenants['alice']}", caller=context)

    assert (reply.status, reply.error_code) == (403, "forbidden")
    assert dynamodb_calls == []


@pytest.mark.parametrize(
    "context",
    [
        {**member("acme", "alice"), "user_id": ""},
        {**member("acme", "alice"), "org_id": ""},
        {**member("acme", "alice"), "role": ""},
        {**member("acme", "alice"), "role": "owner"},
    ],
    ids=["no-user_id", "no-org_id", "no-role", "a-role-of-no-rule"],
)
def test_a_context_without_a_user_id_org_or_known_role_is_refused_even_a_route_open_to_anyone(table, context):
    reply = call("GET", "/plans", caller=context)

    assert (reply.status, reply.error_code) == (403, "forbidden")
    assert reply.body["error"]["message"] == "Your sign-in names no organization, user and role"


@pytest.mark.parametrize("groups", ["support-operators", "operators-readonly"])
def test_a_group_whose_name_only_contains_operators_grants_nothing(table, dynamodb_calls, groups):
    dynamodb_calls.clear()

    reply = call("GET", "/orgs", caller={**member("acme", "alice"), "groups": groups})

    assert (reply.status, reply.error_code) == (403, "forbidden")
    assert dynamodb_calls == []
