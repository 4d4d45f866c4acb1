"""Bad bytes are refused on every route with a body, and nothing is stored (issue 29): a body that is
not UTF-8 or repeats a name in an object is 400 ``invalid_json``; a control character in text a
person writes (names, subjects, descriptions, tags, reasons, e-mail addresses) is 422, naming the
field. The routes and their fields come from the OpenAPI document the code generates, so a route or a
field added later is covered, or fails ``test_every_string_a_body_takes_is_constrained``."""

import base64
import http.client
import json

import pytest

from controlplane import config
from controlplane.http.routes import ROUTES
from controlplane.models import text
from controlplane.models.ids import EMAIL_PATTERN
from local import openapi, tokens
from local.apigw import build_event
from local.samples import BODIES
from tests.api import OPERATOR, call, create_org, create_ticket, create_user, invoke

GOOD = {"org_id": "acme", "user_id": "alice", "ticket_id": "01JD3Q0Z6V7S3M8E2K9XWQY4PB", "unit_id": "eng"}
DOCUMENT = openapi.document()


def _request_schema(route) -> dict | None:
    operation = DOCUMENT["paths"][route.path].get(route.method.lower(), {})
    if "requestBody" not in operation:
        return None
    ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    return DOCUMENT["components"]["schemas"][ref.rsplit("/", 1)[-1]]


BODY_ROUTES = [route for route in ROUTES if _request_schema(route) is not None]


def _strings(schema: dict) -> list[tuple[list, dict]]:
    """Every string a request body takes: (where in the body, its schema); a list's items at index 0."""
    found = []
    for name, prop in schema["properties"].items():
        for option in prop.get("anyOf", [prop]):
            if option.get("type") == "string":
                found.append((["body", name], option))
            elif option.get("type") == "array" and option["items"].get("type") == "string":
                found.append((["body", name, 0], option["items"]))
    return found


# A value of each kind of text with one character put inside it.
_WITH = {
    text.ONE_LINE: lambda c: f"A{c}B",
    text.LINES: lambda c: f"First line\n{c}second",
    EMAIL_PATTERN: lambda c: f"a{c}b@example.com",
}
CONTROL = {"NUL": "\x00", "ESC": "\x1b", "DEL": "\x7f", "C1 NEL": "\x85", "C1 CSI": "\x9b", "BEL": "\x07"}
ONE_LINE_ONLY = {"LF": "\n", "CR": "\r", "TAB": "\t"}
TEXT_CASES = [
    pytest.param(route, loc, schema["pattern"], char, id=f"{route} {'.'.join(map(str, loc[1:]))} {name}")
    for route in BODY_ROUTES
    for loc, schema in _strings(_request_schema(route))
    if schema.get("pattern") in _WITH
    for name, char in {**CONTROL, **(ONE_LINE_ONLY if schema["pattern"] != text.LINES else {})}.items()
]


def _path(route) -> str:
    return route.path.format(**GOOD)


def _with_value(route, loc: list, value: str) -> dict:
    body = dict(BODIES[(route.method, route.path)])
    body[loc[1]] = [value] if len(loc) == 3 else value
    return body


def _first_text(route, value: str) -> bytes:
    """The route's sample body with ``value`` as its first string (a user import's: its first row's),
    as UTF-8 JSON."""
    return json.dumps(_with_first_text(BODIES[(route.method, route.path)], value), ensure_ascii=False).encode()


def _with_first_text(sample, value: str):
    if isinstance(sample, list):
        return [_with_first_text(sample[0], value), *sample[1:]]
    name = next((name for name, given in sample.items() if isinstance(given, str)), None)
    if name is None:  # no string at this level: the first list's first item has one
        name = next(name for name, given in sample.items() if isinstance(given, list))
        return {**sample, name: _with_first_text(sample[name], value)}
    return {**sample, name: value}


def _base64_call(method: str, path: str, raw: bytes) -> tuple[int, dict]:
    """A request whose body API Gateway sent base64-encoded (as it does for a binary media type)."""
    event = build_event(method, path, body=base64.b64encode(raw).decode(), authorizer=OPERATOR)
    response = invoke({**event, "isBase64Encoded": True})
    return response["statusCode"], json.loads(response["body"])


def test_every_route_with_a_body_is_covered_here():
    # The samples the tests below start from: one per route that takes a body, and no more.
    assert {(r.method, r.path) for r in BODY_ROUTES} == set(BODIES)
    assert len(TEXT_CASES) > 0


