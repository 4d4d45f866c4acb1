"""The Lambda authorizer (functions/authorizer): what it accepts, what it refuses, what it reads.

Its JWKS is served over HTTP from a thread, as Cognito serves a pool's, so the fetch, the refetch on
an unknown ``kid`` and an outage are the real code path. The org lives in the test's table.
"""

import base64
import hashlib
import hmac
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError
from botocore.stub import Stubber
from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey

from authorizer import handler
from controlplane.dal import stamps, tenant_keys
from controlplane.dal.keys import user_key
from controlplane.logic import cascade
from tests.api import call, create_org, create_ticket, create_user

ISSUER, AUDIENCE, CONSOLE_AUDIENCE = "https://issuer.example/pool", "app-client", "console-client"
METHOD_ARN = "arn:aws:execute-api:us-east-1:123456789012:abc123/prod/GET/orgs/acme"
EVERY_METHOD = "arn:aws:execute-api:us-east-1:123456789012:abc123/prod/*/*"
KEY = RSAKey.generate_key(2048, private=True, parameters={"kid": "key-1"})
ROTATED = RSAKey.generate_key(2048, private=True, parameters={"kid": "key-2"})
FORGER = RSAKey.generate_key(2048, private=True, parameters={"kid": "key-1"})  # same kid, another key


