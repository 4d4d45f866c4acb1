"""The local gateway runs the API's own authorizer (functions/authorizer) as API Gateway does: the
event it sends, the JWKS it serves, the decision cached per token for AUTHORIZER_TTL_SECONDS, and
its refusals as the stack's gateway responses. Over HTTP, on moto (the authorizer reads two items)."""

import pytest
from botocore.stub import Stubber

from authorizer import handler
from controlplane.dal.keys import org_key
from controlplane.logic import cascade
from local import authorizer, server, tokens
from local.seed import fetch
from tests.api import call

pytestmark = pytest.mark.parametrize("table", ["moto"], indirect=True)

OPERATOR = {"Authorization": f"Bearer {tokens.issue(tokens.OPERATOR)}"}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr(authorizer.time, "monotonic", fake)
    return fake


@pytest.fixture
def acme(table):
    """acme and its admin root; root's Authorization header (their token carries their stored subject)."""
    assert call("POST", "/orgs", {"org_id": "acme", "name": "Acme"}).status == 201
    body = {"user_id": "root", "name": "R", "email": "r@example.com", "role": "admin"}
    assert call("POST", "/orgs/acme/users", body).status == 201
    return {"Authorization": f"Bearer {tokens.for_user('acme', 'root')}"}


def set_status(table: str, status: str) -> None:
    """The org's status, written as the operators' PATCH writes it (one attribute of the org item)."""
    handler.dynamodb().update_item(
        TableName=table,
        Key={name: {"S": value} for name, value in org_key("acme").items()},
        UpdateExpression="SET #status = :status",
        ExpressionAttributeNames={"#status": "status"},
        ExpressionAttributeValues={":status": {"S": status}},
    )


def test_the_gateway_serves_the_development_key_as_a_jwks(table, gateway):
    status, _, body = fetch(f"{gateway}{tokens.JWKS_PATH}")

    assert status == 200
    [key] = body["keys"]
    assert (key["kty"], key["alg"], key["use"], key["kid"]) == ("RSA", "RS256", "sig", tokens.signing_key().kid)
    assert "d" not in key  # the public half only


def test_a_token_verifies_across_gateway_restarts(acme):
    for _ in range(2):
        with server.in_thread() as gateway:
            assert fetch(f"{gateway}/orgs/acme", headers=acme)[0] == 200


def test_a_decision_is_cached_per_token_for_the_ttl_across_routes(acme, table, gateway, clock, monkeypatch):
    monkeypatch.setenv("AUTHORIZER_TTL_SECONDS", "60")
    before = server.AUTHORIZER.invocations
    assert fetch(f"{gateway}/orgs/acme", headers=acme)[0] == 200
    assert fetch(f"{gateway}/orgs/acme/users", headers=acme)[0] == 200
    assert server.AUTHORIZER.invocations == before + 1

    set_status(table, "suspended")
    clock.now += 59
    assert fetch(f"{gateway}/orgs/acme", headers=acme)[0] == 200  # still the cached Allow

    clock.now += 1
    status, _, body = fetch(f"{gateway}/orgs/acme", headers=acme)
    assert (status, body["error"]["code"]) == (403, "org_suspended")
    assert body["error"]["message"] == "Organization acme is suspended"
    assert server.AUTHORIZER.invocations == before + 2


def test_a_dynamodb_outage_is_503_with_retry_after_and_not_cached(acme, gateway):
    with Stubber(handler.dynamodb()) as stub:
        stub.add_client_error("batch_get_item", "InternalServerError", http_status_code=500)
        status, headers, body = fetch(f"{gateway}/orgs/acme", headers=acme)

    assert (status, body["error"]["code"], headers["Retry-After"]) == (503, "service_unavailable", "1")
    assert fetch(f"{gateway}/orgs/acme", headers=acme)[0] == 200  # the failure was not cached


def test_an_operator_is_unaffected_by_a_suspension(acme, table, gateway, monkeypatch):
    monkeypatch.setenv("AUTHORIZER_TTL_SECONDS", "0")
    set_status(table, "suspended")

    assert fetch(f"{gateway}/orgs/acme", headers=OPERATOR)[0] == 200
    assert fetch(f"{gateway}/orgs/acme/users/root", headers=OPERATOR)[0] == 200


# The identity validation expression (authorizer.token_format): API Gateway's, honoured here


@pytest.mark.parametrize(
    "authorization",
    ["Basic dXNlcjpwYXNz", "Bearer", "Bearer a.b", "Bearer x y", "Bearer a.b.", "Bearer <script>.a.b", "a.b.c d"],
)
def test_a_malformed_header_is_401_without_calling_the_authorizer(table, gateway, authorization):
    before = server.AUTHORIZER.invocations

    status, _, body = fetch(f"{gateway}/orgs", headers={"Authorization": authorization})

    assert (status, body["error"]["code"]) == (401, "unauthorized")
    assert server.AUTHORIZER.invocations == before


@pytest.mark.parametrize("scheme", ["Bearer ", "bearer ", "BEARER ", "bEaReR  ", ""])
def test_the_scheme_is_matched_in_any_case_or_left_out(table, gateway, scheme):
    assert fetch(f"{gateway}/orgs", headers={"Authorization": f"{scheme}{tokens.issue(tokens.OPERATOR)}"})[0] == 200


