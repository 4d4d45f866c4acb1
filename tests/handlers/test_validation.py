"""Bad input gets a clear JSON 4xx, reaches no DynamoDB key and changes nothing."""

import base64
import json
from urllib.parse import quote

import pytest

from controlplane.http.errors import MAX_BODY_BYTES
from controlplane.http.routes import ROUTES
from local import ROOT, openapi
from local.apigw import build_event, match, read
from local.samples import BODIES
from tests.api import OPERATOR, call, create_org, create_ticket, create_user, invoke

ULID = "01JD3Q0Z6V7S3M8E2K9XWQY4PB"
GOOD = {"org_id": "acme", "user_id": "alice", "ticket_id": ULID, "import_id": ULID, "unit_id": "eng"}  # stable ids
# No empty id: an empty segment matches no {param} (API Gateway's rule), so it is another route
# ("/orgs/" is the org list) or none (test_unknown_path_returns_404_in_the_error_contract), never a bad id.
BAD_IDS = {
    "hash": "ac#me",
    "slash": "ac/me",
    "upper": "ACME",
    "unicode": "acmé",
    "long": "a" * 300,
    "space": "ac me",
    "dash-edge": "-acme",
    "newline": "acme\n",
    "dot-dot": "..",
}
CASES = [
    pytest.param(route, param, bad, id=f"{route.method} {route.path} {param}={name}")
    for route in ROUTES
    for param in GOOD
    if f"{{{param}}}" in route.path
    for name, bad in BAD_IDS.items()
]


@pytest.mark.parametrize(("route", "param", "bad"), CASES)
def test_bad_id_in_path_returns_4xx_before_any_dynamodb_call(dynamodb_calls, route, param, bad):
    # Percent-encoded, as a client sends it: one segment, which API Gateway hands on undecoded as the
    # path parameter ("ac%2Fme" is org_id "ac%2Fme"; a bare "ac/me" would match no route at all).
    path = route.path.format(**{**GOOD, param: quote(bad, safe="")})

    reply = call(route.method, path, BODIES.get((route.method, route.path)))

    assert (reply.status, reply.error_code) == (422, "validation_error")
    assert dynamodb_calls == []


@pytest.mark.parametrize("route", [pytest.param(route, id=str(route)) for route in ROUTES])
def test_a_query_parameter_the_route_does_not_take_is_422_before_any_dynamodb_call(dynamodb_calls, route):
    # Read as if it had not been sent, a misspelt ``limt`` would be the default page size, and a
    # ``cursor`` beside ``include=`` the first page again.
    path = route.path.format(**GOOD)

    reply = call(route.method, path, BODIES.get((route.method, route.path)), query={"limt": "5"})

    assert (reply.status, reply.error_code) == (422, "validation_error"), reply.body
    assert reply.body["error"]["details"] == [
        {"loc": ["query", "limt"], "message": "not a parameter of this request", "type": "extra_forbidden"}
    ]
    assert dynamodb_calls == []


@pytest.mark.parametrize("form", ["queryStringParameters", "multiValueQueryStringParameters"])
def test_a_query_parameter_the_route_does_not_take_is_422_in_either_form_the_event_has_alone(dynamodb_calls, form):
    # Powertools reads the values from either form; a name in one alone is as much sent as in both.
    event = build_event("GET", "/orgs/acme/users", query={"limt": "5"}, authorizer=OPERATOR)
    (other,) = {"queryStringParameters", "multiValueQueryStringParameters"} - {form}
    event[other] = None

    reply = read(invoke(event))

    assert (reply.status, reply.error_code) == (422, "validation_error"), reply.body
    assert [detail["loc"] for detail in reply.body["error"]["details"]] == [["query", "limt"]]
    assert dynamodb_calls == []


@pytest.mark.parametrize(
    ("query", "refused"),
    [
        ({"Limit": "5"}, "Limit"),  # names are matched as sent: the route takes limit, not Limit
        ({"li%6Dit": "5"}, "li%6Dit"),  # the gateway decodes a name; one still encoded was encoded twice
        ({"limit": "5", "include": "users"}, "include"),  # another route's parameter
    ],
    ids=["case", "encoded", "other-route"],
)
def test_a_query_name_the_route_does_not_take_exactly_is_422(dynamodb_calls, query, refused):
    reply = call("GET", "/orgs/acme/users", query=query)

    assert (reply.status, reply.error_code) == (422, "validation_error"), reply.body
    assert [detail["loc"] for detail in reply.body["error"]["details"]] == [["query", refused]]
    assert dynamodb_calls == []


