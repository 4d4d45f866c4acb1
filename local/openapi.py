"""One OpenAPI document for the whole API, merged from the three functions' Powertools resolvers.

Each resolver knows only its own routes; the API is their union. A schema name that two functions
define differently would make the merged document lie, so that is an error, not a silent pick.
The document is committed as docs/openapi.json (``python -m local.openapi`` writes it); a test
fails when it drifts from the code.
"""

import importlib
import json
import re
from functools import cache

from controlplane.routes import FUNCTIONS
from local import ROOT

COMMITTED = ROOT / "docs" / "openapi.json"

TITLE = "Control plane API"
VERSION = "1"
DESCRIPTION = (
    "Organizations, their users and the tickets users open. Every error is "
    '`{"error": {"code", "message", "request_id"[, "details"]}}`. A method a path does not offer '
    "is 405 with an `Allow` header naming those it does; a path the API does not have is 404."
)
BEARER = {
    "type": "http",
    "scheme": "bearer",
    "description": "A Cognito ID token. Locally: the output of `make token` (an operator) or "
    "`make token ORG=acme USER=alice ROLE=admin`, signed with the local development key.",
}


@cache
def document() -> dict:
    merged: dict = {
        "openapi": None,
        "info": {"title": TITLE, "version": VERSION, "description": DESCRIPTION},
        "servers": [{"url": "/"}],
        "paths": {},
        "components": {"schemas": {}, "securitySchemes": {"bearer": BEARER}},
        "security": [{"bearer": []}],
    }
    for function in FUNCTIONS:
        app = importlib.import_module(f"{function}.handler").app
        part = json.loads(app.get_openapi_json_schema(title=TITLE, version=VERSION))
        merged["openapi"] = part["openapi"]
        for path, operations in part["paths"].items():
            merged["paths"].setdefault(path, {}).update(operations)
        schemas = merged["components"]["schemas"]
        for name, schema in part.get("components", {}).get("schemas", {}).items():
            if schemas.setdefault(name, schema) != schema:
                raise ValueError(f"{function} defines schema {name} differently from another function")
    for operations in merged["paths"].values():
        for operation in operations.values():
            operation["responses"].get("204", {}).pop("content", None)  # Powertools gives it the return type
    merged["components"]["responses"] = {"MethodNotAllowed": METHOD_NOT_ALLOWED}
    _drop_unused_schemas(merged)
    return merged


METHOD_NOT_ALLOWED = {
    "description": "The path does not offer this method",
    "headers": {
        "Allow": {"description": "The methods the path offers", "required": True, "schema": {"type": "string"}}
    },
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}},
}


def _drop_unused_schemas(document: dict) -> None:
    """Powertools always defines its own validation error schemas; ours replace them."""
    schemas = document["components"]["schemas"]
    while True:
        text = json.dumps({key: value for key, value in document.items() if key != "components"})
        text += json.dumps({name: schema for name, schema in schemas.items()}) + json.dumps(
            document["components"]["responses"]
        )
        used = set(re.findall(r"#/components/schemas/([\w.-]+)", text))
        unused = set(schemas) - used
        if not unused:
            return
        for name in unused:
            del schemas[name]


def render() -> str:
    return json.dumps(document(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    COMMITTED.write_text(render())
    print(f"wrote {COMMITTED.relative_to(ROOT)}")
