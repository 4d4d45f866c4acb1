"""One OpenAPI document for the whole API, merged from the three functions' Powertools resolvers by
Powertools' ``OpenAPIMerge``.

Each resolver knows only its own routes; the API is their union. OpenAPIMerge refuses a method and
path that two functions both describe (``on_conflict="error"``), but merges components with a plain
``dict.update``: a schema name two functions define differently would silently take the last one,
so tests/local_kit/test_openapi.py checks that every function defines each shared schema the same way.
The document is committed as docs/openapi.json (``python -m local.openapi`` writes it); a test
fails when it drifts from the code.
"""

import copy
import importlib
import json
import re
from functools import cache

from aws_lambda_powertools.event_handler.openapi.merge import OpenAPIMerge

from controlplane.http import routes
from controlplane.http.routes import FUNCTIONS, ORGANIZATIONS, TICKETS, USERS
from local import ROOT, descriptions

COMMITTED = ROOT / "docs" / "openapi.json"
TITLE = "Control plane API"
VERSION = "1"
DESCRIPTION = (
    "Organizations, their units (teams), their users and the tickets users open. Every error is "
    '`{"error": {"code", "message", "request_id"[, "details"]}}`. A method a path does not offer '
    "is 405 with an `Allow` header naming those it does (on AWS, API Gateway answers it as it answers "
    "an unknown path); a path the API does not have is 404. While an "
    "organization is suspended, its admins and members are refused on every route (`403 org_suspended`); "
    "operators are not. Each operation says who may call it and how many DynamoDB requests it costs."
)
CONTACT = {"name": "The control plane's operators"}
# The tags are the functions (each route's record names the one that serves it), in the table's order.
TAGS = {
    ORGANIZATIONS: "Organizations (tenants): plans, status, units, user imports, activity; the plan catalogue",
    USERS: "An organization's users, each with a sign-in and one of its seats",
    TICKETS: "The tickets an organization's users open",
}
BEARER = {
    "type": "http",
    "scheme": "bearer",
    "description": "A Cognito ID token. Locally: the output of `make token` (an operator) or "
    "`make token ORG=acme USER=alice` (a user who exists; the role is their item's), signed with the local "
    "development key.",
}


def parts() -> dict[str, dict]:
    """Each function's own document, as JSON (its resolver's, imported as Lambda would import it)."""
    return {
        function: json.loads(importlib.import_module(f"{function}.handler").app.get_openapi_json_schema())
        for function in FUNCTIONS
    }


def merged(documents: list[dict]) -> dict:
    # Documents, not discover(): that would import the handler files a second time, under module
    # names of its own, and the functions' state with them.
    merge = OpenAPIMerge(
        title=TITLE, version=VERSION, description=DESCRIPTION, security=[{"bearer": []}], on_conflict="error"
    )
    for part in documents:
        merge.add_schema(part)
    # As a document too: the security_schemes argument would put a model into a dict of JSON.
    merge.add_schema({"components": {"securitySchemes": {"bearer": BEARER}}})
    document = merge.get_openapi_schema()
    for operations in document["paths"].values():
        for operation in operations.values():
            operation["responses"].get("204", {}).pop("content", None)  # Powertools gives it the return type
    _describe(document)
    _drop_unused_schemas(document)
    return document


def _describe(document: dict) -> None:
    """The contact, a description of each tag (a function), and of each operation (``descriptions``)."""
    document["info"]["contact"] = CONTACT
    document["tags"] = [{"name": function, "description": TAGS[function]} for function in FUNCTIONS]
    for operations in document["paths"].values():
        for operation in operations.values():
            route = routes.operation(operation["operationId"])
            operation["description"] = descriptions.description(route, _body_fields(document, operation))


def _body_fields(document: dict, operation: dict) -> frozenset[str]:
    """The fields of an operation's JSON request body, if it has one."""
    for media in operation.get("requestBody", {}).get("content", {}).values():
        name = media["schema"]["$ref"].rsplit("/", 1)[-1]
        return frozenset(document["components"]["schemas"][name].get("properties", {}))
    return frozenset()


def _drop_unused_schemas(document: dict) -> None:
    """Powertools always defines its own validation error schemas; ours replace them."""
    schemas = document["components"]["schemas"]
    while unused := set(schemas) - set(re.findall(r"#/components/schemas/([\w.-]+)", json.dumps(document))):
        for name in unused:
            del schemas[name]


def document() -> dict:
    """The document, a copy of its own for each caller: schemathesis, for one, writes the links it
    infers into the document it is given."""
    return copy.deepcopy(_document())


@cache
def _document() -> dict:
    return merged(list(parts().values()))


def render() -> str:
    return json.dumps(document(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    COMMITTED.write_text(render())
    print(f"wrote {COMMITTED.relative_to(ROOT)}")