@pytest.mark.parametrize(
    ("path", "include"), [("/orgs/acme", "users"), ("/orgs/acme/users/alice", "tickets")], ids=["org", "user"]
)
def test_a_page_size_without_include_is_422_and_with_it_sizes_the_page(table, dynamodb_calls, path, include):
    # Given an org whose user has more tickets and the org more users than a page of 2
    create_org("acme")
    for user_id in ("alice", "bob", "carol"):
        create_user("acme", user_id)
    for _ in range(3):
        create_ticket("acme", "alice")
    dynamodb_calls.clear()

    # When the org or the user is read with a page size and no include=
    refused = call("GET", path, query={"limit": "2"})

    # Then it is refused as a parameter this request does not take (read without it, it would be
    # answered as if it had not been sent), before any DynamoDB request
    assert (refused.status, refused.error_code) == (422, "validation_error"), refused.body
    assert refused.body["error"]["details"] == [
        {"loc": ["query", "limit"], "message": "not a parameter of this request", "type": "extra_forbidden"}
    ]
    assert dynamodb_calls == []

    # And with include=, the same limit sizes the included page
    included = call("GET", path, query={"include": include, "limit": "2"})
    assert included.status == 200, included.body
    assert len(included.body[include]) == 2 and included.body["next_cursor"]


@pytest.mark.parametrize(
    ("path", "include"), [("/orgs/{org_id}", "users"), ("/orgs/{org_id}/users/{user_id}", "tickets")]
)
def test_the_document_says_a_page_size_is_taken_only_with_include(path, include):
    # Given the OpenAPI document a client is generated from
    document = json.loads((ROOT / "docs" / "openapi.json").read_text())
    [limit] = [p for p in document["paths"][path]["get"]["parameters"] if p["name"] == "limit"]

    # Then its limit says what the route does: 422 without include= (the test above), not a page size
    # of the resource alone
    assert f"include={include}" in limit["description"] and "422" in limit["description"], limit


def test_a_bad_value_and_an_unknown_name_are_422_for_the_value_first(dynamodb_calls):
    # The values are checked first (docs/API.md): the unknown name is refused once they are good.
    first = call("GET", "/orgs/acme/users", query={"limit": "abc", "limt": "5"})
    then = call("GET", "/orgs/acme/users", query={"limit": "5", "limt": "5"})

    assert (first.status, first.error_code) == (422, "validation_error"), first.body
    assert [detail["loc"] for detail in first.body["error"]["details"]] == [["query", "limit"]]
    assert [detail["loc"] for detail in then.body["error"]["details"]] == [["query", "limt"]]
    assert dynamodb_calls == []


@pytest.mark.parametrize("bad", ["ac#me", "ACME", "", "a" * 64, "-x", "acmé"])
def test_bad_id_in_create_body_returns_422_and_writes_nothing(dynamodb_calls, bad):
    reply = call("POST", "/orgs", {"org_id": bad, "name": "X"})

    assert reply.status == 422
    assert reply.body["error"]["details"][0]["loc"] == ["body", "org_id"]
    assert dynamodb_calls == []


@pytest.mark.parametrize("bad", ["ACME", "ac#me", "-acme", "acmé"])
def test_a_bad_id_is_explained_the_same_in_the_path_and_in_the_body(dynamodb_calls, bad):
    in_body = call("POST", "/orgs", {"org_id": bad, "name": "X"}).body["error"]["details"]
    in_path = call("GET", f"/orgs/{bad}/users").body["error"]["details"]

    assert [p["loc"] for p in (*in_body, *in_path)] == [["body", "org_id"], ["path", "org_id"]]
    assert in_path[0]["message"] == in_body[0]["message"]
    assert "lower-case letters" in in_path[0]["message"]
    assert dynamodb_calls == []


