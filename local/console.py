"""The console (console/) as ``make run`` serves it at /console/, and ``make console``'s sign-in links.

The files are served as CloudFront serves them in the stack, with the same security headers; only
the settings differ: here config.json is generated, the API is this same origin and there is no
Cognito, so the console signs in with a local token (``/console/#id_token=<token>``).

    python -m local.console      # sign-in links for an operator and make seed's demo admin and member
                                 # to the running make run (local.running), or API_URL's
"""

import json
import mimetypes
import os
import sys
from pathlib import Path

from controlplane.http.errors import error_body
from local import ROOT, running

CONSOLE_DIR = ROOT / "console"
PREFIX = "/console"
# The API is this origin; localSignIn: the one build that takes a token from a link or the paste form
# (console/js/auth.js). The stack's config.json (infra/console.py) has no such key: the code grant only.
SETTINGS = {"apiUrl": "", "cognitoDomain": None, "clientId": None, "localSignIn": True}
Answer = tuple[int, list[tuple[str, str]], bytes]

# What the stack's CloudFront response headers policy sends (infra/console.py), with this origin's
# API in connect-src. No 'unsafe-inline' anywhere: the page has no inline script or style.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
    ("Cache-Control", "no-store"),  # a developer's edit shows on the next reload
]
_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".html": "text/html; charset=utf-8",
}


def serves(path: str) -> bool:
    return path == PREFIX or path.startswith(f"{PREFIX}/")


def answer(path: str) -> Answer:
    """The file under console/ that ``path`` names, config.json, or a 404; never a file outside it."""
    if path == PREFIX:
        return 301, [("Location", f"{PREFIX}/"), *SECURITY_HEADERS], b""
    relative = path.removeprefix(f"{PREFIX}/") or "index.html"
    if relative == "config.json":
        return 200, [("Content-Type", "application/json"), *SECURITY_HEADERS], json.dumps(SETTINGS).encode()
    root = CONSOLE_DIR.resolve()
    file = (root / relative).resolve() if "\0" not in relative else root  # a NUL names no file; resolve() raises
    if not file.is_relative_to(root) or not _is_file(file):
        body = error_body("not_found", f"No console file {relative}", "-")
        compact = json.dumps(body, separators=(",", ":")).encode()  # every error body in the functions' style
        return 404, [("Content-Type", "application/json"), *SECURITY_HEADERS], compact
    kind = _TYPES.get(file.suffix) or mimetypes.guess_type(file.name)[0] or "application/octet-stream"
    return 200, [("Content-Type", kind), *SECURITY_HEADERS], file.read_bytes()


def _is_file(file: Path) -> bool:
    """``Path.is_file``, False too where the name cannot be one (ENAMETOOLONG raises, and no answer went)."""
    try:
        return file.is_file()
    except OSError:
        return False


def sign_in_links(base_url: str, org_id: str | None = None) -> str:
    """One sign-in link per role: the operator, and make seed's demo admin and member."""
    from local import tokens
    from local.demo import DEMO_ORG, demo_users

    org_id = org_id or DEMO_ORG
    admin, member = demo_users()
    links = [f"# an operator\n{base_url}{PREFIX}/#id_token={tokens.issue(tokens.OPERATOR)}"]
    for who, user_id in ((f"{admin}, admin of {org_id}", admin), (f"{member}, member of {org_id}", member)):
        try:  # their token carries the subject stored on their item: they must exist
            links.append(f"# {who}\n{base_url}{PREFIX}/#id_token={tokens.for_user(org_id, user_id)}")
        except LookupError as missing:
            links.append(f"# {who}: no link ({missing})")
    return "\n\n".join(links)


def main() -> None:
    """Links to the running `make run`'s console, whatever its PORT (``local.running``); API_URL wins."""
    from local import tokens

    explicit = os.environ.get("API_URL")
    tokens.use_make_run_dynamodb(explicit)  # the demo users' subjects are in make run's table
    url = running.api_url(explicit)
    if not explicit and running.running_url() is None:
        print(f"No `make run` is running: these links are for {url}, once it runs there.", file=sys.stderr)
    print("Open one of these in a browser while `make run` runs (make seed fills the demo org):\n")
    print(sign_in_links(url, os.environ.get("ORG") or None))


if __name__ == "__main__":
    main()
