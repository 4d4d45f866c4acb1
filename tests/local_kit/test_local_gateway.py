"""The local gateway (``make run``) and the seed (``make seed``), over real HTTP."""

import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys

import pytest

from local import ROOT, apigw, openapi, server, tokens
from local.dynamodb_local import JavaNotFound, free_port
from local.process import ServerProcess
from local.seed import fetch

OPERATOR = {"Authorization": f"Bearer {tokens.issue(tokens.OPERATOR)}"}


@pytest.fixture
def lambda_sees(monkeypatch):
    """Stand in for the functions: record the event, answer a canned proxy response."""
    seen = []

    def fake_invoke(event):
        seen.append(event)
        return {
            "statusCode": 202,
            "headers": {"Content-Type": "application/json", "X-Single": "one"},
            "multiValueHeaders": {"Set-Cookie": ["a=1", "b=2"], "X-Single": ["multi wins"]},
            "body": '{"ok": true}',
            "isBase64Encoded": False,
        }

    monkeypatch.setattr(apigw, "invoke", fake_invoke)
    return seen


def test_request_becomes_the_rest_proxy_event_with_multi_value_query_and_path_parameters(gateway, lambda_sees):
    fetch(f"{gateway}/orgs/acme/users?limit=5&tag=a&tag=b&empty=", headers={**OPERATOR, "X-Trace": "t1"})

    event = lambda_sees[0]
    assert (event["httpMethod"], event["resource"], event["path"]) == (
        "GET",
        "/orgs/{org_id}/users",
        "/orgs/acme/users",
    )
    assert event["pathParameters"] == {"org_id": "acme"}
    assert event["multiValueQueryStringParameters"] == {"limit": ["5"], "tag": ["a", "b"], "empty": [""]}
    assert event["queryStringParameters"] == {"limit": "5", "tag": "b", "empty": ""}
    assert event["headers"]["X-Trace"] == "t1"
    assert event["multiValueHeaders"]["X-Trace"] == ["t1"]
    assert event["requestContext"]["authorizer"]["groups"] == "operators"
    assert event["requestContext"]["path"] == "/orgs/acme/users"


def test_response_status_headers_and_body_come_back_as_api_gateway_merges_them(gateway, lambda_sees):
    status, headers, body = fetch(f"{gateway}/orgs", headers=OPERATOR)

    assert status == 202
    assert body == {"ok": True}
    assert headers.get_all("Set-Cookie") == ["a=1", "b=2"]
    assert headers.get_all("X-Single") == ["multi wins"]
    assert headers["x-amzn-RequestId"] == lambda_sees[0]["requestContext"]["requestId"]


def _forged() -> str:
    """A well-formed token signed with another RSA key, which the gateway's JWKS does not hold."""
    os.environ["LOCAL_TOKEN_KEY_FILE"] = str(ROOT / ".local" / f"forger-{os.getpid()}.json")
    try:
        return tokens.issue(tokens.OPERATOR)
    finally:
        os.unlink(os.environ.pop("LOCAL_TOKEN_KEY_FILE"))


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "Bearer",
        "Bearer nobody",
        "Basic operator",
        f"Bearer {tokens.issue(tokens.OPERATOR)[:-4]}AAAA",  # altered signature
        f"Bearer {tokens.issue(tokens.OPERATOR, lifetime=-60)}",  # expired
        f"Bearer {_forged()}",
    ],
    ids=["none", "empty", "garbage", "basic", "altered", "expired", "forged"],
)
def test_missing_or_bad_token_is_401_from_the_gateway_without_invoking(gateway, lambda_sees, authorization):
    headers = {"Authorization": authorization} if authorization else {}

    status, _, body = fetch(f"{gateway}/orgs", headers=headers)

    assert status == 401
    assert body["error"]["code"] == "unauthorized"
    assert lambda_sees == []


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # the authorizer reads the org and user: any backend
@pytest.mark.parametrize("scheme", ["Bearer ", "bearer ", ""], ids=["Bearer", "bearer", "raw"])
def test_member_token_reaches_the_function_as_the_authorizers_context(table, gateway, lambda_sees, scheme):
    # Not through invoke, which lambda_sees replaces
    create = apigw.build_event(
        "POST", "/orgs", body={"org_id": "acme", "name": "Acme"}, authorizer=apigw.OPERATOR_CONTEXT
    )
    assert apigw.run("organizations", create)["statusCode"] == 201
    body = {"user_id": "alice", "name": "Alice", "email": "alice@example.com", "role": "member"}
    join = apigw.build_event("POST", "/orgs/acme/users", body=body, authorizer=apigw.OPERATOR_CONTEXT)
    assert apigw.run("users", join)["statusCode"] == 201
    token = tokens.for_user("acme", "alice")

    fetch(f"{gateway}/orgs/acme", headers={"Authorization": f"{scheme}{token}"})

    context = lambda_sees[0]["requestContext"]["authorizer"]
    assert (context["org_id"], context["user_id"], context["role"]) == ("acme", "alice", "member")
    assert (context["plan"], context["groups"]) == ("free", "")
    assert context["principalId"] == context["sub"] == tokens.decode(token)["sub"]