@pytest.mark.parametrize("path", [f"/orgs/acme/user-imports/{ULID.lower()}", "/orgs/acme/user-imports/42"])
def test_a_bad_import_id_is_not_explained_as_a_ticket_id(dynamodb_calls, path):
    # the ULID's explanation was written for ticket ids, and an import's id is a ULID too
    reply = call("GET", path)

    assert (reply.status, reply.error_code) == (422, "validation_error")
    [problem] = reply.body["error"]["details"]
    assert problem["loc"] == ["path", "import_id"]
    assert "ticket" not in problem["message"] and "26 characters" in problem["message"]
    assert dynamodb_calls == []


@pytest.mark.parametrize(
    ("method", "route", "options", "loc"),
    [
        ("GET", "/orgs/{org_id}/users", {"query": {"limit": ["5", "10"]}}, ["query", "limit"]),
        ("GET", "/orgs/{org_id}/units", {"query": {"under": ["eng", "ops"]}}, ["query", "under"]),
        ("GET", "/orgs/{org_id}/units/{unit_id}/users", {"query": {"direct": ["true", "false"]}}, ["query", "direct"]),
        ("GET", "/orgs/{org_id}", {"query": {"include": ["users", "users"]}}, ["query", "include"]),
        ("GET", "/orgs/{org_id}/users", {"query": {"cursor": ["", "x"]}}, ["query", "cursor"]),
        (
            "PATCH",
            "/orgs/{org_id}/tickets/{ticket_id}",
            {"headers": {"If-Match": ['"1"', '"2"']}},
            ["header", "if-match"],
        ),
        ("POST", "/orgs/{org_id}/units", {"headers": {"Idempotency-Key": ["a", "b"]}}, ["header", "idempotency-key"]),
    ],
    ids=["limit", "under", "direct", "include", "cursor", "If-Match", "Idempotency-Key"],
)
def test_a_parameter_given_twice_is_422_that_says_so_before_any_dynamodb_call(
    dynamodb_calls, method, route, options, loc
):
    # each value is valid on its own: the answer must not blame them ("Input should be a valid integer")
    reply = call(method, route.format(**GOOD), BODIES.get((method, route)), **options)

    assert (reply.status, reply.error_code) == (422, "validation_error"), reply.body
    assert reply.body["error"]["details"] == [
        {"loc": loc, "message": "given 2 times; send it once", "type": reply.body["error"]["details"][0]["type"]}
    ]
    assert dynamodb_calls == []


@pytest.mark.parametrize(("method", "path"), [("POST", "/orgs"), ("PATCH", "/orgs/acme")])
@pytest.mark.parametrize("raw", ["{", "not json", '{"name": "x",}', "\x00"])
def test_malformed_json_returns_400_invalid_json(dynamodb_calls, method, path, raw):
    reply = call(method, path, raw)

    assert reply.status == 400
    assert reply.error_code == "invalid_json"
    assert dynamodb_calls == []


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/orgs", {"org_id": "acme", "name": 42}),
        ("/orgs", {"org_id": "acme", "name": "Acme", "plan": "platinum"}),
        ("/orgs", {"org_id": "acme"}),
        ("/orgs", ["org_id", "acme"]),
        ("/orgs", '"just a string"'),  # valid JSON, not an object
        ("/orgs", {"org_id": "acme", "name": "Acme", "PK": "ORG#other"}),
        ("/orgs", {"org_id": "acme", "name": "x" * 129}),
        ("/orgs", {"org_id": "acme", "name": "   "}),
        ("/orgs/acme/users", {"user_id": "bob", "name": "Bob", "email": "not-an-email"}),
        ("/orgs/acme/users", {"user_id": "bob", "name": "Bob", "email": "bob@example.com", "role": "owner"}),
        ("/orgs/acme/users", {"user_id": "bob", "name": "Bob", "email": "bob@example.com", "admin": True}),
        ("/orgs/acme/users/alice/tickets", {"subject": ""}),
        ("/orgs/acme/users/alice/tickets", {"subject": "s" * 201}),
        ("/orgs/acme/users/alice/tickets", {"subject": "Help", "description": "d" * 10_001}),
        ("/orgs/acme/users/alice/tickets", {"subject": "Help", "tags": [f"t{i}" for i in range(21)]}),
        ("/orgs/acme/users/alice/tickets", {"subject": "Help", "tags": ["dup", "dup"]}),
        ("/orgs/acme/users/alice/tickets", {"subject": "Help", "tags": ["x" * 33]}),
        ("/orgs/acme/users/alice/tickets", {"subject": "Help", "tags": [""]}),
        ("/orgs/acme/users/alice/tickets", {"subject": "Help", "tags": "urgent"}),
        ("/orgs/acme/users/alice/tickets", {"subject": "Help", "priority": "critical"}),
        ("/orgs/acme/users/alice/tickets", {"subject": "Help", "ticket_id": GOOD["ticket_id"]}),
    ],
)
def test_invalid_create_body_returns_422_with_details_and_writes_nothing(dynamodb_calls, path, body):
    reply = call("POST", path, body)

    assert reply.status == 422, reply.body
    assert reply.error_code == "validation_error"
    assert reply.body["error"]["details"]
    assert dynamodb_calls == []


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/orgs/acme", {}),
        ("/orgs/acme", {"name": None}),
        ("/orgs/acme", {"org_id": "other"}),
        ("/orgs/acme", {"version": 7}),
        ("/orgs/acme/users/alice", {"user_id": "mallory"}),
        ("/orgs/acme/users/alice", {"role": None}),
        (f"/orgs/acme/tickets/{GOOD['ticket_id']}", {"user_id": "bob"}),
        (f"/orgs/acme/tickets/{GOOD['ticket_id']}", {"status": "reopened"}),
        (f"/orgs/acme/tickets/{GOOD['ticket_id']}", {"tags": [f"t{i}" for i in range(21)]}),
    ],
)
def test_invalid_patch_body_returns_422_and_writes_nothing(dynamodb_calls, path, body):
    reply = call("PATCH", path, body)

    assert reply.status == 422, reply.body
    assert dynamodb_calls == []


