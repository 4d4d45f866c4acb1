"""An answer held against the committed OpenAPI document (tests/unit/test_routes.py: it is the code's):
its status is one the document gives its route, its body matches the schema the document gives that
status, and the headers the document gives it are sent when marked required, each in its schema,
and none it gives other answers only.
``tests.api.call`` checks every answer a test sees, and the ``gateway`` fixture every answer of the local
gateway, so each test checks the document as it goes."""

import json
from functools import cache
from typing import Any

import jsonschema_rs
import pytest

from controlplane.http.routes import Route
from local import ROOT, apigw, server
from local.apigw import Reply

_DOCUMENT = json.loads((ROOT / "docs" / "openapi.json").read_text())
_RESPONSES: dict[tuple[str, str], dict[str, Any]] = {
    (method.upper(), path): operation["responses"]
    for path, item in _DOCUMENT["paths"].items()
    for method, operation in item.items()
    if isinstance(operation, dict) and "responses" in operation
}
# The headers the document gives some answers: one sent with an answer it is not given to is drift too.
_CONTRACT_HEADERS = {
    name.lower()
    for responses in _RESPONSES.values()
    for response in responses.values()
    for name in response.get("headers", {})
}


def check(route: Route, reply: Reply) -> None:
    """Fail, naming the route, the status and what differs, when ``reply`` is not what the document
    says ``route`` answers."""
    documented = _RESPONSES[(route.method, route.path)]
    status = str(reply.status)
    assert status in documented, f"{route} answered {status}, undocumented: {reply.body}"
    body = _body(route.method, route.path, status)
    if body is None:
        # No content documented (a 204): any body at all is drift.
        assert reply.body is None, f"{route} answered {status} with a body the document does not give: {reply.body}"
    else:
        problems = [f"at /{'/'.join(map(str, e.instance_path))}: {e.message}" for e in body.iter_errors(reply.body)]
        assert not problems, f"{route} answered {status}, not its documented body: " + "; ".join(problems)
    sent = {name.lower(): value for name, value in reply.headers.items()}
    headers = documented[status].get("headers", {})
    for name in _CONTRACT_HEADERS - {name.lower() for name in headers}:
        assert name not in sent, f"{route} answered {status} with a {name} header the document does not give it"
    for name, header in headers.items():
        value = sent.get(name.lower())
        if value is None:
            assert not header.get("required"), f"{route} answered {status} without its required {name} header"
            continue
        problem = _header_problem(header["schema"], value)
        assert problem is None, f"{route} answered {status} with {name}: {value!r}, not its documented form: {problem}"


def watch(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Hold each answer the local gateway (``local.server``) gives a route against the document, as a
    client reads it (the last value of each header, the body as JSON); the list it returns collects
    what differs. Collected, not raised: an assertion in the server's thread would reach the client
    only as a dropped connection. A path no route has is the gateway's own 404 or 405, which the
    document gives no route."""
    drift: list[str] = []
    proxy, functions = server.Gateway.proxy, apigw.invoke

    def checked(self: server.Gateway, path: str, query: str, body: bytes) -> server.Answer:
        answer = proxy(self, path, query, body)
        route, _ = apigw.match(self.command, path)
        # A test that stands a fake in for the functions (tests/local_kit/test_local_gateway.py) tests
        # how the gateway maps any answer: what it answers then is the test's, not the API's.
        if route is not None and apigw.invoke is functions:
            status, headers, raw = answer
            try:
                check(route, Reply(status, dict(headers), json.loads(raw) if raw else None))
            except AssertionError as error:
                drift.append(str(error))
        return answer

    monkeypatch.setattr(server.Gateway, "proxy", checked)
    return drift


@cache
def _body(method: str, path: str, status: str) -> jsonschema_rs.Validator | None:
    """The validator of one operation's body at one status, built once: the schema with the
    document's components beside it, so its ``#/components/...`` references resolve."""
    content = _RESPONSES[(method, path)][status].get("content")
    if content is None:
        return None
    return jsonschema_rs.validator_for({**content["application/json"]["schema"], "components": _DOCUMENT["components"]})


def _header_problem(schema: dict[str, Any], value: str) -> str | None:
    """Why a header's text is not a value of its schema, if it is not. A header is text on the wire:
    an integer's is its digits."""
    instance: Any = value
    if schema.get("type") == "integer":
        if not value.isascii() or not value.isdigit():
            return "not an integer"
        instance = int(value)
    errors = [e.message for e in _validator(json.dumps(schema, sort_keys=True)).iter_errors(instance)]
    return "; ".join(errors) or None


@cache
def _validator(schema: str) -> jsonschema_rs.Validator:
    return jsonschema_rs.validator_for(json.loads(schema))
