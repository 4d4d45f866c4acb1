"""One OpenAPI document for the whole API, merged from the three functions' Powertools resolvers by
Powertools' ``OpenAPIMerge``.

Each resolver knows only its own routes; the API is their union. OpenAPIMerge refuses a method and
path that two functions both describe (``on_conflict="error"``), but merges components with a plain
``dict.update``: a schema name two functions define differently would silently take the last one,
so tests/test_openapi.py checks that every function defines each shared schema the same way.
"""

import importlib
import json
from functools import cache

from aws_lambda_powertools.event_handler.openapi.merge import OpenAPIMerge

from controlplane.routes import FUNCTIONS

TITLE = "Control plane API"
VERSION = "local"
BEARER = {
    "type": "http",
    "scheme": "bearer",
    "description": "A Cognito ID token. Locally: the output of `make token` (an operator) or "
    "`make token ORG=acme USER=alice ROLE=admin`, signed with the local development key.",
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
    merge = OpenAPIMerge(title=TITLE, version=VERSION, security=[{"bearer": []}], on_conflict="error")
    for part in documents:
        merge.add_schema(part)
    # As a document too: the security_schemes argument would put a model into a dict of JSON.
    merge.add_schema({"components": {"securitySchemes": {"bearer": BEARER}}})
    return merge.get_openapi_schema()


@cache
def document() -> dict:
    return merged(list(parts().values()))