def test_rejected_patch_leaves_the_stored_item_unchanged(table):
    create_org("acme")
    create_user("acme", "alice")
    ticket = create_ticket(subject="Original", tags=["a"]).body

    reply = call("PATCH", f"/orgs/acme/tickets/{ticket['ticket_id']}", {"subject": "New", "tags": ["a"] * 21})

    assert reply.status == 422
    assert call("GET", f"/orgs/acme/tickets/{ticket['ticket_id']}").body == ticket


def test_exactly_20_tags_are_accepted(table):
    create_org("acme")
    create_user("acme", "alice")

    reply = create_ticket(tags=[f"tag-{i}" for i in range(20)])

    assert reply.status == 201
    assert len(reply.body["tags"]) == 20


def test_non_json_content_type_returns_415(dynamodb_calls):
    body = json.dumps({"org_id": "acme", "name": "Acme"})

    reply = call("POST", "/orgs", body, headers={"Content-Type": ["text/plain"]})

    assert reply.status == 415
    assert reply.error_code == "unsupported_media_type"
    assert dynamodb_calls == []


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_a_request_without_a_body_is_not_refused_for_its_content_type(table, method):
    # Given acme and alice, and a client that sends a Content-Type on every request, body or none
    create_org("acme")
    create_user("acme", "alice")

    # When it reads or deletes alice with no body and a Content-Type that is not JSON
    reply = call(method, "/orgs/acme/users/alice", headers={"Content-Type": ["text/plain"]})

    # Then the media type of a body it did not send is not held against it
    assert reply.status == {"GET": 200, "DELETE": 204}[method], reply.body


def test_unknown_path_returns_404_in_the_error_contract(dynamodb_calls):
    reply = call("GET", "/nowhere")

    assert reply.status == 404
    assert set(reply.body["error"]) == {"code", "message", "request_id"}
    assert dynamodb_calls == []


def test_unsupported_method_returns_405_with_allow(dynamodb_calls):
    reply = call("PUT", "/orgs/acme")

    assert reply.status == 405
    assert reply.error_code == "method_not_allowed"
    assert reply.headers["Allow"] == "GET, PATCH, DELETE"
    assert dynamodb_calls == []


def test_unknown_include_returns_422(dynamodb_calls):
    reply = call("GET", "/orgs/acme", query={"include": "tickets"})

    assert reply.status == 422
    assert dynamodb_calls == []