def test_a_crashing_function_is_502_in_the_error_contract_like_the_stacks_default_5xx(gateway, monkeypatch):
    monkeypatch.setattr(apigw, "invoke", lambda event: 1 / 0)

    status, headers, body = fetch(f"{gateway}/orgs", headers=OPERATOR)

    assert status == 502
    assert body["error"] == {
        "code": "internal_error",
        "message": "Internal server error",
        "request_id": headers["x-amzn-RequestId"],
    }


def test_a_body_whose_event_outgrows_lambdas_payload_is_413_at_the_gateway(gateway, lambda_sees):
    # Given a body under API Gateway's 10 MB that takes more than a synchronous invoke's 6,291,456
    # bytes as a JSON string in the event: 3.5 MB of newlines, two bytes each there
    body = b'{"org_id": "acme",' + b"\n" * 3_500_000 + b'"name": "Acme"}'

    # When it is sent
    connection = http.client.HTTPConnection(gateway.removeprefix("http://"), timeout=30)
    connection.request("POST", "/orgs", body, {**OPERATOR, "Content-Type": JSON})
    answer = connection.getresponse()

    # Then the gateway answers 413, as Lambda refuses such an event, and the function never runs
    assert answer.status == 413
    assert json.loads(answer.read())["error"]["code"] == "payload_too_large"
    assert lambda_sees == []


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", lambda m: "01J00000000000000000000000" if m[0] == "{ticket_id}" else "acme", path)


def test_every_route_answers_a_missing_token_with_the_one_helpful_401(gateway, lambda_sees):
    # Given the functions' own message for a request without a caller
    function = apigw.ROUTES[0].function
    without_claims = apigw.build_event(apigw.ROUTES[0].method, _concrete(apigw.ROUTES[0].path))
    answer = apigw.handler_for(function)(without_claims, apigw.LambdaContext(function_name=function))
    functions_message = json.loads(answer["body"])["error"]["message"]

    # When every route of the table is called without a token
    answers = {
        (route.method, route.path): fetch(f"{gateway}{_concrete(route.path)}", route.method) for route in apigw.ROUTES
    }

    # Then each is the same 401, which says how to sign in and how to get a token locally
    for status, _, body in answers.values():
        assert status == 401
        assert body["error"]["message"] == server.UNAUTHORIZED
    assert server.UNAUTHORIZED.startswith(functions_message)
    assert "make -s token" in server.UNAUTHORIZED
    assert lambda_sees == []


def test_a_body_answered_early_is_not_read_as_the_next_request_on_the_connection(gateway, lambda_sees):
    # Given one keep-alive connection, as curl --next uses
    connection = http.client.HTTPConnection(gateway.removeprefix("http://"), timeout=10)
    body = json.dumps({"org_id": "zz", "name": "Z"})

    # When a POST without a token (answered 401 before any function runs) is followed by a GET with one
    connection.request("POST", "/orgs", body, {"Content-Type": "application/json"})
    first = connection.getresponse()
    first.read()
    first_socket = connection.sock
    connection.request("GET", "/orgs", headers=OPERATOR)
    second = connection.getresponse()
    second.read()

    # Then the second is the GET the client sent, on the same connection
    assert (first.status, second.status) == (401, 202)
    assert connection.sock is first_socket
    assert [(event["httpMethod"], event["path"]) for event in lambda_sees] == [("GET", "/orgs")]


