"""Fill the running local API with a demo organization: users and a few hundred tickets.

``make seed`` (``python -m local.seed``) talks HTTP to ``make run``'s server, as any client would,
so everything it writes went through API Gateway's event shape, the handlers and validation.
"""

import argparse
import json
import os
import random
import sys
import urllib.error
import urllib.request
from email.message import Message
from typing import Any

from local import tokens

USERS = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"]
SUBJECTS = [
    "Cannot log in",
    "Invoice shows the wrong amount",
    "Export to CSV times out",
    "Please add SSO",
    "Password reset email never arrives",
    "Dashboard is slow",
    "Webhook retries too often",
    "Typo on the billing page",
]
TAGS = ["billing", "auth", "performance", "ui", "api", "vip"]


def fetch(url: str, method: str = "GET", body: Any = None, headers: dict | None = None) -> tuple[int, Message, Any]:
    """One HTTP request, answered with any status: (status, headers, parsed JSON or the raw bytes)."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json", **(headers or {})} if data else headers or {}
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, answer_headers, raw = response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        status, answer_headers, raw = error.code, error.headers, error.read()
    is_json = (answer_headers.get("Content-Type") or "").startswith("application/json")
    return status, answer_headers, json.loads(raw) if is_json and raw else raw


class Api:
    def __init__(self, url: str, token: str):
        self.url = url.rstrip("/")
        self.headers = {"Authorization": f"Bearer {token}"}

    def create(self, path: str, body: dict) -> bool:
        """POST; True if created, False if it already existed; anything else is an error."""
        status, _, answer = fetch(self.url + path, "POST", body, self.headers)
        if status != 201 and (answer or {}).get("error", {}).get("code") != "already_exists":
            raise RuntimeError(f"POST {path} answered {status}: {answer}")
        return status == 201


def progress(done: int, total: int, width: int = 40) -> None:
    filled = width * done // total
    end = "\n" if done == total else ""
    print(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}", end=end, file=sys.stderr, flush=True)


def seed(api: Api, org_id: str, users: int, tickets: int, rng: random.Random) -> None:
    names = USERS[:users] + [f"user{i}" for i in range(len(USERS), users)]
    total = 1 + len(names) + tickets
    api.create("/orgs", {"org_id": org_id, "name": f"{org_id.title()} Corp", "plan": "pro"})
    progress(1, total)
    for i, user_id in enumerate(names, start=2):
        role = "admin" if i == 2 else "member"
        api.create(
            f"/orgs/{org_id}/users",
            {"user_id": user_id, "name": user_id.title(), "email": f"{user_id}@{org_id}.example", "role": role},
        )
        progress(i, total)
    for i in range(tickets):
        ticket = {
            "subject": rng.choice(SUBJECTS),
            "description": "Seeded by make seed.",
            "status": rng.choice(["open", "open", "pending", "solved", "closed"]),
            "priority": rng.choice(["low", "normal", "normal", "high", "urgent"]),
            "tags": rng.sample(TAGS, rng.randint(0, 2)),
        }
        api.create(f"/orgs/{org_id}/users/{rng.choice(names)}/tickets", ticket)
        progress(1 + len(names) + i + 1, total)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_url = os.environ.get("API_URL", f"http://127.0.0.1:{os.environ.get('PORT', '3000')}")
    parser.add_argument("--url", default=default_url, help=f"the API (default: {default_url})")
    parser.add_argument("--org", default="demo", help="organization id (default: demo)")
    parser.add_argument("--users", type=int, default=len(USERS))
    parser.add_argument("--tickets", type=int, default=300, help="tickets added on each run (default: 300)")
    args = parser.parse_args(argv)
    api = Api(args.url, tokens.issue(tokens.OPERATOR))
    try:
        seed(api, args.org, args.users, args.tickets, random.Random(args.org))
    except urllib.error.URLError as error:
        print(f"\nNo API at {args.url} ({error.reason}): start it with `make run` first.", file=sys.stderr)
        return 1
    print(f"Seeded {args.org}: try GET {args.url}/orgs/{args.org}/users/alice/tickets", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
