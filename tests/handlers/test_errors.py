"""DynamoDB failures map to the error contract by error code; nothing leaks a stack trace."""

import io
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from botocore.exceptions import ClientError

from controlplane import config
from controlplane.observability import logger
from tests.api import call, create_org


def _fail(monkeypatch, operation: str, code: str, **extra):
    def raise_error(**_):
        raise ClientError({"Error": {"Code": code, "Message": "injected"}, **extra}, operation)

    monkeypatch.setattr(config.dynamodb(), operation, raise_error)


@pytest.mark.parametrize(
    "code", ["ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"]
)
def test_throttling_returns_503_with_retry_after(table, monkeypatch, code):
    _fail(monkeypatch, "query", code)  # the org and its seat counter, in one Query

    reply = call("GET", "/orgs/acme")

    assert reply.status == 503
    assert reply.error_code == "service_unavailable"
    assert reply.headers["Retry-After"] == "1"


def test_transaction_conflict_returns_503(table, monkeypatch):
    create_org("acme")
    reasons = [{"Code": "None"}, {"Code": "TransactionConflict"}]
    _fail(monkeypatch, "transact_write_items", "TransactionCanceledException", CancellationReasons=reasons)

    reply = call("POST", "/orgs/acme/users", {"user_id": "bob", "name": "Bob", "email": "bob@example.com"})

    assert reply.status == 503
    assert reply.error_code == "service_unavailable"
    assert reply.headers["Retry-After"] == "1"
    assert call("GET", "/orgs/acme/users/bob").status == 404
    assert call("GET", "/orgs/acme").body["usage"]["users"] == 0


@pytest.mark.parametrize("reason", ["ThrottlingError", "ProvisionedThroughputExceeded"])
def test_a_transaction_cancelled_for_throttling_returns_503_and_writes_nothing(table, monkeypatch, reason):
    # Given acme, and DynamoDB cancelling the user's transaction because one of its items is throttled
    create_org("acme")
    reasons = [{"Code": "None"}, {"Code": reason}, {"Code": "None"}]
    _fail(monkeypatch, "transact_write_items", "TransactionCanceledException", CancellationReasons=reasons)

    # When a user is created
    reply = call("POST", "/orgs/acme/users", {"user_id": "bob", "name": "Bob", "email": "bob@example.com"})

    # Then a 503 to retry later, and neither the user nor a seat
    assert reply.status == 503 and reply.error_code == "service_unavailable"
    assert reply.headers["Retry-After"] == "1"
    monkeypatch.undo()
    assert call("GET", "/orgs/acme/users/bob").status == 404
    assert call("GET", "/orgs/acme").body["usage"]["users"] == 0


def test_a_transaction_still_in_progress_after_botocores_retries_is_503_and_writes_nothing(table, monkeypatch):
    # Given acme, and a user's transaction whose earlier attempt (same client request token, sent
    # again by botocore after a timeout) DynamoDB is still applying, after botocore's retries of that
    create_org("acme")
    _fail(monkeypatch, "transact_write_items", "TransactionInProgressException")

    # When a user is created
    reply = call("POST", "/orgs/acme/users", {"user_id": "bob", "name": "Bob", "email": "bob@example.com"})

    # Then it is busy, not a bug: a 503 to retry later, and nothing written
    assert (reply.status, reply.error_code) == (503, "service_unavailable"), reply.body
    monkeypatch.undo()
    assert call("GET", "/orgs/acme/users/bob").status == 404
    assert call("GET", "/orgs/acme").body["usage"]["users"] == 0


def test_a_transaction_cancelled_for_another_reason_is_not_retried_and_is_a_500(table, monkeypatch):
    # Given acme, and DynamoDB cancelling the transaction for a reason no retry can mend (our request)
    create_org("acme")
    attempts = []

    def invalid(**_):
        attempts.append(1)
        reasons = [{"Code": "None"}, {"Code": "ValidationError", "Message": "injected"}]
        error = {"Error": {"Code": "TransactionCanceledException", "Message": "x"}, "CancellationReasons": reasons}
        raise ClientError(error, "TransactWriteItems")

    monkeypatch.setattr(config.dynamodb(), "transact_write_items", invalid)

    # When a user is created
    reply = call("POST", "/orgs/acme/users", {"user_id": "bob", "name": "Bob", "email": "bob@example.com"})

    # Then it is sent once, not as a lost race, and answered as the bug it is: a 500 that writes nothing
    assert len(attempts) == 1
    assert reply.status == 500 and reply.body["error"]["code"] == "internal_error"
    monkeypatch.undo()
    assert call("GET", "/orgs/acme/users/bob").status == 404


