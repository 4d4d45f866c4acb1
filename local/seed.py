"""Fill the running local API with a demo organization: a small tree of units, users in them and a
few hundred tickets.

``make seed`` (``python -m local.seed``) talks HTTP to ``make run``'s server, as any client would,
so everything it writes went through API Gateway's event shape, the handlers and validation. It
brings the org to the numbers asked for and keeps what is there: a second run adds nothing.
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

from controlplane.models.plans import CATALOGUE
from local import running, tokens
from local.demo import DEMO_ORG, UNITS, USERS, unit_of

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


class SeedError(Exception):
    """What stops the seed, in one line for the person who ran it."""


def full_plan(org_id: str, details: dict[str, Any], wanted: int, fitted: int) -> SeedError:
    """A 409 quota_exceeded as what to do about it: fewer users (the ``fitted`` of the seed's already
    in), or a plan that has room for them. The org's other users hold seats too, so the plan's limit
    alone is not what fits."""
    plan, limit = details.get("plan"), details.get("limit")
    others = max(int(details.get("used") or 0) - fitted, 0)
    roomy = [name for name, quotas in CATALOGUE.items() if quotas["users"] >= others + wanted]
    larger = min(roomy, key=lambda name: CATALOGUE[name]["users"]) if roomy else None
    change = f", or change its plan: cpctl orgs update {org_id} --plan {larger}" if larger and larger != plan else ""
    held = f", and {others} of its users are not the seed's" if others else ""
    fewer = f"ask for fewer (make seed ORG={org_id} USERS={fitted})" if fitted else "delete some of them"
    return SeedError(
        f"make seed: organization {org_id} is on the {plan} plan, which allows {limit} users{held}: {fewer}{change}"
    )


class QuotaFull(Exception):
    def __init__(self, details: dict[str, Any]):
        super().__init__(details)
        self.details = details


class Api:
    def __init__(self, url: str, token: str):
        self.url = url.rstrip("/")
        self.headers = {"Authorization": f"Bearer {token}"}

    def create(self, path: str, body: dict) -> bool:
        """POST; True if created, False if it already existed; anything else is an error (QuotaFull for
        a plan without a seat left)."""
        status, _, answer = fetch(self.url + path, "POST", body, self.headers)
        error = answer.get("error", {}) if isinstance(answer, dict) else {}
        if status == 409 and error.get("code") == "quota_exceeded":
            raise QuotaFull(error.get("details") or {})
        if status != 201 and error.get("code") != "already_exists":
            raise SeedError(f"make seed: POST {path} answered {status}: {error.get('message') or answer!r}")
        return status == 201

    def count(self, path: str) -> int:
        """How many items a list route holds, page by page."""
        total, cursor = 0, None
        while True:
            query = "?limit=100" + (f"&cursor={cursor}" if cursor else "")
            status, _, page = fetch(self.url + path + query, "GET", None, self.headers)
            if status != 200:
                raise SeedError(f"make seed: GET {path} answered {status}: {page!r}")
            total += len(page["items"])
            if not (cursor := page["next_cursor"]):
                return total


class Progress:
    """A bar on a terminal; nothing at all in a pipe or a log, where each redraw would be noise."""

    def __init__(self, total: int, stream=sys.stderr, width: int = 40):
        self.total, self.done, self.stream, self.width = total, 0, stream, width
        self.shown = stream.isatty()

    def close(self) -> None:
        """End the bar's line, so that what is printed next starts a line of its own."""
        if self.shown and 0 < self.done < self.total:
            print(file=self.stream, flush=True)

    def step(self) -> None:
        self.done += 1
        if self.shown:
            filled = self.width * self.done // self.total
            end = "\n" if self.done == self.total else ""
            bar = f"[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total}"
            print(f"\r{bar}", end=end, file=self.stream, flush=True)


def user_ids(count: int) -> list[str]:
    return USERS[:count] + [f"user{i}" for i in range(len(USERS), count)]


