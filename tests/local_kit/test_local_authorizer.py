"""The local gateway runs the API's own authorizer (functions/authorizer) as API Gateway does: the
event it sends, the JWKS it serves, the decision cached per token for AUTHORIZER_TTL_SECONDS, and
its refusals as the stack's gateway responses. Over HTTP, on moto (the authorizer reads one item)."""

import pytest
from botocore.stub import Stubber

from authorizer import handler
from controlplane.dal.keys import org_key
from local import authorizer, server, tokens
from local.seed import fetch
from tests.api import call

pytestmark = pytest.mark.parametrize("table", ["moto"], indirect=True)

ADMIN = {"Authorization": f"Bearer {tokens.issue('admin', 'acme', 'root')}"}
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
    assert call("POST", "/orgs", {"org_id": "acme", "name": "Acme"}).status == 201
    assert call("POST", "/orgs/acme/users", {"user_id": "root", "name": "R", "email": "r@example.com"}).status == 201


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
            assert fetch(f"{gateway}/orgs/acme", headers=ADMIN)[0] == 200


def test_a_decision_is_cached_per_token_for_the_ttl_across_routes(acme, table, gateway, clock, monkeypatch):
    monkeypatch.setenv("AUTHORIZER_TTL_SECONDS", "60")
    before = server.AUTHORIZER.invocations
    assert fetch(f"{gateway}/orgs/acme", headers=ADMIN)[0] == 200
    assert fetch(f"{gateway}/orgs/acme/users", headers=ADMIN)[0] == 200
    assert server.AUTHORIZER.invocations == before + 1

    set_status(table, "suspended")
    clock.now += 59
    assert fetch(f"{gateway}/orgs/acme", headers=ADMIN)[0] == 200  # still the cached Allow

    clock.now += 1
    status, _, body = fetch(f"{gateway}/orgs/acme", headers=ADMIN)
    assert (status, body["error"]["code"]) == (403, "org_suspended")
    assert body["error"]["message"] == "Organization acme is suspended"
    assert server.AUTHORIZER.invocations == before + 2


def test_a_dynamodb_outage_is_503_with_retry_after_and_not_cached(acme, gateway):
    with Stubber(handler.dynamodb()) as stub:
        stub.add_client_error("get_item", "InternalServerError", http_status_code=500)
        status, headers, body = fetch(f"{gateway}/orgs/acme", headers=ADMIN)

    assert (status, body["error"]["code"], headers["Retry-After"]) == (503, "service_unavailable", "1")
    assert fetch(f"{gateway}/orgs/acme", headers=ADMIN)[0] == 200  # the failure was not cached


def test_an_operator_is_unaffected_by_a_suspension(acme, table, gateway, monkeypatch):
    monkeypatch.setenv("AUTHORIZER_TTL_SECONDS", "0")
    set_status(table, "suspended")

    assert fetch(f"{gateway}/orgs/acme", headers=OPERATOR)[0] == 200
    assert fetch(f"{gateway}/orgs/acme/users/root", headers=OPERATOR)[0] == 200
