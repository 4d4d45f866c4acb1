"""The console sends only query parameters its routes take: the functions refuse any other name
(422 validation_error), so a misspelt one would break a screen, not be ignored."""

import json
import re

from local import ROOT, apigw

API_JS = ROOT / "console" / "js" / "api.js"
# call("GET", `/orgs/${seg(org)}/users`, { query: { limit: PAGE, cursor } })
_CALL = re.compile(r"""call\(\s*"(\w+)",\s*`([^`]*)`,\s*\{\s*query:\s*\{([^}]*)\}""")
_DOCUMENT = json.loads((ROOT / "docs" / "openapi.json").read_text())


def _sent() -> list[tuple[str, str, set[str]]]:
    """Each call of api.js that sends a query: its method, a concrete path, the names it sends."""
    found = []
    for method, template, query in _CALL.findall(API_JS.read_text()):
        path = re.sub(r"\$\{seg\(\w+\)\}", "x", template)
        names = {entry.split(":")[0].strip() for entry in query.split(",") if entry.strip()}
        found.append((method, path, names))
    return found


def test_the_console_sends_only_query_parameters_its_routes_take():
    sent = _sent()

    assert len(sent) == API_JS.read_text().count("query: {")  # every call that sends a query was read
    for method, path, names in sent:
        route, _ = apigw.match(method, path)
        assert route is not None, (method, path)
        operation = _DOCUMENT["paths"][route.path][method.lower()]
        taken = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
        assert names <= taken, f"{method} {route.path} sends {names - taken}"
