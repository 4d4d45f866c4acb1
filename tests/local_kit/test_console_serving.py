"""make run serves the console at /console/ with the stack's security headers, and nothing outside it."""

import http.client
from urllib.parse import urlsplit

import pytest

from local import ROOT, console
from local.seed import fetch
from tests.api import create_org, create_user


def raw_get(base: str, path: str) -> tuple[int, dict[str, str], bytes]:
    """A GET with the path exactly as given (no client-side normalising of ``..``)."""
    url = urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    connection.request("GET", path)
    response = connection.getresponse()
    answer = response.status, dict(response.getheaders()), response.read()
    connection.close()
    return answer


def test_console_page_is_served_with_a_csp_that_forbids_inline_script(gateway):
    status, headers, body = raw_get(gateway, "/console/")

    assert status == 200
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert b'<script type="module" src="./js/app.js">' in body
    csp = headers["Content-Security-Policy"]
    assert "script-src 'self';" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"


def test_scripts_are_served_as_javascript(gateway):
    status, headers, body = raw_get(gateway, "/console/js/app.js")

    assert (status, headers["Content-Type"]) == (200, "text/javascript; charset=utf-8")
    assert body == (console.CONSOLE_DIR / "js" / "app.js").read_bytes()


def test_settings_point_at_this_origin_without_cognito_and_take_local_tokens(gateway):
    status, _, settings = fetch(f"{gateway}/console/config.json")

    assert status == 200
    # localSignIn: the one build whose console takes #id_token= links (console/js/auth.js)
    assert settings == {"apiUrl": "", "cognitoDomain": None, "clientId": None, "localSignIn": True}


def test_only_the_local_settings_let_the_console_take_a_token_from_a_link():
    # The stack writes its own config.json (infra/console.py): without localSignIn, the console takes
    # only Cognito's code (sign-in CSRF), as tests/browser/test_console_sign_in.py shows in Chromium.
    assert "localSignIn" not in (ROOT / "infra" / "console.py").read_text()


def test_console_without_slash_redirects_to_the_folder(gateway):
    status, headers, _ = raw_get(gateway, "/console")

    assert (status, headers["Location"]) == (301, "/console/")


@pytest.mark.parametrize(
    "path", ["/console/../Makefile", "/console/%2e%2e/Makefile", "/console/js/../../README.md", "/console/nope.js"]
)
def test_nothing_outside_the_console_folder_is_served(gateway, path):
    status, headers, body = raw_get(gateway, path)

    assert status == 404
    assert b"Makefile" not in body or b"No console file" in body
    assert headers["Content-Type"] == "application/json"


def test_sign_in_links_carry_a_token_per_role(table):
    # Given the demo org's admin and member (their tokens carry their stored subjects)
    create_org("demo")
    create_user("demo", "alice", role="admin")
    create_user("demo", "bob", role="member")

    links = console.sign_in_links("http://127.0.0.1:3000", "demo").split("\n\n")

    assert [line.split("\n")[0] for line in links] == [
        "# an operator",
        "# alice, admin of demo",
        "# bob, member of demo",
    ]
    assert all(line.split("\n")[1].startswith("http://127.0.0.1:3000/console/#id_token=ey") for line in links)
