"""Swagger UI shows each error status of each operation with examples of its own: a code that
belongs to that status, and the route's own 409 codes and conflicts."""

import pytest

from controlplane.http import routes
from controlplane.http.errors import DENIED_AT_THE_GATEWAY, STATUS
from controlplane.http.examples import CONFLICTS
from local import openapi


def _error_responses(operation: dict) -> dict[int, dict]:
    return {int(status): answer for status, answer in operation["responses"].items() if int(status) >= 400}


OPERATIONS = [
    (f"{method.upper()} {path}", operation)
    for path, methods in openapi.document()["paths"].items()
    for method, operation in methods.items()
]


@pytest.mark.parametrize(("name", "operation"), OPERATIONS, ids=[name for name, _ in OPERATIONS])
def test_every_error_status_has_examples_whose_code_belongs_to_that_status(name, operation):
    codes = STATUS
    for status, answer in _error_responses(operation).items():
        examples = answer["content"]["application/json"]["examples"]
        assert examples, f"{name} {status}"
        for key, example in examples.items():
            error = example["value"]["error"]
            denied = status == 403 and error["code"] in DENIED_AT_THE_GATEWAY  # the authorizer's, on every route
            assert codes[error["code"]] == status or denied, f"{name} {status}: {key} has code {error['code']}"
            assert key == error["code"] or key in CONFLICTS  # a code's example, or one of a route's conflicts
            assert set(error) >= {"code", "message", "request_id"}


def test_each_409_shows_exactly_the_routes_own_conflicts():
    document = openapi.document()
    for route in routes.ROUTES:
        operation = document["paths"][route.path][route.method.lower()]
        expected = set()
        if route.method == "POST" and route.status == 202:
            # a job (a user import): it starts, or it is refused whole; or its Idempotency-Key is in flight
            expected |= {"org_suspended", "conflict"}
        elif route.method == "POST":
            expected |= {"already_exists", "conflict"}  # the resource, or the Idempotency-Key in flight
        if route.seats:
            expected.add("quota_exceeded")
        expected |= set(route.conflicts)
        shown = set(
            operation["responses"].get("409", {}).get("content", {}).get("application/json", {}).get("examples", {})
        )
        assert shown == expected, str(route)


def test_a_422_example_has_details_and_a_503_says_when_to_retry():
    operation = openapi.document()["paths"]["/orgs/{org_id}/users"]["post"]

    [problem] = operation["responses"]["422"]["content"]["application/json"]["examples"]["validation_error"]["value"][
        "error"
    ]["details"]
    assert problem["loc"] == ["body", "email"] and problem["message"]
    assert operation["responses"]["503"]["headers"]["Retry-After"]["required"] is True


def _body_fields(document: dict, operation: dict) -> set[str]:
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    name = schema["$ref"].rsplit("/", 1)[-1]
    return set(document["components"]["schemas"][name]["properties"])


@pytest.mark.parametrize(("name", "operation"), OPERATIONS, ids=[name for name, _ in OPERATIONS])
def test_a_422_example_names_a_parameter_or_body_field_the_route_has(name, operation):
    # Given the route's parameters and body fields as the document declares them
    document = openapi.document()
    places = {(p["in"], p["name"]) for p in operation.get("parameters", [])}
    if "requestBody" in operation:
        places |= {("body", field) for field in _body_fields(document, operation)}

    # Then each 422 example names a place the route has, or one it refuses as not its own
    for example in operation["responses"]["422"]["content"]["application/json"]["examples"].values():
        for problem in example["value"]["error"].get("details") or []:
            place = tuple(problem["loc"][:2])
            assert (place in places) != (problem["type"] == "extra_forbidden"), f"{name}: {problem}"


@pytest.mark.parametrize(("name", "operation"), OPERATIONS, ids=[name for name, _ in OPERATIONS])
def test_every_403_shows_each_refusal_of_the_authorizer(name, operation):
    # A suspended org's user is refused on every route before it runs (403 org_suspended), as is a
    # deleted one (session_ended); only a route the caller's role may not call is forbidden
    examples = _error_responses(operation)[403]["content"]["application/json"]["examples"]
    assert set(examples) == DENIED_AT_THE_GATEWAY, name