def test_a_chunked_body_reaches_the_function_whole(gateway, lambda_sees):
    connection = http.client.HTTPConnection(gateway.removeprefix("http://"), timeout=10)

    connection.request("POST", "/orgs", iter([b'{"org_id": ', b'"acme"}']), {**OPERATOR, "Content-Type": JSON})
    connection.getresponse().read()
    connection.request("GET", "/orgs", headers=OPERATOR)

    assert connection.getresponse().status == 202
    assert lambda_sees[0]["body"] == '{"org_id": "acme"}'


JSON = "application/json"


def _raw(gateway: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send bytes as they are, read the answer until the server closes the connection."""
    host, port = gateway.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode().split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in header_lines)
    return int(status_line.split()[1]), headers, body


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"GARBAGE\r\n\r\n", 400),
        (b"GET /orgs HTTP/1.1 extra\r\n\r\n", 400),
        (b"GET /orgs HTTP/2.0\r\n\r\n", 505),
        (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", 414),
        (b"GET /orgs HTTP/1.1\r\nBad header line\r\n" + b"X: y\r\n" * 101 + b"\r\n", 431),
        (b"POST /orgs HTTP/1.1\r\nContent-Length: lots\r\n\r\n", 400),
        (b"POST /orgs HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n", 413),
        (b"POST /orgs HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
    ],
    ids=["garbage", "four-words", "http-2", "uri-too-long", "too-many-headers", "bad-length", "too-large", "bad-chunk"],
)
def test_malformed_http_is_answered_in_the_error_contract_and_closes(gateway, lambda_sees, request_bytes, status):
    answered, headers, body = _raw(gateway, request_bytes)

    assert answered == status
    assert headers["content-type"] == JSON
    assert headers["connection"] == "close"
    error = json.loads(body)["error"]
    assert set(error) == {"code", "message", "request_id"} and error["request_id"] == headers["x-amzn-requestid"]
    assert lambda_sees == []


def test_the_root_points_to_the_docs(gateway):
    connection = http.client.HTTPConnection(gateway.removeprefix("http://"), timeout=10)

    connection.request("GET", "/")
    answer = connection.getresponse()

    assert answer.status == 302
    assert answer.headers["Location"] == "/docs"
    assert json.loads(answer.read())["docs"] == "/docs"


def test_handlers_answer_through_the_gateway(gateway, table):
    status, headers, org = fetch(f"{gateway}/orgs", "POST", {"org_id": "acme", "name": "Acme"}, OPERATOR)

    assert status == 201
    assert headers["Location"] == "/orgs/acme"  # no stage in a local URL
    assert fetch(f"{gateway}/orgs/acme", headers=OPERATOR)[2] == org


def test_openapi_document_merges_all_routes_and_every_ref_resolves(gateway):
    status, _, document = fetch(f"{gateway}/openapi.json")

    assert status == 200
    assert document["openapi"].startswith("3.")
    assert (document["info"]["title"], document["info"]["version"]) == (openapi.TITLE, openapi.VERSION)
    served = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    assert served == {(route.method, route.path) for route in apigw.ROUTES}
    refs = set(re.findall(r'"\$ref": "#/components/schemas/([^"]+)"', json.dumps(document)))
    assert refs and refs <= set(document["components"]["schemas"])


def test_docs_serve_swagger_ui_with_its_assets_from_this_machine(gateway):
    status, headers, page = fetch(f"{gateway}/docs")

    assert status == 200
    assert headers["Content-Type"].startswith("text/html")
    assert b"persistAuthorization: true" in page  # the pasted token survives a reload
    assets = re.findall(rb"(?:href|src)='(/docs/[^']+)'", page)
    assert len(assets) == 2
    for asset in assets:
        asset_status, _, content = fetch(gateway + asset.decode())
        assert asset_status == 200 and len(content) > 10_000


# `make run` and `make seed`, as processes, on their own DynamoDB Local


class Run(ServerProcess):
    """``python -m local.server`` on free ports, with its DynamoDB Local data in ``data``."""

    def __init__(self, tmp_path, data, **env):
        try:
            super().__init__(tmp_path / f"server-{free_port()}.log", data, **env)
        except RuntimeError as error:
            pytest.fail(str(error))

    def java_pid(self) -> int:
        return int(re.search(r"DynamoDB Local on \S+ \(pid (\d+)\)", self.output())[1])


def _is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    if not shutil.which("java"):
        pytest.fail(str(JavaNotFound()))
    return tmp_path_factory.mktemp("dynamodb")


@pytest.fixture(scope="module")
def run(tmp_path_factory, data):
    running = Run(tmp_path_factory.mktemp("run"), data)
    yield running
    running.stop()


@pytest.mark.dynamodb_local
def test_run_serves_the_api_over_http_and_lists_tickets_newest_first(run):
    user = {"user_id": "alice", "name": "Alice", "email": "alice@acme.example"}
    assert fetch(f"{run.url}/orgs", "POST", {"org_id": "acme", "name": "Acme"}, OPERATOR)[0] == 201
    assert fetch(f"{run.url}/orgs/acme/users", "POST", user, OPERATOR)[0] == 201
    tickets = f"{run.url}/orgs/acme/users/alice/tickets"
    created = [fetch(tickets, "POST", {"subject": f"Ticket {i}"}, OPERATOR)[2]["ticket_id"] for i in range(3)]

    status, _, page = fetch(tickets, headers=OPERATOR)

    assert status == 200
    assert [ticket["ticket_id"] for ticket in page["items"]] == created[::-1]
    assert re.search(r"^GET /orgs/acme/users/alice/tickets 200 \d+ms$", run.output(), re.MULTILINE)


def _seed(run, *options: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "local.seed", "--url", run.url, *options]
    # its record names its DynamoDB, where the seed reads the users' subjects for their tokens
    environment = os.environ | {"LOCAL_API_FILE": run.env["LOCAL_API_FILE"]}
    return subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120)


def _tickets_by_user(run, org_id: str) -> dict[str, list[str]]:
    users = fetch(f"{run.url}/orgs/{org_id}/users?limit=100", headers=OPERATOR)[2]["items"]
    return {
        user["user_id"]: [
            ticket["ticket_id"]
            for ticket in fetch(f"{run.url}/orgs/{org_id}/users/{user['user_id']}/tickets?limit=100", headers=OPERATOR)[
                2
            ]["items"]
        ]
        for user in users
    }


@pytest.mark.dynamodb_local
def test_seed_fills_a_demo_org_through_the_api_and_a_second_run_changes_nothing(run):
    # Given an org seeded with 3 users and 25 tickets
    first = _seed(run, "--org", "seeded", "--users", "3", "--tickets", "25")
    assert first.returncode == 0, first.stderr
    seeded = _tickets_by_user(run, "seeded")
    assert len(seeded) == 3 and sum(len(tickets) for tickets in seeded.values()) == 25
    # in a small tree of units, its users in them
    tree = fetch(f"{run.url}/orgs/seeded/units", headers=OPERATOR)[2]["items"]
    assert [unit["path"] for unit in tree] == [
        "/engineering",
        "/engineering/platform",
        "/engineering/web",
        "/sales",
        "/support",
    ]
    people = fetch(f"{run.url}/orgs/seeded/units/engineering/users", headers=OPERATOR)[2]["items"]
    assert [user["user_id"] for user in people] == ["bob", "carol"]  # both in platform

    # When it is seeded again with the same options
    second = _seed(run, "--org", "seeded", "--users", "3", "--tickets", "25")

    # Then it holds the very same users and tickets, and says nothing was new
    assert second.returncode == 0, second.stderr
    assert _tickets_by_user(run, "seeded") == seeded
    assert "3 users and 25 tickets (0 users and 0 tickets new)" in second.stderr
    # And without a terminal there is no progress bar redrawn with carriage returns
    assert "\r" not in first.stderr + second.stderr


@pytest.mark.dynamodb_local
def test_seed_with_more_tickets_adds_only_the_difference(run):
    assert _seed(run, "--org", "grown", "--users", "2", "--tickets", "5").returncode == 0

    grown = _seed(run, "--org", "grown", "--users", "2", "--tickets", "12")

    assert "(0 users and 7 tickets new)" in grown.stderr
    assert sum(len(tickets) for tickets in _tickets_by_user(run, "grown").values()) == 12


@pytest.mark.dynamodb_local
def test_seed_without_a_server_says_to_start_one():
    command = [sys.executable, "-m", "local.seed", "--url", f"http://127.0.0.1:{free_port()}"]

    seeded = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)

    assert seeded.returncode == 1
    assert "make run" in seeded.stderr


@pytest.mark.dynamodb_local
def test_second_run_on_a_taken_port_exits_with_a_clear_message(run):
    env = {**run.env, "DYNAMODB_PORT": str(free_port())}

    second = subprocess.run([sys.executable, "-m", "local.server"], cwd=ROOT, env=env, capture_output=True, text=True)

    assert second.returncode == 1
    assert f"Cannot listen on 127.0.0.1:{run.port}" in second.stderr and "PORT=" in second.stderr


@pytest.mark.dynamodb_local
def test_ctrl_c_stops_the_server_and_its_java_and_a_restart_keeps_the_data(run, data, tmp_path):
    java = run.java_pid()
    fetch(f"{run.url}/orgs", "POST", {"org_id": "kept", "name": "Kept"}, OPERATOR)

    assert run.stop() == 0
    assert not _is_running(java)
    assert "Stopped." in run.output()

    again = Run(tmp_path, data)
    try:
        assert fetch(f"{again.url}/orgs/kept", headers=OPERATOR)[0] == 200
    finally:
        assert again.stop() == 0


def test_run_without_java_falls_back_to_moto_and_says_so(tmp_path):
    no_java = Run(tmp_path, tmp_path / "unused", PATH=str(tmp_path))
    try:
        status = fetch(f"{no_java.url}/orgs", "POST", {"org_id": "acme", "name": "Acme"}, OPERATOR)[0]

        assert status == 201
        assert "`java` is not on PATH" in no_java.output()
        assert "DynamoDB: moto, in memory" in no_java.output()
    finally:
        assert no_java.stop() == 0


def test_a_refused_request_with_a_body_leaves_the_kept_alive_connection_usable(gateway, lambda_sees):
    connection = http.client.HTTPConnection(gateway.removeprefix("http://"), timeout=10)
    body = json.dumps({"org_id": "acme", "name": "Acme"})

    connection.request("POST", "/orgs", body, {"Content-Type": "application/json"})  # no token
    refused = connection.getresponse()
    refused.read()
    connection.request("GET", "/orgs", headers=OPERATOR)
    answered = connection.getresponse()

    assert (refused.status, answered.status) == (401, 202)
    assert len(lambda_sees) == 1
    connection.close()


def test_swagger_uis_spec_link_opens_the_json_document(gateway):
    # Swagger UI links the document under its title as the page's own path with ?format=json
    _, _, page = fetch(f"{gateway}/docs")
    assert b'currentUrl.pathname + "?format=json"' in page

    status, headers, document = fetch(f"{gateway}/docs?format=json")

    assert status == 200
    assert headers["Content-Type"] == "application/json"
    assert document == openapi.document()


def test_the_browser_finds_no_missing_favicon(gateway):
    _, _, page = fetch(f"{gateway}/docs")
    assert b"<link rel='icon' href='data:,'>" in page  # the docs page asks for none

    status, _, body = fetch(f"{gateway}/favicon.ico")  # and a page that does gets no 404

    assert status == 204 and not body


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
def test_the_authorization_scheme_is_matched_in_any_case(gateway, lambda_sees, scheme):
    # RFC 7235: the auth-scheme is case-insensitive
    status, _, _ = fetch(f"{gateway}/orgs", headers={"Authorization": f"{scheme} {tokens.issue(tokens.OPERATOR)}"})

    assert status == 202 and lambda_sees


def test_every_error_body_has_one_json_style(gateway, table):
    # Given errors from the gateway itself, the entry point, the resolver and the console
    refusals = [
        ("/orgs", "GET", None, {}),  # the gateway's 401
        ("/nowhere", "GET", None, OPERATOR),  # the entry point's 404
        ("/orgs/acme", "PUT", None, OPERATOR),  # the entry point's 405
        ("/orgs/acme", "GET", None, OPERATOR),  # the resolver's 404
        ("/orgs", "POST", {"org_id": "Bad Id"}, OPERATOR),  # the resolver's 422
        ("/console/missing.js", "GET", None, {}),  # the console's 404
    ]
    raw_bodies = []
    for path, method, body, headers in refusals:
        # When each is read as sent
        connection = http.client.HTTPConnection(gateway.removeprefix("http://"), timeout=10)
        content_type = {"Content-Type": "application/json"} if body else {}
        connection.request(method, path, json.dumps(body) if body else None, {**headers, **content_type})
        answer = connection.getresponse()
        assert answer.status >= 400
        raw_bodies.append(answer.read().decode())
        connection.close()

    # Then each is the one compact style the resolver writes
    for raw in raw_bodies:
        assert raw == json.dumps(json.loads(raw), separators=(",", ":")), raw