def test_unexpected_error_returns_500_without_details(table, monkeypatch):
    _fail(monkeypatch, "query", "InternalServerError")

    reply = call("GET", "/orgs/acme")

    assert reply.status == 500
    assert reply.body["error"]["code"] == "internal_error"
    assert "Traceback" not in str(reply.body)
    assert "injected" not in str(reply.body)


def test_error_carries_the_api_gateway_request_id(table):
    reply = call("GET", "/orgs/ghost", request_id="req-123")

    assert reply.body["error"]["request_id"] == "req-123"


def test_logs_carry_the_request_id_as_correlation_id_and_the_path_ids(table, monkeypatch):
    _fail(monkeypatch, "get_item", "InternalServerError")
    stream = io.StringIO()
    previous = logger.registered_handler.setStream(stream)

    try:
        call("GET", "/orgs/acme/users/alice", request_id="req-456")
    finally:
        logger.registered_handler.setStream(previous)

    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    error = next(r for r in records if r["level"] == "ERROR")
    assert error["correlation_id"] == "req-456"
    assert (error["org_id"], error["user_id"]) == ("acme", "alice")
    assert "injected" in error["exception"]


def test_a_transaction_that_loses_a_race_is_retried(table, monkeypatch):
    create_org("acme")
    client = config.dynamodb()
    real = client.transact_write_items
    attempts = []

    def conflict_once(**request):
        attempts.append(1)
        if len(attempts) == 1:
            reasons = [{"Code": "None"}, {"Code": "TransactionConflict"}]
            error = {"Error": {"Code": "TransactionCanceledException", "Message": "x"}, "CancellationReasons": reasons}
            raise ClientError(error, "TransactWriteItems")
        return real(**request)

    monkeypatch.setattr(client, "transact_write_items", conflict_once)

    reply = call("POST", "/orgs/acme/users", {"user_id": "bob", "name": "Bob", "email": "bob@example.com"})

    assert reply.status == 201
    assert len(attempts) == 2


# Outages: a dependency that is unreachable, hangs or fails on its side is a 503 within 10 s.


@pytest.fixture
def black_hole():
    """A port that accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


@pytest.fixture
def failing_server():
    """An endpoint that answers every request 500, as a service failing on its side."""

    class Failing(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Failing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def _closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


# Secrets Manager: the cursor secret, named by ARN as in the cloud, which a container's first request reads.
# Hanging first: a return to Powertools' default secrets client (made once, for the endpoint of its first
# use, with 60 s timeouts) then fails here.
OUTAGE_SETTINGS = {
    "dynamodb": {},
    "secrets_manager": {"CURSOR_SECRET_ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:cursor-AbCdEf"},
}


@pytest.mark.parametrize("outage", ["hanging", "unreachable", "failing"])
@pytest.mark.parametrize("service", OUTAGE_SETTINGS)
def test_an_outage_of_a_service_a_request_needs_is_503_with_retry_after_within_10_seconds(
    monkeypatch, request, black_hole, failing_server, service, outage
):
    endpoint = {"unreachable": _closed_port(), "hanging": black_hole, "failing": failing_server}[outage]
    for name, value in OUTAGE_SETTINGS[service].items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv(f"AWS_ENDPOINT_URL_{service.upper()}", endpoint)
    config.reset()
    request.addfinalizer(config.reset)
    started = time.monotonic()

    reply = call("GET", "/orgs/acme")

    assert reply.status == 503, reply.body
    assert reply.error_code == "service_unavailable"
    assert reply.headers["Retry-After"] == "1"
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)
def test_a_cognito_outage_is_503_and_leaves_no_user(table, monkeypatch):
    create_org("acme")
    monkeypatch.setenv("USER_POOL_ID", "us-east-1_outage")
    monkeypatch.setenv("AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER", _closed_port())
    config.reset()

    reply = call("POST", "/orgs/acme/users", {"user_id": "bob", "name": "Bob", "email": "bob@example.com"})

    assert reply.status == 503, reply.body
    monkeypatch.delenv("USER_POOL_ID")
    config.reset()
    assert call("GET", "/orgs/acme/users/bob").status == 404
