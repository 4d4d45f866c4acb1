"""The route table: which function serves which method and path.

The one definition of the API's surface. The CDK stack builds API Gateway resources and methods
from it, the local gateway dispatches with it, and a test checks that each handler serves exactly
the routes listed here for it. Paths use API Gateway's ``{param}`` syntax.
"""

from typing import NamedTuple


class Route(NamedTuple):
    method: str
    path: str
    function: str  # the folder under functions/ whose handler.py serves the route


ORGANIZATIONS = "organizations"
USERS = "users"
TICKETS = "tickets"
FUNCTIONS = (ORGANIZATIONS, USERS, TICKETS)

ROUTES: tuple[Route, ...] = (
    Route("POST", "/orgs", ORGANIZATIONS),
    Route("GET", "/orgs", ORGANIZATIONS),
    Route("GET", "/orgs/{org_id}", ORGANIZATIONS),
    Route("PATCH", "/orgs/{org_id}", ORGANIZATIONS),
    Route("DELETE", "/orgs/{org_id}", ORGANIZATIONS),
    Route("GET", "/plans", ORGANIZATIONS),
    Route("POST", "/orgs/{org_id}/users", USERS),
    Route("GET", "/orgs/{org_id}/users", USERS),
    Route("GET", "/orgs/{org_id}/users/{user_id}", USERS),
    Route("PATCH", "/orgs/{org_id}/users/{user_id}", USERS),
    Route("DELETE", "/orgs/{org_id}/users/{user_id}", USERS),
    Route("POST", "/orgs/{org_id}/users/{user_id}/tickets", TICKETS),
    Route("GET", "/orgs/{org_id}/users/{user_id}/tickets", TICKETS),
    Route("GET", "/orgs/{org_id}/tickets/{ticket_id}", TICKETS),
    Route("PATCH", "/orgs/{org_id}/tickets/{ticket_id}", TICKETS),
    Route("DELETE", "/orgs/{org_id}/tickets/{ticket_id}", TICKETS),
)


def methods_for(path_segments: list[str]) -> list[str]:
    """Methods the table offers for a concrete path (e.g. for a 405's ``Allow`` header)."""
    return [route.method for route in ROUTES if _matches(route.path.strip("/").split("/"), path_segments)]


def _matches(template: list[str], segments: list[str]) -> bool:
    return len(template) == len(segments) and all(
        t == s or (t.startswith("{") and s != "") for t, s in zip(template, segments, strict=False)
    )