def planned_tickets(org_id: str, users: list[str], tickets: int) -> dict[str, list[dict]]:
    """The org's tickets, by user, the same on every run: a larger total only adds to the end."""
    rng = random.Random(org_id)
    plan: dict[str, list[dict]] = {user_id: [] for user_id in users}
    for _ in range(tickets):
        ticket = {
            "subject": rng.choice(SUBJECTS),
            "description": "Seeded by make seed.",
            "status": rng.choice(["open", "open", "pending", "solved", "closed"]),
            "priority": rng.choice(["low", "normal", "normal", "high", "urgent"]),
            "tags": rng.sample(TAGS, rng.randint(0, 2)),
        }
        plan[rng.choice(users)].append(ticket)
    return plan


def seed(api: Api, org_id: str, users: int, tickets: int) -> dict[str, int]:
    """Bring the org to ``users`` users and ``tickets`` tickets; what already exists is kept, not
    doubled, so running it again changes nothing. Returns how many of each it created."""
    names = user_ids(users)
    plan = planned_tickets(org_id, names, tickets)
    progress = Progress(1 + len(names) + tickets)
    created = {"orgs": 0, "users": 0, "tickets": 0, "units": 0}
    roles = {user_id: tokens.ADMIN if i == 0 else tokens.MEMBER for i, user_id in enumerate(names)}
    created["orgs"] += api.create("/orgs", {"org_id": org_id, "name": f"{org_id.title()} Corp", "plan": "pro"})
    progress.step()
    for unit_id, name, parent_id in UNITS:  # parents first
        body = {"unit_id": unit_id, "name": name, **({"parent_id": parent_id} if parent_id else {})}
        created["units"] += api.create(f"/orgs/{org_id}/units", body)
    for fitted, (user_id, role) in enumerate(roles.items()):
        body = {"user_id": user_id, "name": user_id.title(), "email": f"{user_id}@{org_id}.example"}
        body["unit"] = unit_of(user_id)
        try:
            created["users"] += api.create(f"/orgs/{org_id}/users", {**body, "role": role})
        except QuotaFull as full:
            progress.close()
            raise full_plan(org_id, full.details, users, fitted) from None
        progress.step()
    for user_id, bodies in plan.items():
        path = f"/orgs/{org_id}/users/{user_id}/tickets"
        there = api.count(path)
        for _ in bodies[:there]:
            progress.step()
        # Each user opens their own tickets, as they would: the activity log names them, not the operator.
        opener = Api(api.url, tokens.for_user(org_id, user_id))  # their subject, as stored
        for body in bodies[there:]:
            created["tickets"] += opener.create(path, body)
            progress.step()
    return created


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--url", help="the API (default: API_URL, else the running `make run`'s, else http://127.0.0.1:$PORT)"
    )
    parser.add_argument("--org", default=DEMO_ORG, help=f"organization id (default: {DEMO_ORG})")
    parser.add_argument("--users", type=int, default=len(USERS), help=f"users in the org (default: {len(USERS)})")
    parser.add_argument("--tickets", type=int, default=300, help="tickets in the org, in all (default: 300)")
    args = parser.parse_args(argv)
    if args.users < 1 or args.tickets < 0:
        parser.error("USERS must be at least 1 and TICKETS at least 0")
    url = running.api_url(args.url or os.environ.get("API_URL"))
    tokens.use_make_run_dynamodb(url)  # where the users' sign-in subjects are, for their tokens
    api = Api(url, tokens.issue(tokens.OPERATOR))
    try:
        created = seed(api, args.org, args.users, args.tickets)
    except urllib.error.URLError as error:
        print(f"No API at {url} ({error.reason}): start it with `make run` first.", file=sys.stderr)
        return 1
    except SeedError as error:
        print(error, file=sys.stderr)
        return 1
    make_tokens = "make tokens" if args.org == DEMO_ORG else f"make tokens ORG={args.org}"
    print(
        f"{args.org}: {len(UNITS)} units, {args.users} users and {args.tickets} tickets ({created['users']} users and "
        f"{created['tickets']} tickets new{', and the org' if created['orgs'] else ''}). "
        f"Tokens for it: {make_tokens}; then GET {url}/orgs/{args.org}/users/{USERS[0]}/tickets",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