def test_every_string_a_body_takes_is_constrained():
    # A free-text field without a pattern (or a closed set of values) would take control characters.
    loose = [
        f"{route} {'.'.join(map(str, loc[1:]))}"
        for route in BODY_ROUTES
        for loc, schema in _strings(_request_schema(route))
        if "pattern" not in schema and "enum" not in schema and "const" not in schema
    ]
    assert loose == []


@pytest.mark.parametrize("route", BODY_ROUTES, ids=str)
def test_a_body_of_invalid_utf8_as_api_gateway_hands_it_is_400_and_nothing_is_stored(dynamodb_calls, route):
    # API Gateway hands a text payload on as a string, its invalid bytes decoded as U+FFFD
    body = _first_text(route, "Bad \ufffd\ufffd").decode()

    reply = call(route.method, _path(route), body)

    assert reply.status == 400, reply.body
    assert reply.error_code == "invalid_json"
    assert "not valid UTF-8" in reply.body["error"]["message"]
    assert dynamodb_calls == []


@pytest.mark.parametrize("route", BODY_ROUTES, ids=str)
def test_a_base64_body_of_invalid_utf8_is_400_and_nothing_is_stored(dynamodb_calls, route):
    raw = _first_text(route, "@@").replace(b"@@", b"\xff\xfe")

    status, body = _base64_call(route.method, _path(route), raw)

    assert status == 400, body
    assert body["error"]["code"] == "invalid_json"
    assert dynamodb_calls == []


def test_a_base64_body_of_utf8_is_read_as_its_text(table):
    raw = json.dumps({"org_id": "acme", "name": "Ünïcode Çorp"}, ensure_ascii=False).encode()

    status, body = _base64_call("POST", "/orgs", raw)

    assert status == 201, body
    assert body["name"] == "Ünïcode Çorp"


@pytest.mark.parametrize("route", BODY_ROUTES, ids=str)
def test_a_repeated_name_in_the_body_is_400_and_nothing_is_stored(dynamodb_calls, route):
    sample = BODIES[(route.method, route.path)]
    name, value = next(iter(sample.items()))
    body = json.dumps(sample)[:-1] + f", {json.dumps(name)}: {json.dumps(value)}}}"

    reply = call(route.method, _path(route), body)

    assert reply.status == 400, reply.body
    assert reply.error_code == "invalid_json"
    assert json.dumps(name) in reply.body["error"]["message"]
    assert dynamodb_calls == []


def test_a_repeated_name_in_a_nested_object_is_400_not_a_validation_error(dynamodb_calls):
    reply = call("POST", "/orgs", '{"org_id": "acme", "name": "Acme", "x": [{"a": 1, "a": 2}]}')

    assert reply.status == 400
    assert reply.error_code == "invalid_json"
    assert dynamodb_calls == []


def test_an_escaped_lone_surrogate_is_400_and_nothing_is_stored(dynamodb_calls):
    reply = call("POST", "/orgs", '{"org_id": "acme", "name": "Acme \\ud800"}')

    assert reply.status == 400
    assert reply.error_code == "invalid_json"
    assert dynamodb_calls == []


@pytest.mark.parametrize("route", BODY_ROUTES, ids=str)
def test_a_number_too_long_for_python_to_read_is_400_and_nothing_is_stored(dynamodb_calls, route):
    # JSON puts no bound on a number's digits; Python's int() refuses more than 4,300 with a bare
    # ValueError (not a JSONDecodeError), which was a 500 on every route with a body
    body = json.dumps(BODIES[(route.method, route.path)])[:-1] + ', "n": ' + "1" * 4301 + "}"

    reply = call(route.method, _path(route), body)

    assert reply.status == 400, reply.body
    assert reply.error_code == "invalid_json"
    assert dynamodb_calls == []


@pytest.mark.parametrize(("route", "loc", "pattern", "char"), TEXT_CASES)
def test_a_control_character_in_text_is_422_naming_the_field_and_nothing_is_stored(
    dynamodb_calls, route, loc, pattern, char
):
    reply = call(route.method, _path(route), _with_value(route, loc, _WITH[pattern](char)))

    assert reply.status == 422, reply.body
    problems = {tuple(p["loc"]): p["message"] for p in reply.body["error"]["details"]}
    assert tuple(loc) in problems, problems
    assert ("control characters" if pattern != EMAIL_PATTERN else "e-mail") in problems[tuple(loc)]
    assert dynamodb_calls == []