@pytest.mark.parametrize("size", [129 * 1024, 399 * 1024, 401 * 1024, 2 * 1024 * 1024])
def test_oversized_body_returns_413_before_parsing(dynamodb_calls, size):
    body = json.dumps({"subject": "Help", "description": "d" * size})

    reply = call("POST", "/orgs/acme/users/alice/tickets", body)

    assert reply.status == 413
    assert reply.error_code == "payload_too_large"
    assert dynamodb_calls == []


@pytest.mark.parametrize("encoded", [False, True], ids=["text", "base64"])
def test_a_body_is_measured_in_bytes_not_characters(dynamodb_calls, encoded):
    # 44,000 characters, each 3 bytes in UTF-8: 132,000 bytes, over the 128 KiB a ticket's body may have
    body = json.dumps({"subject": "Help", "description": "\u20ac" * 44_000}, ensure_ascii=False)
    assert len(body) < 128 * 1024 < len(body.encode())

    status, answer = _post_ticket(body, encoded)

    assert (status, answer["error"]["code"]) == (413, "payload_too_large")
    assert dynamodb_calls == []


def test_a_base64_body_under_the_limit_is_not_refused_for_its_encoding(table):
    # 120,000 bytes: under 128 KiB, but 160,000 characters once base64-encoded
    create_org("acme")
    create_user("acme", "alice")
    body = json.dumps({"subject": "Help", "description": "d" * 9_000, "tags": []})
    padded = body + " " * (120_000 - len(body))

    status, answer = _post_ticket(padded, encoded=True)

    assert status == 201, answer


@pytest.mark.parametrize("encoded", [False, True], ids=["text", "base64"])
def test_a_body_of_exactly_the_limit_is_taken_and_one_byte_more_is_413(table, encoded):
    # 131,072 bytes: base64 of them ends in one "=", which is no byte of the body
    create_org("acme")
    create_user("acme", "alice")
    body = json.dumps({"subject": "Help", "description": "d" * 9_000, "tags": []})
    at_limit = body + " " * (MAX_BODY_BYTES - len(body))

    over, answer = _post_ticket(at_limit + " ", encoded)
    assert (over, answer["error"]["code"]) == (413, "payload_too_large")

    status, answer = _post_ticket(at_limit, encoded)
    assert status == 201, answer


def _post_ticket(body: str, encoded: bool) -> tuple[int, dict]:
    """POST a ticket for alice of acme as API Gateway passes it on: the text, or base64 of its UTF-8."""
    if encoded:
        body = base64.b64encode(body.encode()).decode()
    event = build_event("POST", "/orgs/acme/users/alice/tickets", body=body, authorizer=OPERATOR)
    response = invoke({**event, "isBase64Encoded": encoded})
    return response["statusCode"], json.loads(response["body"])


def test_largest_valid_ticket_is_accepted(table):
    create_org("acme")
    create_user("acme", "alice")

    reply = create_ticket(subject="s" * 200, description="d" * 10_000, tags=[f"{i:02d}" + "t" * 30 for i in range(20)])

    assert reply.status == 201


@pytest.mark.parametrize("method", ["POST", "PATCH"])
def test_largest_valid_ticket_as_an_ascii_only_encoder_writes_it_is_accepted(table, method):
    # json.dumps' default (and Python requests' json=) escapes every character beyond ASCII: an emoji
    # is 12 bytes (a surrogate pair, \ud83d\ude00), so a valid ticket's body is over 127 KiB
    create_org("acme")
    create_user("acme", "alice")
    ticket = create_ticket().body["ticket_id"]
    emoji = "\U0001f600"
    largest = {
        "subject": emoji * 200,
        "description": emoji * 10_000,
        "status": "pending",
        "priority": "urgent",
        "tags": [chr(0x1F600 + i) + emoji * 31 for i in range(20)],
    }
    body = json.dumps(largest)
    assert len(body) > 127 * 1024 and body.isascii()
    path = "/orgs/acme/users/alice/tickets" if method == "POST" else f"/orgs/acme/tickets/{ticket}"

    reply = call(method, path, body)

    assert reply.status in (200, 201), reply.body
    assert reply.body["description"] == largest["description"]


@pytest.mark.parametrize("depth", [33, 1_000, 30_000])
def test_deeply_nested_json_returns_400_that_says_so(dynamodb_calls, depth):
    reply = call("POST", "/orgs", "[" * depth + "]" * depth)

    assert reply.status == 400
    assert reply.error_code == "invalid_json"
    assert "nested too deeply" in reply.body["error"]["message"]
    assert dynamodb_calls == []