@pytest.mark.parametrize("token", ["expired", "forged"])
def test_every_401_says_the_same_whatever_the_reason_as_api_gateways_does(table, gateway, token):
    """API Gateway answers a TOKEN authorizer's refusal with one static gateway response."""
    authorization = tokens.issue(tokens.OPERATOR, lifetime=-60) if token == "expired" else "a.b.c"

    status, _, body = fetch(f"{gateway}/orgs", headers={"Authorization": f"Bearer {authorization}"})

    assert (status, body["error"]["message"]) == (401, server.UNAUTHORIZED)
    assert fetch(f"{gateway}/orgs")[2]["error"]["message"] == server.UNAUTHORIZED


def test_a_user_token_minted_for_no_stored_sign_in_is_denied(acme, gateway):
    """A token with the right claims but a subject no item holds (what ``issue`` mints) is refused."""
    status, _, body = fetch(f"{gateway}/orgs/acme", headers={"Authorization": tokens.issue("admin", "acme", "root")})

    assert (status, body["error"]["code"]) == (403, "session_ended")


@pytest.mark.parametrize("gone", ["user", "org"])
def test_a_token_whose_user_or_org_was_deleted_ends_its_session_on_every_route(acme, gateway, monkeypatch, gone):
    # Given root's token, and root (or all of acme) deleted since it was issued
    monkeypatch.setenv("AUTHORIZER_TTL_SECONDS", "0")
    assert call("DELETE", "/orgs/acme/users/root" if gone == "user" else "/orgs/acme").status in (202, 204)

    # When the token calls a route of its org, and one of no org
    answers = [fetch(f"{gateway}{path}", headers=acme) for path in ("/orgs/acme/users", "/plans")]

    # Then each is the gateway's 403 session_ended, in the error contract, in one set of words
    for status, _, body in answers:
        assert status == 403
        assert set(body["error"]) == {"code", "message", "request_id"}
        assert (body["error"]["code"], body["error"]["message"]) == (
            "session_ended",
            "Your sign-in is no longer a user of organization acme",
        )


def test_a_decision_that_read_before_a_flush_is_not_cached_past_it(acme, table, gateway, monkeypatch):
    # Given a decision whose read sees acme active, and the suspension and its flush land before it returns
    monkeypatch.setenv("AUTHORIZER_TTL_SECONDS", "60")
    read = handler.read_org_and_user

    def read_then_suspended(*args, **kwargs):
        found = read(*args, **kwargs)
        set_status(table, "suspended")
        server.AUTHORIZER.on_events([{"DetailType": "Organization Suspended"}])
        return found

    monkeypatch.setattr(handler, "read_org_and_user", read_then_suspended)
    assert fetch(f"{gateway}/orgs/acme", headers=acme)[0] == 200  # decided before the change: it raced
    monkeypatch.setattr(handler, "read_org_and_user", read)

    # When the token comes back
    status, _, body = fetch(f"{gateway}/orgs/acme", headers=acme)

    # Then it is decided again, not served the Allow its flush came before
    assert (status, body["error"]["code"]) == (403, "org_suspended")


def test_a_cached_allow_is_no_pass_into_another_orgs_paths(acme, gateway, monkeypatch):
    # Given acme's admin, whose Allow (every method and path of the stage) is cached, and another org
    monkeypatch.setenv("AUTHORIZER_TTL_SECONDS", "60")
    assert call("POST", "/orgs", {"org_id": "bolt", "name": "Bolt secret"}).status == 201
    assert fetch(f"{gateway}/orgs/acme", headers=acme)[0] == 200
    before = server.AUTHORIZER.invocations

    # When the same token asks for bolt's org, users and activity, from the cache
    answers = [fetch(f"{gateway}/orgs/bolt{tail}", headers=acme) for tail in ("", "/users", "/activity")]

    # Then the function's own rule refuses each: the cached context names acme, not bolt
    assert server.AUTHORIZER.invocations == before
    for status, _, body in answers:
        assert (status, body["error"]["code"]) == (403, "forbidden") and "Bolt secret" not in str(body)


def test_a_cached_allow_of_a_user_created_again_reaches_none_of_the_deleted_users_tickets(acme, gateway, monkeypatch):
    # Given member alice's ticket, left behind by her delete (GSI1 did not show it yet, and its sweep
    # has not run), and a new member alice, whose Allow is cached
    monkeypatch.setenv("AUTHORIZER_TTL_SECONDS", "60")
    body = {"user_id": "alice", "name": "A", "email": "a@example.com", "role": "member"}
    assert call("POST", "/orgs/acme/users", body).status == 201
    old = call("POST", "/orgs/acme/users/alice/tickets", {"subject": "Hers"}).body["ticket_id"]
    with monkeypatch.context() as patched:
        patched.setattr(cascade, "delete_tickets_of", lambda *args, **kwargs: True)
        assert call("DELETE", "/orgs/acme/users/alice").status == 204
    assert call("POST", "/orgs/acme/users", body).status == 201
    alice = {"Authorization": f"Bearer {tokens.for_user('acme', 'alice')}"}
    new = fetch(f"{gateway}/orgs/acme/users/alice/tickets", "POST", {"subject": "Mine"}, headers=alice)[2]["ticket_id"]
    before = server.AUTHORIZER.invocations

    # When the new alice asks for each by id, from the cache
    answers = [fetch(f"{gateway}/orgs/acme/tickets/{ticket_id}", headers=alice) for ticket_id in (old, new)]

    # Then the cached context still says when her user was created: the old ticket is not there for her
    assert server.AUTHORIZER.invocations == before
    assert [status for status, _, _ in answers] == [404, 200]