class Clock:
    """The authorizer's clock (``handler._clock``): time passes only when a test's endpoint says, or
    the authorizer pauses (``handler._sleep``: each pause is kept)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.pauses: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds


class Jwks:
    """A JWKS endpoint: the keys it serves, whether it is up, how often it was asked, and how long
    (on the authorizer's clock) it takes to answer."""

    def __init__(self, clock: Clock) -> None:
        self.keys, self.up, self.fetches, self.seconds = [KEY], True, 0, 0.0
        self.clock = clock


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr(handler, "_clock", fake)
    monkeypatch.setattr(handler, "_sleep", fake.sleep)
    return fake


@pytest.fixture
def jwks(monkeypatch, table, clock):
    state = Jwks(clock)

    class Endpoint(BaseHTTPRequestHandler):
        def do_GET(self):
            state.fetches += 1
            state.clock.now += state.seconds
            body = json.dumps({"keys": [key.as_dict(private=False) for key in state.keys]}).encode()
            self.send_response(200 if state.up else 503)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("JWKS_URL", f"http://127.0.0.1:{server.server_port}/.well-known/jwks.json")
    monkeypatch.setenv("TOKEN_ISSUER", ISSUER)
    monkeypatch.setenv("TOKEN_AUDIENCES", f"{AUDIENCE},{CONSOLE_AUDIENCE}")
    handler.reset()
    yield state
    handler.reset()
    server.shutdown()
    server.server_close()


@pytest.fixture
def reads(jwks):
    """The DynamoDB operations the authorizer sends (its own client)."""
    calls: list[str] = []
    handler.dynamodb().meta.events.register("before-send.dynamodb", lambda event_name, **_: calls.append(event_name))
    return calls


def token(key: RSAKey = KEY, role: str = "admin", org_id: str = "acme", **overrides) -> str:
    now = int(time.time())
    claims = {"sub": f"sub-{org_id}-{role}", "iss": ISSUER, "aud": AUDIENCE, "token_use": "id", "exp": now + 3600}
    if role == "operator":
        claims["cognito:groups"] = ["operators"]
    else:
        claims |= {"custom:org_id": org_id, "custom:user_id": "alice", "custom:role": role}
    return jwt.encode({"alg": "RS256", "kid": key.kid}, claims | overrides, key)


def signed_up(org_id: str = "acme", user_id: str = "alice", role: str = "admin", **org) -> str:
    """The org (if new) and its user, created through the API; the user's stored sign-in subject."""
    if call("GET", f"/orgs/{org_id}").status == 404:
        create_org(org_id, **org)
    assert create_user(org_id, user_id, role=role).status == 201
    return stored_subject(org_id, user_id)


def stored_subject(org_id: str, user_id: str) -> str:
    return _stored(org_id, user_id)[stamps.SIGN_IN_SUBJECT]["S"]


def created_at(org_id: str, user_id: str) -> str:
    return _stored(org_id, user_id)["created_at"]["S"]


def _stored(org_id: str, user_id: str) -> dict:
    key = {name: {"S": value} for name, value in user_key(org_id, user_id).items()}
    return handler.dynamodb().get_item(TableName=os.environ["TABLE_NAME"], Key=key)["Item"]


def authorize(authorization: str) -> dict:
    return handler.lambda_handler({"type": "TOKEN", "authorizationToken": authorization, "methodArn": METHOD_ARN}, None)


def refused(authorization: str) -> None:
    with pytest.raises(Exception, match=r"^Unauthorized$") as raised:
        authorize(authorization)
    assert type(raised.value) is Exception  # the exact exception API Gateway turns into a 401


def _statement(policy: dict) -> dict:
    [statement] = policy["policyDocument"]["Statement"]
    return statement


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# What it allows, and what it hands the functions


@pytest.mark.parametrize("scheme", ["Bearer ", "bearer ", "BEARER ", ""], ids=["Bearer", "bearer", "BEARER", "raw"])
def test_an_active_orgs_admin_is_allowed_on_every_method_with_one_batch_get(jwks, reads, scheme):
    subject, created = signed_up(plan="pro"), created_at("acme", "alice")
    reads.clear()

    policy = authorize(scheme + token(sub=subject))

    assert _statement(policy) == {"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": EVERY_METHOD}
    assert policy["principalId"] == subject
    assert policy["context"] == {
        "sub": subject,
        "org_id": "acme",
        "user_id": "alice",
        "role": "admin",
        "groups": "",
        "plan": "pro",
        "user_created_at": created,
    }
    assert [name.rsplit(".", 1)[-1] for name in reads] == ["BatchGetItem"]
    assert policy["usageIdentifierKey"] == tenant_keys.tenant_key("acme")  # the org's usage plan key


def test_the_read_is_one_consistent_projected_batch_of_the_org_and_the_callers_item(jwks):
    subject = signed_up()
    with Stubber(handler.dynamodb()) as stub:
        stub.add_response(
            "batch_get_item",
            {
                "Responses": {
                    os.environ["TABLE_NAME"]: [
                        {"SK": {"S": "METADATA#acme"}, "status": {"S": "active"}, "plan": {"S": "free"}},
                        {"SK": {"S": "USER#alice"}, "role": {"S": "admin"}, "sign_in_sub": {"S": subject}},
                    ]
                }
            },
            {
                "RequestItems": {
                    os.environ["TABLE_NAME"]: {
                        "Keys": [
                            {"PK": {"S": "ORG#acme"}, "SK": {"S": "METADATA#acme"}},
                            {"PK": {"S": "ORG#acme"}, "SK": {"S": "USER#alice"}},
                        ],
                        "ConsistentRead": True,
                        "ProjectionExpression": "#sk, #status, #plan, #deleting, #role, #sub, #created",
                        "ExpressionAttributeNames": {
                            "#sk": "SK",
                            "#status": "status",
                            "#plan": "plan",
                            "#deleting": "deleting_since",
                            "#role": "role",
                            "#sub": "sign_in_sub",
                            "#created": "created_at",
                        },
                    }
                }
            },
        )
        assert _statement(authorize(token(sub=subject)))["Effect"] == "Allow"
        stub.assert_no_pending_responses()


def test_the_role_comes_from_the_item_not_the_token(jwks):
    subject = signed_up(role="member")

    policy = authorize(token(sub=subject, **{"custom:role": "admin"}))

    assert (_statement(policy)["Effect"], policy["context"]["role"]) == ("Allow", "member")


def test_the_console_clients_tokens_are_accepted_too(jwks):
    subject = signed_up()

    assert _statement(authorize(token(sub=subject, aud=CONSOLE_AUDIENCE)))["Effect"] == "Allow"


def test_keys_left_unprocessed_in_every_read_fail_the_decision(jwks):
    subject = signed_up()
    table = os.environ["TABLE_NAME"]
    unprocessed = {"Responses": {table: []}, "UnprocessedKeys": {table: {"Keys": [{"PK": {"S": "ORG#acme"}}]}}}
    with Stubber(handler.dynamodb()) as stub:
        for _ in range(handler.READS):
            stub.add_response("batch_get_item", unprocessed)
        with pytest.raises(RuntimeError, match="unprocessed"):
            authorize(token(sub=subject))
        stub.assert_no_pending_responses()


class _Body:
    """What AWSResponse reads a body from (urllib3's response, in a real call)."""

    def __init__(self, content: bytes):
        self.content = content

    def stream(self):
        yield self.content


def _answer(sent: list[str], clock: Clock, answers: list[tuple[int, dict]], seconds: float = 0.0):
    """A before-send hook: each BatchGetItem request takes ``seconds`` on the authorizer's clock and
    gets the next of ``answers`` (status, body), the last one again when they run out."""

    def answer(request, **_):
        sent.append(request.url)
        clock.now += seconds
        status, body = answers[min(len(sent), len(answers)) - 1]
        return AWSResponse(request.url, status, {}, _Body(json.dumps(body).encode()))

    return answer


FAILING = (500, {"__type": "InternalServerError"})
THROTTLED = (400, {"__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException"})


def _unprocessed() -> tuple[int, dict]:
    table = os.environ["TABLE_NAME"]
    return 200, {"Responses": {table: []}, "UnprocessedKeys": {table: {"Keys": [{"PK": {"S": "ORG#acme"}}]}}}


def test_a_failing_dynamodb_is_tried_reads_times_in_all_then_the_decision_fails(jwks, clock):
    subject = signed_up()
    sent: list[str] = []
    handler.dynamodb().meta.events.register("before-send.dynamodb.BatchGetItem", _answer(sent, clock, [FAILING]))

    with pytest.raises(ClientError):
        authorize(token(sub=subject))

    assert len(sent) == handler.READS  # botocore's own attempts are one per request: none added


def test_each_resend_waits_a_random_pause_doubled_each_time_and_the_first_request_none(jwks, clock, monkeypatch):
    # Given a DynamoDB that throttles, then fails, then answers; and pauses drawn at their longest
    subject = signed_up()
    sent: list[str] = []
    refusals = _answer(sent, clock, [THROTTLED, FAILING])
    refuse_twice = lambda request, **_: refusals(request) if len(sent) < 2 else sent.append(request.url)  # noqa: E731
    handler.dynamodb().meta.events.register("before-send.dynamodb.BatchGetItem", refuse_twice)
    drawn: list[tuple[float, float]] = []
    monkeypatch.setattr(handler.random, "uniform", lambda low, high: drawn.append((low, high)) or high)

    # When a decision is asked
    policy = authorize(token(sub=subject))

    # Then it is made on the third request, after a pause of up to PAUSE_SECONDS, then up to twice that
    assert policy["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    assert len(sent) == 3
    assert drawn == [(0, handler.PAUSE_SECONDS), (0, 2 * handler.PAUSE_SECONDS)]
    assert clock.pauses == [handler.PAUSE_SECONDS, 2 * handler.PAUSE_SECONDS]


# The budget: one invocation ends within DECISION_SECONDS, well inside the 10 s AWS documents for an
# authorizer's response (HTTP APIs: http-api-quotas.html; REST APIs' quotas name no figure)

DOCUMENTED_LIMIT_SECONDS = 10.0


def test_a_slow_throttled_dynamodb_that_leaves_keys_unprocessed_fails_the_decision_within_the_budget(jwks, clock):
    # Given a DynamoDB whose every request takes the longest the client waits (its connect and read
    # timeouts), throttled or leaving the keys unprocessed, in turns
    subject = signed_up()
    config = handler.dynamodb().meta.config
    longest = config.connect_timeout + config.read_timeout
    sent: list[str] = []
    answers = [THROTTLED, _unprocessed(), THROTTLED, THROTTLED, _unprocessed(), THROTTLED]
    handler.dynamodb().meta.events.register("before-send.dynamodb.BatchGetItem", _answer(sent, clock, answers, longest))
    started = clock.now

    # When a decision is asked
    with pytest.raises(Exception) as raised:
        authorize(token(sub=subject))

    # Then it fails closed (an outage's error, not a 401 nor a policy) before the budget runs out,
    # having sent only the requests that could end within it
    assert str(raised.value) != "Unauthorized"
    assert clock.now - started < DOCUMENTED_LIMIT_SECONDS
    assert clock.now - started <= handler.DECISION_SECONDS
    assert len(sent) == min(handler.READS, int(handler.DECISION_SECONDS // longest))


def _slow_reads(clock: Clock) -> float:
    """Each request of the authorizer's client takes the longest it waits (its connect and read
    timeouts) on the authorizer's clock, then goes on to the table; that longest."""
    config = handler.dynamodb().meta.config
    longest = config.connect_timeout + config.read_timeout

    def take_long(**_):
        clock.now += longest

    handler.dynamodb().meta.events.register("before-send.dynamodb", take_long)
    return longest


def test_a_jwks_fetch_that_leaves_time_for_a_read_still_allows(jwks, clock, reads):
    # Given the first decision of a container, whose JWKS answers with time left for one slow read
    subject = signed_up()
    reads.clear()
    longest = _slow_reads(clock)
    jwks.seconds = handler.DECISION_SECONDS - longest - 0.5
    started = clock.now

    # When a decision is asked
    policy = authorize(token(sub=subject))

    # Then the read is sent and the caller allowed, within the budget
    assert _statement(policy)["Effect"] == "Allow"
    assert (jwks.fetches, len(reads)) == (1, 1)
    assert clock.now - started <= handler.DECISION_SECONDS


def test_a_jwks_fetch_that_leaves_no_time_for_a_read_fails_the_decision_without_one(jwks, clock, reads):
    # Given the first decision of a container, whose JWKS answers too late for one slow read to end
    # within the budget
    subject = signed_up()
    reads.clear()
    longest = _slow_reads(clock)
    jwks.seconds = handler.DECISION_SECONDS - longest + 0.5
    started = clock.now

    # When a decision is asked, then it fails closed (an outage's error) without starting the read
    with pytest.raises(RuntimeError, match="ran out"):
        authorize(token(sub=subject))
    assert (jwks.fetches, reads) == (1, [])
    assert clock.now - started <= handler.DECISION_SECONDS


# The usage plan key's secret, in Secrets Manager as in the cloud: read on a container's first decision,
# within the decision's budget

SECRET_ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:tenant-key-AbCdEf"
SECRET_READ = (200, {"ARN": SECRET_ARN, "Name": "tenant-key", "SecretString": "a-secret-in-secrets-manager"})


@pytest.fixture
def secret_reads(monkeypatch, jwks):
    """The tenant key secret named by ARN, as the stack does: the GetSecretValue requests sent (URLs)."""
    monkeypatch.setenv("TENANT_KEY_SECRET_ARN", SECRET_ARN)
    tenant_keys.reset()
    yield []
    tenant_keys.reset()


def _secret_answers(sent: list[str], clock: Clock, answers: list[tuple[int, dict]], seconds: float = 0.0) -> None:
    """Secrets Manager answers the authorizer's reads with ``answers`` in turn, each after ``seconds``."""
    hook = _answer(sent, clock, answers, seconds)
    tenant_keys.secrets_manager().meta.events.register("before-send.secrets-manager.GetSecretValue", hook)


def _secret_read_longest() -> float:
    """The longest one read of the secret waits: its client's connect and read timeouts, one attempt."""
    config = tenant_keys.secrets_manager().meta.config
    assert config.retries["total_max_attempts"] == 1
    return config.connect_timeout + config.read_timeout


def test_a_containers_first_decision_reads_the_secret_once_and_names_the_orgs_key_from_it(jwks, clock, secret_reads):
    # Given the tenant key secret in Secrets Manager
    subject = signed_up()
    _secret_answers(secret_reads, clock, [SECRET_READ])

    # When two decisions are asked
    first, second = authorize(token(sub=subject)), authorize(token(sub=subject))

    # Then the secret was read once, and both name the org's key: the HMAC of its id under that secret
    expected = hmac.new(b"a-secret-in-secrets-manager", b"acme", hashlib.sha256).hexdigest()
    assert (first["usageIdentifierKey"], second["usageIdentifierKey"]) == (expected, expected)
    assert len(secret_reads) == 1


def test_a_slow_secret_read_and_a_slow_membership_read_still_allow_within_the_budget(jwks, clock, reads, secret_reads):
    # Given a container's first decision, whose JWKS, secret read and membership read each take long:
    # the two reads the longest their clients wait
    subject = signed_up()
    reads.clear()
    secret_longest, read_longest = _secret_read_longest(), _slow_reads(clock)
    _secret_answers(secret_reads, clock, [SECRET_READ], secret_longest)
    jwks.seconds = handler.DECISION_SECONDS - secret_longest - read_longest - 0.5
    started = clock.now

    # When a decision is asked
    policy = authorize(token(sub=subject))

    # Then both reads are made once and the caller allowed, within the budget
    assert _statement(policy)["Effect"] == "Allow"
    assert (len(secret_reads), len(reads)) == (1, 1)
    assert clock.now - started <= handler.DECISION_SECONDS


def test_a_secret_read_that_leaves_no_time_for_the_membership_read_fails_the_decision_without_it(
    jwks, clock, reads, secret_reads
):
    # Given a container's first decision, whose slow JWKS and slow secret read leave too little of the
    # budget for one slow membership read
    subject = signed_up()
    reads.clear()
    secret_longest, read_longest = _secret_read_longest(), _slow_reads(clock)
    _secret_answers(secret_reads, clock, [SECRET_READ], secret_longest)
    jwks.seconds = handler.DECISION_SECONDS - secret_longest - read_longest + 0.5
    started = clock.now

    # When a decision is asked, then it fails closed (an outage's error) without the membership read
    with pytest.raises(RuntimeError, match="ran out"):
        authorize(token(sub=subject))
    assert (len(secret_reads), reads) == (1, [])
    assert clock.now - started <= handler.DECISION_SECONDS


@pytest.mark.parametrize("role", ["admin", "operator"])
def test_a_failing_secret_read_fails_the_decision_and_the_next_decision_reads_again(
    jwks, clock, secret_reads, monkeypatch, role
):
    # Given a Secrets Manager that fails once, then answers, and holds the secret the caller's key needs
    monkeypatch.setenv("OPERATORS_KEY_ARN" if role == "operator" else "TENANT_KEY_SECRET_ARN", SECRET_ARN)
    subject = signed_up() if role != "operator" else "sub-operator"
    _secret_answers(secret_reads, clock, [(500, {"__type": "InternalServiceError"}), SECRET_READ])

    # When a decision is asked, it fails closed (an outage's error, not a 401 nor a policy) after one request
    with pytest.raises(Exception) as raised:
        authorize(token(role=role, sub=subject))
    assert str(raised.value) != "Unauthorized"
    assert len(secret_reads) == 1

    # And the next decision reads the secret again, and allows
    assert _statement(authorize(token(role=role, sub=subject)))["Effect"] == "Allow"
    assert len(secret_reads) == 2


def test_an_operator_is_allowed_without_any_read(jwks, reads):
    policy = authorize(f"Bearer {token(role='operator')}")

    assert _statement(policy)["Effect"] == "Allow"
    assert policy["context"] | {"sub": ""} == {
        "sub": "",
        "org_id": "",
        "user_id": "",
        "role": "",
        "groups": "operators",
        "plan": "",
    }
    assert reads == []
    assert policy["usageIdentifierKey"] == tenant_keys.operators_key()


def test_an_operator_whose_username_has_a_dot_is_denied(jwks, reads):
    policy = authorize(token(role="operator", **{"cognito:username": "acme.alice"}))

    assert (_statement(policy)["Effect"], policy["context"]["error_code"]) == ("Deny", "forbidden")
    assert reads == []


def test_a_token_in_a_group_other_than_the_operators_is_a_tenants_decided_by_its_item(jwks):
    subject = signed_up(role="member")

    policy = authorize(token(sub=subject, **{"cognito:groups": ["support"]}))

    assert _statement(policy)["Effect"] == "Allow"
    assert {k: policy["context"][k] for k in ("org_id", "role", "groups")} == {
        "org_id": "acme",
        "role": "member",
        "groups": "",
    }


def test_an_operators_token_that_names_an_org_is_still_the_operators(jwks, reads):
    policy = authorize(token(role="operator", **{"custom:org_id": "acme", "custom:user_id": "alice"}))

    assert (policy["context"]["org_id"], policy["context"]["user_id"]) == ("", "")
    assert policy["usageIdentifierKey"] == tenant_keys.operators_key()
    assert reads == []


# Membership: the caller's own item decides, and every gap is a Deny that ends the session

ENDED = "Your sign-in is no longer a user of organization acme"


def _denied(policy: dict, code: str = "session_ended") -> str:
    assert _statement(policy) == {"Action": "execute-api:Invoke", "Effect": "Deny", "Resource": EVERY_METHOD}
    assert policy["context"]["error_code"] == code
    assert "usageIdentifierKey" not in policy
    return policy["context"]["error_message"]


def test_a_deleted_users_token_is_denied(jwks):
    subject = signed_up()
    assert call("DELETE", "/orgs/acme/users/alice").status == 204

    assert _denied(authorize(token(sub=subject))) == ENDED


def test_a_re_created_user_ids_old_token_is_denied_and_the_new_one_allowed(jwks):
    old = signed_up()
    assert call("DELETE", "/orgs/acme/users/alice").status == 204
    new = signed_up()

    assert new != old
    _denied(authorize(token(sub=old)))
    assert _statement(authorize(token(sub=new)))["Effect"] == "Allow"


def test_a_re_created_user_id_reaches_none_of_the_deleted_users_tickets_left_behind(jwks, monkeypatch):
    # Given member alice's ticket, left behind by her delete (GSI1 did not show it yet, and its sweep
    # has not run), and a new member alice signed up since
    signed_up(role="member")
    old = create_ticket("acme", "alice").body["ticket_id"]
    with monkeypatch.context() as patched:
        patched.setattr(cascade, "delete_tickets_of", lambda *args, **kwargs: True)
        assert call("DELETE", "/orgs/acme/users/alice").status == 204
    new = signed_up(role="member")

    # When the new alice asks for it by id, with the context the authorizer hands on for her token
    context = authorize(token(sub=new, role="member"))["context"]
    reply = call("GET", f"/orgs/acme/tickets/{old}", caller=context)

    # Then it is not there for her (her own are: tests/handlers/test_tickets.py)
    assert (reply.status, reply.error_code) == (404, "not_found")
    assert call("GET", f"/orgs/acme/tickets/{old}").status == 200  # still there, for the sweep


def test_a_re_created_org_ids_old_token_is_denied(jwks):
    old = signed_up()
    assert call("DELETE", "/orgs/acme").status in (202, 204)
    assert call("GET", "/orgs/acme").status == 404
    new = signed_up()

    _denied(authorize(token(sub=old)))
    assert _statement(authorize(token(sub=new)))["Effect"] == "Allow"


def test_a_user_item_without_a_subject_is_denied(jwks, table):
    subject = signed_up()
    key = {name: {"S": value} for name, value in user_key("acme", "alice").items()}
    handler.dynamodb().update_item(TableName=table, Key=key, UpdateExpression="REMOVE sign_in_sub")

    _denied(authorize(token(sub=subject)))


def test_a_user_item_with_a_role_no_rule_knows_is_denied(jwks, table):
    subject = signed_up(role="member")
    key = {name: {"S": value} for name, value in user_key("acme", "alice").items()}
    handler.dynamodb().update_item(
        TableName=table,
        Key=key,
        UpdateExpression="SET #r = :r",
        ExpressionAttributeNames={"#r": "role"},
        ExpressionAttributeValues={":r": {"S": "owner"}},
    )

    assert _denied(authorize(token(sub=subject))) == ENDED


@pytest.mark.parametrize("moved", ["the user", "their unit"])
def test_a_user_moved_between_units_keeps_their_access_and_role(jwks, moved):
    subject = signed_up(role="member")
    for unit_id in ("eng", "ops"):
        assert call("POST", "/orgs/acme/units", {"unit_id": unit_id, "name": unit_id}).status == 201
    assert call("PATCH", "/orgs/acme/users/alice", {"unit": "eng"}).status == 200
    if moved == "their unit":
        assert call("PATCH", "/orgs/acme/units/eng", {"parent_id": "ops"}).status == 200
    else:
        assert call("PATCH", "/orgs/acme/users/alice", {"unit": "ops"}).status == 200

    policy = authorize(token(sub=subject, role="member"))

    assert (_statement(policy)["Effect"], policy["context"]["role"]) == ("Allow", "member")


@pytest.mark.parametrize("missing", ["custom:user_id", "custom:org_id"])
def test_a_token_in_no_group_without_an_org_or_a_user_is_denied_without_a_read(jwks, reads, missing):
    claims = jwt.decode(token(), KEY).claims
    del claims[missing]

    assert _denied(authorize(jwt.encode({"alg": "RS256", "kid": KEY.kid}, claims, KEY)), "forbidden") == (
        "Your sign-in names no organization and user"
    )
    assert reads == []


def test_an_org_being_deleted_is_denied(jwks, table):
    subject = signed_up()
    key = {"PK": {"S": "ORG#acme"}, "SK": {"S": "METADATA#acme"}}
    handler.dynamodb().update_item(
        TableName=table,
        Key=key,
        UpdateExpression="SET deleting_since = :t",
        ExpressionAttributeValues={":t": {"S": "x"}},
    )

    assert _denied(authorize(token(sub=subject))) == ENDED


# Suspension and missing orgs


def test_a_suspended_orgs_member_is_denied_with_org_suspended_and_no_reason(jwks, table):
    subject = signed_up(role="member")
    handler.dynamodb().update_item(
        TableName=table,
        Key={"PK": {"S": "ORG#acme"}, "SK": {"S": "METADATA#acme"}},
        UpdateExpression="SET #s = :s, suspension_reason = :r",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":s": {"S": "suspended"}, ":r": {"S": "unpaid invoices"}},
    )

    policy = authorize(f"Bearer {token(role='member', sub=subject)}")

    assert _denied(policy, "org_suspended") == "Organization acme is suspended"
    assert "unpaid" not in json.dumps(policy)


def test_a_token_of_a_missing_org_is_denied(jwks):
    policy = authorize(f"Bearer {token(org_id='gone')}")

    assert _denied(policy) == "Your sign-in is no longer a user of organization gone"


def test_an_old_token_says_the_same_whether_its_org_id_is_free_or_another_tenants_now(jwks):
    # Given alice's token of acme, and acme deleted
    old = signed_up()
    assert call("DELETE", "/orgs/acme").status in (202, 204)
    assert call("GET", "/orgs/acme").status == 404
    while_gone = authorize(token(sub=old))

    # When an operator creates acme again, for another tenant, with a user of the same id
    signed_up()

    # Then the old token's refusal is word for word the same: it tells nothing of the new acme
    again = authorize(token(sub=old))
    assert _denied(again) == _denied(while_gone) == ENDED
    assert again["context"] == while_gone["context"]


@pytest.mark.parametrize("gone", ["the org", "the user"])
def test_an_old_token_whose_org_is_suspended_now_says_its_session_ended_not_the_suspension(jwks, gone):
    # Given alice's token of acme, and her user (or the whole org) deleted
    old = signed_up()
    assert call("DELETE", "/orgs/acme" if gone == "the org" else "/orgs/acme/users/alice").status in (202, 204)
    assert call("GET", "/orgs/acme" if gone == "the org" else "/orgs/acme/users/alice").status == 404

    # When acme is (made again, for another tenant, with an alice, and) suspended
    if gone == "the org":
        signed_up()
    assert call("PATCH", "/orgs/acme", {"status": "suspended", "suspension_reason": "unpaid"}).status == 200

    # Then the old token's session has ended, word for word as before: the suspension is the acme of
    # now's (another tenant's), which a token of a user who is gone is never told of
    assert _denied(authorize(token(sub=old))) == ENDED


# What it refuses: 401


def test_a_forged_signature_is_401(jwks):
    refused(f"Bearer {token(FORGER)}")


def test_alg_none_is_401(jwks):
    payload = jwt.decode(token(), KEY).claims
    unsigned = f"{_b64(json.dumps({'alg': 'none', 'kid': 'key-1'}).encode())}.{_b64(json.dumps(payload).encode())}."
    refused(f"Bearer {unsigned}")


def test_hs256_signed_with_the_public_key_is_401(jwks):
    public_pem = KEY.as_pem(private=False)
    header = _b64(json.dumps({"alg": "HS256", "kid": "key-1", "typ": "JWT"}).encode())
    body = _b64(json.dumps(jwt.decode(token(), KEY).claims).encode())
    signature = _b64(hmac.new(public_pem, f"{header}.{body}".encode(), hashlib.sha256).digest())
    refused(f"Bearer {header}.{body}.{signature}")


@pytest.mark.parametrize(
    "overrides",
    [
        {"iss": "https://issuer.example/another-pool"},
        {"aud": "another-client"},
        {"token_use": "access"},
        {"exp": int(time.time()) - 60},
        {"sub": ""},
    ],
    ids=["wrong-issuer", "wrong-audience", "access-token", "expired", "no-subject"],
)
def test_a_token_with_wrong_claims_is_401(jwks, overrides):
    refused(f"Bearer {token(**overrides)}")


@pytest.mark.parametrize("missing", ["iss", "aud", "token_use", "exp"])
def test_a_token_without_a_claim_the_decision_needs_is_401(jwks, missing):
    claims = jwt.decode(token(sub=signed_up()), KEY).claims
    del claims[missing]

    refused(f"Bearer {jwt.encode({'alg': 'RS256', 'kid': KEY.kid}, claims, KEY)}")


@pytest.mark.parametrize(
    "claims",
    [
        {"cognito:groups": {"operators": True}},  # iterated, a mapping's keys read as its groups
        {"cognito:groups": "operators"},  # split on commas, a string was read as a list of groups
        {"cognito:groups": [["operators"]]},
        {"cognito:groups": 1},
        {"custom:org_id": ["acme"]},
        {"custom:user_id": {"alice": 1}},
        {"sub": 7},
    ],
    ids=[
        "groups-a-mapping",
        "groups-a-string",
        "groups-nested",
        "groups-a-number",
        "org-a-list",
        "user-a-mapping",
        "sub-a-number",
    ],
)
def test_a_claim_of_a_type_cognito_never_signs_is_401_without_a_read(jwks, reads, claims):
    # Given a token of acme's admin (the sub of the stored sign-in) with one claim of the wrong type
    overrides = {"sub": signed_up()} | claims
    reads.clear()

    # Then it is refused as a bad token is: fail closed, no operator made of a mapping's keys, no read
    refused(f"Bearer {token(**overrides)}")
    assert reads == []


@pytest.mark.parametrize("setting", ["", " , "], ids=["empty", "blank-names"])
@pytest.mark.parametrize("aud", [AUDIENCE, [""]], ids=["an-app-client", "the-empty-name"])
def test_an_audience_setting_that_names_no_app_client_accepts_no_token(jwks, monkeypatch, setting, aud):
    # "Empty accepts nothing": joserfc, given no audiences, checked none and took every token
    monkeypatch.setenv("TOKEN_AUDIENCES", setting)

    refused(f"Bearer {token(sub=signed_up(), aud=aud)}")


@pytest.mark.parametrize("authorization", ["", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Bearer a.b", "Bearer x y"])
def test_a_missing_or_malformed_token_is_401(jwks, authorization):
    refused(authorization)


def test_a_token_whose_kid_is_not_a_string_is_401_not_a_failed_decision(jwks):
    # a list cannot be looked up among the JWKS's kids: unchecked, it raised a TypeError (a 503)
    header = _b64(json.dumps({"alg": "RS256", "kid": ["key-1"]}).encode())

    refused(f"Bearer {header}.{_b64(b'{}')}.{_b64(b'signature')}")


_NESTED = b"[" * 1000 + b"]" * 1000  # 2,700 characters of base64url: within API Gateway's header limit


@pytest.mark.parametrize(
    "header",
    [
        b'{"alg": "RS256", "kid": "key-1", "crit": 5}',
        b'{"alg": "RS256", "kid": "key-1", "crit": [5]}',
        b'{"alg": "RS256", "kid": "key-1", "x": ' + _NESTED + b"}",
        _NESTED,
    ],
    ids=["crit-a-number", "crit-a-list-of-numbers", "nested-in-a-field", "nested-header"],
)
def test_a_header_that_cannot_be_read_is_401_not_a_failed_decision(jwks, reads, header):
    # Given a token whose header no Cognito token has, forged by anyone: a "crit" that is not a list of
    # names (joserfc iterates it before checking its type: a TypeError), or JSON nested deeper than
    # Python's recursion limit (a RecursionError)
    forged = f"Bearer {_b64(header)}.{_b64(b'{}')}.{_b64(b'signature')}"

    # When it is decided, Then it is a 401 (the exact Unauthorized), not a raised error that API Gateway
    # answers 503 "retry later", and nothing is read
    refused(forged)
    assert reads == []


# The JWKS: fetched once, again for a new kid, at a bounded rate


def test_the_jwks_is_fetched_once_per_container(jwks):
    subject = signed_up()
    for _ in range(3):
        authorize(f"Bearer {token(sub=subject)}")

    assert jwks.fetches == 1


def test_a_rotated_key_is_fetched_again_and_verifies(jwks, monkeypatch):
    subject = signed_up()
    authorize(f"Bearer {token(sub=subject)}")
    jwks.keys = [KEY, ROTATED]
    monkeypatch.setattr(handler, "JWKS_REFETCH_SECONDS", 0.0)

    policy = authorize(f"Bearer {token(ROTATED, sub=subject)}")

    assert _statement(policy)["Effect"] == "Allow"
    assert jwks.fetches == 2


def test_a_flood_of_unknown_kids_fetches_the_jwks_once_per_interval(jwks):
    authorize(f"Bearer {token(org_id='gone')}")  # the first fetch, just now
    bogus = [RSAKey.generate_key(2048, private=True, parameters={"kid": f"bogus-{n}"}) for n in range(3)]

    for key in bogus:
        refused(f"Bearer {token(key)}")

    assert jwks.fetches == 1  # within JWKS_REFETCH_SECONDS of the last fetch: no more


def test_known_keys_need_no_fetch_later_so_a_jwks_outage_then_fails_no_decision(jwks, clock):
    # Given the keys fetched, then long past the refetch interval, a JWKS that is down
    subject = signed_up()
    authorize(f"Bearer {token(sub=subject)}")
    clock.now += 10 * handler.JWKS_REFETCH_SECONDS
    jwks.up = False

    # When a token of a known key comes, then it is decided from the keys held, with no fetch
    assert _statement(authorize(f"Bearer {token(sub=subject)}"))["Effect"] == "Allow"
    assert jwks.fetches == 1


def test_a_jwks_that_also_holds_a_key_of_another_type_still_verifies_tokens(jwks):
    jwks.keys = [ECKey.generate_key("P-256", private=True, parameters={"kid": "ec-1"}), KEY]

    assert _statement(authorize(f"Bearer {token(sub=signed_up())}"))["Effect"] == "Allow"


# Fail closed: an outage is a failure (503), never an Allow


def test_a_jwks_outage_fails_the_decision(jwks):
    jwks.up = False

    with pytest.raises(Exception) as raised:
        authorize(f"Bearer {token()}")

    assert str(raised.value) != "Unauthorized"


def test_a_plain_http_jwks_url_off_this_machine_fails_the_decision_without_a_fetch(jwks, monkeypatch):
    # Given a JWKS URL of plain HTTP to another host (a misconfigured stack: anyone on the path could
    # hand the authorizer keys of their own)
    monkeypatch.setenv("JWKS_URL", "http://issuer.example/.well-known/jwks.json")

    # When a token is presented, then the decision fails (503), neither an Allow nor a 401
    with pytest.raises(RuntimeError, match="JWKS_URL must be https"):
        authorize(f"Bearer {token()}")
    assert jwks.fetches == 0


def test_a_dynamodb_outage_fails_the_decision(jwks):
    with Stubber(handler.dynamodb()) as stub:
        for _ in range(handler.READS):  # each read the decision may send
            stub.add_client_error("batch_get_item", "InternalServerError", http_status_code=500)
        with pytest.raises(ClientError) as raised:
            authorize(f"Bearer {token()}")
        stub.assert_no_pending_responses()

    assert raised.value.response["Error"]["Code"] == "InternalServerError"
