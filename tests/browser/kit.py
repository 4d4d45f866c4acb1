"""What the browser tests share: screenshots, signing in, and arranging data through the API."""

import re
from typing import Any

from local import ROOT, tokens
from local.seed import fetch

SCREENSHOTS = ROOT / ".local" / "screenshots"
MISSING_CHROMIUM = "The browser tests need Debian's Chromium: apt-get install -y chromium (or make chromium as root)"


def shoot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{name}.png", full_page=True)
    # What a person would see as a bug on the page, whatever the flow checked
    leaked = re.findall(r"\b(?:null|undefined|NaN)\b|\[object Object\]", page.inner_text("body"))
    assert not leaked, f"{name}: the page shows {leaked}"


def sign_in(page, console_url: str, token: str) -> None:
    page.goto(f"{console_url}#id_token={token}")


OPERATOR_TOKEN = tokens.issue(tokens.OPERATOR)


class Api:
    """Arranges data with the API itself, as an operator, so the tests start from a known org."""

    def __init__(self, console_url: str):
        self.base = console_url.removesuffix("/console/")

    def call(self, method: str, path: str, body=None, token: str = OPERATOR_TOKEN, headers: dict | None = None):
        status, _, answer = fetch(
            f"{self.base}{path}", method, body, {"Authorization": f"Bearer {token}", **(headers or {})}
        )
        assert status < 300, (status, answer)
        return answer

    def raw(self, method: str, path: str, body=None, token: str = OPERATOR_TOKEN):
        return fetch(f"{self.base}{path}", method, body, {"Authorization": f"Bearer {token}"})


def seed_demo(api: Api, members: int = 1) -> None:
    """The demo org on pro: alice its admin, bob a member, and ``members - 1`` more (user02, user03...)."""
    api.call("POST", "/orgs", {"org_id": "demo", "name": "Demo Inc", "plan": "pro"})
    people = [("alice", "admin"), ("bob", "member")] + [(f"user{n:02}", "member") for n in range(2, members + 1)]
    for user_id, role in people:
        api.call(
            "POST",
            "/orgs/demo/users",
            {"user_id": user_id, "name": user_id.title(), "email": f"{user_id}@x.io", "role": role},
        )


ACTIVITY_READ = "**/orgs/demo/activity?*"  # the org page's activity panel, which reads every few seconds


def hold_activity_read(page, change) -> Any:
    """The org page's next activity read, held back while ``change`` runs: the route to let go."""
    held: list = []
    page.route(ACTIVITY_READ, lambda route: held.append(route))
    change()
    while not held:
        page.wait_for_timeout(200)
    return held[0]


def let_go(page, held, code: str) -> None:
    """Let the held read go on, refused 403 ``code``, and give the console the time to decide."""
    with page.expect_response(ACTIVITY_READ) as refused:
        held.continue_()
    assert (refused.value.status, refused.value.json()["error"]["code"]) == (403, code)
    page.wait_for_timeout(500)  # the console reads the answer's body, then decides
