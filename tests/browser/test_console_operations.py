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


def documented() -> set[tuple[str, str]]:
    document = json.loads((ROOT / "docs" / "openapi.json").read_text())
    return {(method.upper(), shape(path)) for path, item in document["paths"].items() for method in item}


def test_every_call_of_the_api_module_is_an_operation_of_the_openapi_document():
    calls = console_calls()

    assert len(calls) >= 14  # the parse found the calls: a regex that matched nothing would pass anything
    assert set(calls) <= documented(), sorted(set(calls) - documented())


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
