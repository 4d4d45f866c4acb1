"""One OpenAPI document for the whole API, merged from the three functions' Powertools resolvers.

Each resolver knows only its own routes; the API is their union. A schema name that two functions
define differently would make the merged document lie, so that is an error, not a silent pick.
"""

import importlib
import json
from functools import cache

from controlplane.routes import FUNCTIONS

TITLE = "Control plane API"
VERSION = "local"
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
        "info": {"title": TITLE, "version": VERSION},
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
    return merged