def test_a_description_keeps_its_tabs_and_line_breaks(table):
    create_org("acme")
    create_user("acme", "alice")

    reply = create_ticket(description="Steps:\r\n\t1. open\n\t2. click")

    assert reply.status == 201, reply.body
    assert reply.body["description"] == "Steps:\r\n\t1. open\n\t2. click"


def test_invalid_utf8_over_http_through_the_local_gateway_is_400_and_stores_nothing(gateway, table):
    # make run's gateway decodes a text payload as API Gateway does; the bytes are sent as they are
    connection = http.client.HTTPConnection(gateway.removeprefix("http://"), timeout=10)
    headers = {"Authorization": f"Bearer {tokens.issue(tokens.OPERATOR)}", "Content-Type": "application/json"}

    connection.request("POST", "/orgs", b'{"org_id": "acme", "name": "\xff\xfe"}', headers)
    answer = connection.getresponse()
    error = json.loads(answer.read())["error"]
    connection.request("GET", "/orgs/acme", headers=headers)
    after = connection.getresponse()
    after.read()

    assert (answer.status, error["code"]) == (400, "invalid_json")
    assert after.status == 404


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize("route", BODY_ROUTES, ids=str)
def test_nan_or_infinity_is_400_and_nothing_is_stored(dynamodb_calls, route, constant):
    # Python's parser reads them as numbers; RFC 8259 has no such value
    body = json.dumps(BODIES[(route.method, route.path)])[:-1] + f', "n": {constant}}}'

    reply = call(route.method, _path(route), body)

    assert (reply.status, reply.error_code) == (400, "invalid_json"), reply.body
    assert constant in reply.body["error"]["message"]
    assert dynamodb_calls == []


def test_a_user_import_with_nan_in_a_row_is_400_and_no_import_is_stored(table):
    create_org("acme")

    reply = call("POST", "/orgs/acme/user-imports", '{"rows": [{"user_id": "ann", "name": NaN}]}')

    assert (reply.status, reply.error_code) == (400, "invalid_json"), reply.body
    stored = config.dynamodb().scan(TableName=config.settings().table_name)["Items"]
    assert not [item for item in stored if item["SK"]["S"].startswith("USER_IMPORT#")]


@pytest.mark.parametrize(
    "row", ['{"user_id": "ann", "\\ud800": "x"}', '{"user_id": "ann", "notes": ["\\ud800"]}'], ids=["name", "list"]
)
def test_a_lone_surrogate_in_a_name_or_a_list_of_a_user_import_row_is_400_and_no_import_is_stored(table, row):
    # rows are any objects until the import judges each: nothing but the parser stands between them and the table
    create_org("acme")

    reply = call("POST", "/orgs/acme/user-imports", f'{{"rows": [{row}]}}')

    assert (reply.status, reply.error_code) == (400, "invalid_json"), reply.body
    stored = config.dynamodb().scan(TableName=config.settings().table_name)["Items"]
    assert not [item for item in stored if item["SK"]["S"].startswith("USER_IMPORT#")]


@pytest.mark.parametrize("key", [None, "import-1"], ids=["no-key", "idempotency-key"])
def test_a_user_import_row_nested_deeply_is_400_with_or_without_a_key_and_no_import_is_stored(table, key):
    # Given a row holding a value nested 300 deep: within what the parser reads (about 1,000), beyond
    # what pydantic serializes (255), which an Idempotency-Key's record needs of the body
    create_org("acme")
    row = '{"user_id": "ann", "notes": ' + "[" * 300 + "]" * 300 + "}"
    headers = {"Idempotency-Key": [key]} if key else None

    # When it is imported
    reply = call("POST", "/orgs/acme/user-imports", f'{{"rows": [{row}]}}', headers=headers)

    # Then the body is refused as deeply nested, whether or not a key came with it (was: 202 without
    # one, the row refused on its own; a 500 with one), and nothing is stored
    assert (reply.status, reply.error_code) == (400, "invalid_json"), reply.body
    assert "nested too deeply" in reply.body["error"]["message"]
    stored = config.dynamodb().scan(TableName=config.settings().table_name)["Items"]
    assert not [item for item in stored if item["SK"]["S"].startswith(("USER_IMPORT#", "IDEMPOTENCY"))]