def test_json_nested_32_levels_is_read_and_judged_by_the_model(dynamodb_calls):
    # 32 levels is the most a body may have: read, then refused for what it is (not an object)
    reply = call("POST", "/orgs", "[" * 32 + "]" * 32)

    assert (reply.status, reply.error_code) == (422, "validation_error"), reply.body
    assert dynamodb_calls == []


@pytest.mark.parametrize(
    ("method", "path", "content_type"),
    [
        ("POST", "/orgs", "Application/JSON; charset=utf-8"),
        ("POST", "/orgs", "application/json;charset=UTF-8"),
        ("PATCH", "/orgs/acme", "application/merge-patch+json"),
        ("PATCH", "/orgs/acme", "APPLICATION/JSON"),
    ],
)
def test_json_media_types_are_matched_in_any_case_and_with_parameters(table, method, path, content_type):
    if method == "PATCH":
        call("POST", "/orgs", {"org_id": "acme", "name": "Acme"})
    body = {"org_id": "acme", "name": "Acme"} if method == "POST" else {"name": "Acme Corp"}

    reply = call(method, path, json.dumps(body), headers={"Content-Type": [content_type]})

    assert reply.status == {"POST": 201, "PATCH": 200}[method], reply.body


def test_merge_patch_is_only_for_patch(table):
    reply = call(
        "POST",
        "/orgs",
        '{"org_id": "acme", "name": "Acme"}',
        headers={"Content-Type": ["application/merge-patch+json"]},
    )

    assert reply.status == 415


@pytest.mark.parametrize(
    "content_type", ["multipart/form-data", "application/x-www-form-urlencoded", "text/plain; charset=utf-8"]
)
def test_bodies_that_are_not_json_are_415_before_parsing(dynamodb_calls, content_type):
    reply = call("POST", "/orgs", '{"org_id": "acme", "name": "Acme"}', headers={"Content-Type": [content_type]})

    assert reply.status == 415
    assert dynamodb_calls == []


@pytest.mark.parametrize(
    ("body", "content_type"),
    [("user_id=alice", "application/x-www-form-urlencoded"), ("x" * (MAX_BODY_BYTES + 1), "text/plain")],
    ids=["form", "oversize"],
)
@pytest.mark.parametrize(
    "route", [pytest.param(route, id=str(route)) for route in ROUTES if route.method in ("GET", "DELETE")]
)
def test_a_body_sent_to_a_route_that_takes_none_is_ignored_not_415_or_413(table, route, body, content_type):
    # Given a route that reads no body, and its answer to a request without one
    path = route.path.format(**GOOD)
    without = call(route.method, path)

    # When a body comes with the request anyway (curl -X DELETE -d sends one as a form), of a media
    # type or a size that a route taking a body would refuse
    reply = call(route.method, path, body, headers={"Content-Type": [content_type]})

    # Then it is answered as without it: the OpenAPI document (which call() holds each answer to)
    # gives 413 and 415 only to the routes that take a body
    assert (reply.status, reply.error_code) == (without.status, without.error_code), reply.body


@pytest.mark.parametrize(
    ("method", "path", "query", "body"),
    [
        ("GET", "/orgs/ACME/users", None, None),
        ("DELETE", "/orgs/ACME/units/eng", None, None),
        ("GET", "/orgs", {"limit": "101"}, None),
        ("GET", "/plans", {"limit": "5"}, None),
        ("POST", "/orgs", None, {"org_id": "ACME", "name": "Acme"}),
        ("POST", "/orgs/acme/users", None, {"user_id": "bob", "email": "bob", "name": "Bob"}),
    ],
)
def test_the_documented_422_of_a_route_is_what_it_answers(table, method, path, query, body):
    # Given the route's 422 example in the OpenAPI document
    route, _ = match(method, path)
    example = openapi.document()["paths"][route.path][method.lower()]["responses"]["422"]
    [shown] = example["content"]["application/json"]["examples"]["validation_error"]["value"]["error"]["details"]

    # When the route gets the input the example names
    reply = call(method, path, body, query=query)

    # Then it answers that very problem: place, message and type
    assert reply.status == 422, reply.body
    assert shown in reply.body["error"]["details"]
