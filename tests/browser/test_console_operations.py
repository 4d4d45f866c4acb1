"""The console calls only operations in docs/openapi.json, all through its one API module."""

import json
import re

from local import ROOT

CONSOLE = ROOT / "console"
API_MODULE = CONSOLE / "js" / "api.js"
# call("GET", `/orgs/${seg(org)}/users`): a literal method and a template literal path.
CALL = re.compile(r"""\bcall\(\s*"([A-Z]+)"\s*,\s*`([^`]*)`""")
PARAMETER = re.compile(r"\$\{[^}]*\}|\{[^}]*\}")


def shape(path: str) -> str:
    return PARAMETER.sub("{}", path)


def console_calls() -> list[tuple[str, str]]:
    return [(method, shape(path)) for method, path in CALL.findall(API_MODULE.read_text())]


def openapi() -> dict:
    return json.loads((ROOT / "docs" / "openapi.json").read_text())


def operations() -> dict[tuple[str, str], dict]:
    paths = openapi()["paths"]
    return {(method.upper(), shape(path)): op for path, item in paths.items() for method, op in item.items()}


def documented() -> set[tuple[str, str]]:
    return set(operations())


def test_every_call_of_the_api_module_is_an_operation_of_the_openapi_document():
    calls = console_calls()

    assert len(calls) >= 15  # the parse found the calls: a regex that matched nothing would pass anything
    assert set(calls) <= documented(), sorted(set(calls) - documented())


# export const listActivity = (org, cursor) => call("GET", `/orgs/${seg(org)}/activity`, ...
EXPORT = re.compile(r"""^export const (\w+) = \([^)]*\) =>\s*call\(\s*"([A-Z]+)"\s*,\s*`([^`]*)`""", re.MULTILINE)
# api.updateOrg(org.org_id, { status: "suspended", suspension_reason: ... }, org.version): a body literal
BODY_LITERAL = re.compile(r"\bapi\.(\w+)\([^{()]*\{([^{}]*)\}")


def exports() -> dict[str, dict]:
    """Each function of the API module and the documented operation it calls."""
    documented_operations = operations()
    return {name: documented_operations[(m, shape(path))] for name, m, path in EXPORT.findall(API_MODULE.read_text())}


def test_each_function_is_named_after_the_operation_it_calls():
    functions = exports()

    assert len(functions) == len(console_calls())  # every export parsed, none skipped
    assert {name: op["operationId"] for name, op in functions.items()} == {name: name for name in functions}
    assert {"updateOrg", "listActivity"} <= set(functions)  # the status and activity screens' operations


def test_the_request_bodies_the_screens_write_use_only_documented_fields():
    functions, schemas = exports(), openapi()["components"]["schemas"]
    sent = [
        (name, set(re.findall(r"(\w+)\s*:", body)))
        for path in CONSOLE.rglob("*.js")
        for name, body in BODY_LITERAL.findall(path.read_text())
    ]

    assert ("updateOrg", {"status", "suspension_reason"}) in sent  # the parse found suspending
    assert ("updateOrg", {"status"}) in sent  # and reactivating
    for name, fields in sent:
        body = functions[name]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert fields <= set(schemas[body.rsplit("/", 1)[-1]]["properties"]), (name, fields)


def test_every_function_the_api_module_exports_goes_through_call():
    source = API_MODULE.read_text()
    exported = re.findall(r"^export const (\w+) = \(", source, re.MULTILINE)

    assert len(exported) == len(console_calls())


def test_no_other_module_talks_to_the_network():
    # auth.js reads config.json and, in the cloud, Cognito's token endpoint: never the API.
    talkers = {
        path.name
        for path in CONSOLE.rglob("*.js")
        if re.search(r"\bfetch\(|XMLHttpRequest|WebSocket", path.read_text())
    }

    assert talkers == {"api.js", "auth.js"}
    assert re.findall(r"fetch\(([^,)]*)", (CONSOLE / "js" / "auth.js").read_text()) == [
        '"./config.json"',
        "`${settings.cognitoDomain}/oauth2/token`",
    ]


def test_the_page_has_no_inline_script_or_style():
    for page in CONSOLE.rglob("*.html"):
        html = page.read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), page
        assert not re.search(r"\son[a-z]+=|\sstyle=|<style", html), page
