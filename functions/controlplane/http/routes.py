"""The route table: one record per route, the API's one definition.

Everything else is derived from it: each handler registers its routes from these records
(``api.operation``), the entry point authorizes with ``allow``, the CDK stack builds API Gateway from
it, the local gateway dispatches with it, ``Location`` headers are filled from ``location``, and the
OpenAPI document takes its summaries, operationIds, statuses and models from it. A route that is not
here is refused to everyone but operators. Paths use API Gateway's ``{param}`` syntax.
"""

from typing import Any, NamedTuple

from controlplane.http.errors import MAX_BODY_BYTES
from controlplane.logic.access import ADMIN, ANYONE, MEMBER, OWNER, SELF
from controlplane.models.activity import ActivityPage
from controlplane.models.imports import UserImport
from controlplane.models.resources import (
    DeletionAccepted,
    Org,
    OrgPage,
    OrgWithUsers,
    PlanList,
    Ticket,
    TicketPage,
    User,
    UserPage,
    UserWithTickets,
)
from controlplane.models.units import MoveAccepted, Unit, UnitPage

ORGANIZATIONS = "organizations"
USERS = "users"
TICKETS = "tickets"
FUNCTIONS = (ORGANIZATIONS, USERS, TICKETS)


class Route(NamedTuple):
    method: str
    path: str
    function: str  # the folder under functions/ whose handler.py serves the route
    allow: frozenset[str]  # who besides operators may call it, in their own org (see ``auth``)
    operation_id: str
    summary: str
    status: int  # the success status
    model: Any  # the success body's model, or None for no body
    also: tuple[tuple[int, Any], ...] = ()  # other success statuses and their models
    location: str | None = None  # a create's new resource, filled from its fields
    seats: bool = False  # takes or resizes an org's seats, so may answer 409 quota_exceeded
    conflicts: tuple[str, ...] = ()  # its other 409s, by the state of the data (named in http.examples)
    max_body: int = MAX_BODY_BYTES  # bytes; a bigger body is 413 before it is parsed

    def __str__(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def rule(self) -> str:
        """The path in Powertools' ``<param>`` syntax."""
        return self.path.replace("{", "<").replace("}", ">")

    @property
    def takes_body(self) -> bool:
        """Reads a request body; a GET's or a DELETE's is not read, so never judged (no 413 or 415)."""
        return self.method in ("POST", "PATCH")

    @property
    def successes(self) -> dict[int, Any]:
        return {self.status: self.model, **dict(self.also)}


# A synchronous invoke's payload, the event API Gateway hands a function: Lambda refuses a bigger one
# before the function runs, and the caller gets API Gateway's answer, not the function's 413.
LAMBDA_PAYLOAD_BYTES = 6_291_456
# The body travels as a JSON string inside that event, where a quote, a backslash or a newline takes
# two bytes: a body of 2,900 KiB takes at most 5.7 MiB there, and the rest of the event (the headers,
# twice, at most 10 KiB each time; the path; the authorizer's context) fits in what is left. 10,000
# rows of ordinary users (about 100 bytes each) are 1 MB; 10,000 of the longest valid ones (names of
# 128, addresses of 254 characters) are about 5 MB, and go in two imports.
IMPORT_BODY_BYTES = 2_900 * 1024

_ORG = "/orgs/{org_id}"
_USER = "/orgs/{org_id}/users/{user_id}"
_TICKET = "/orgs/{org_id}/tickets/{ticket_id}"
_UNIT = "/orgs/{org_id}/units/{unit_id}"
_IMPORT = "/orgs/{org_id}/user-imports/{import_id}"
_ANY_MEMBER = frozenset({ADMIN, MEMBER})
_ADMIN = frozenset({ADMIN})
_ADMIN_OR_SELF = frozenset({ADMIN, SELF})
_ADMIN_OR_OWNER = frozenset({ADMIN, OWNER})
_OPERATORS = frozenset[str]()
_ANYONE = frozenset({ANYONE})

# fmt: off
ROUTES: tuple[Route, ...] = (
    Route("POST", "/orgs", ORGANIZATIONS, _OPERATORS, "createOrg", "Create an organization", 201, Org,
          location=_ORG),
    Route("GET", "/orgs", ORGANIZATIONS, _OPERATORS, "listOrgs", "List organizations", 200, OrgPage),
    Route("GET", _ORG, ORGANIZATIONS, _ANY_MEMBER, "getOrg", "Get an organization, optionally with its first users",
          200, Org | OrgWithUsers),
    Route("PATCH", _ORG, ORGANIZATIONS, _ADMIN, "updateOrg",
          "Update an organization; a new plan must have a seat for every user", 200, Org, seats=True),
    Route("DELETE", _ORG, ORGANIZATIONS, _OPERATORS, "deleteOrg",
          "Delete an organization with all its users and tickets", 204, None, ((202, DeletionAccepted),)),
    Route("GET", f"{_ORG}/activity", ORGANIZATIONS, _ADMIN, "listActivity",
          "List an organization's activity, newest first: who changed what, and when", 200, ActivityPage),
    Route("POST", f"{_ORG}/units", ORGANIZATIONS, _ADMIN, "createUnit",
          "Create a unit under a parent (default: the root)", 201, Unit, location=_UNIT,
          conflicts=("too_deep", "too_many_units", "being_deleted", "move_in_progress")),
    Route("GET", f"{_ORG}/units", ORGANIZATIONS, _ANY_MEMBER, "listUnits",
          "List the units depth-first: the whole tree, or the subtree `under` a unit", 200, UnitPage,
          conflicts=("move_in_progress", "moved_since", "created_again")),
    Route("GET", _UNIT, ORGANIZATIONS, _ANY_MEMBER, "getUnit", "Get a unit with its path from the root", 200, Unit),
    Route("PATCH", _UNIT, ORGANIZATIONS, _ADMIN, "updateUnit",
          "Rename a unit, or move it with everything below it under another parent", 200, Unit,
          ((202, MoveAccepted),), conflicts=("root_move", "root_rename", "under_itself", "too_deep_move",
                                             "being_deleted", "move_in_progress")),
    Route("DELETE", _UNIT, ORGANIZATIONS, _ADMIN, "deleteUnit", "Delete a unit that has no units and no users", 204,
          None, conflicts=("root_delete", "not_empty", "being_deleted", "move_in_progress")),
    Route("GET", f"{_UNIT}/users", ORGANIZATIONS, _ANY_MEMBER, "listUnitUsers",
          "List the users of a unit and of every unit below it", 200, UserPage,
          conflicts=("move_in_progress", "moved_since", "created_again")),
    Route("GET", "/plans", ORGANIZATIONS, _ANYONE, "listPlans", "List the plans and what each allows", 200, PlanList),
    Route("POST", f"{_ORG}/user-imports", ORGANIZATIONS, _ADMIN, "importUsers",
          "Import up to 10,000 users: a job creates them, as seats allow, and their sign-ins", 202, UserImport,
          location=_IMPORT, max_body=IMPORT_BODY_BYTES),
    Route("GET", _IMPORT, ORGANIZATIONS, _ADMIN, "getUserImport",
          "Get a user import: its status, counts, refused rows and failed sign-ins", 200, UserImport),
    Route("POST", f"{_ORG}/users", USERS, _ADMIN, "createUser", "Create a user; takes one of the org's seats", 201,
          User, location=_USER, seats=True, conflicts=("suspended", "being_deleted", "move_in_progress")),
    Route("GET", f"{_ORG}/users", USERS, _ANY_MEMBER, "listUsers", "List the users of an organization", 200,
          UserPage),
    Route("GET", _USER, USERS, _ADMIN_OR_SELF, "getUser", "Get a user, optionally with their newest tickets", 200,
          User | UserWithTickets),
    Route("PATCH", _USER, USERS, _ADMIN_OR_SELF, "updateUser", "Update a user", 200, User,
          conflicts=("being_deleted", "move_in_progress", "no_sign_in")),
    Route("DELETE", _USER, USERS, _ADMIN, "deleteUser", "Delete a user and all their tickets", 204, None),
    Route("POST", f"{_USER}/tickets", TICKETS, _ADMIN_OR_SELF, "openTicket", "Open a ticket for a user", 201, Ticket,
          location=_TICKET),
    Route("GET", f"{_USER}/tickets", TICKETS, _ADMIN_OR_SELF, "listTickets", "List a user's tickets, newest first",
          200, TicketPage),
    Route("GET", _TICKET, TICKETS, _ADMIN_OR_OWNER, "getTicket", "Get a ticket", 200, Ticket),
    Route("PATCH", _TICKET, TICKETS, _ADMIN_OR_OWNER, "updateTicket", "Update a ticket", 200, Ticket),
    Route("DELETE", _TICKET, TICKETS, _ADMIN_OR_OWNER, "deleteTicket", "Delete a ticket", 204, None),
)
# fmt: on

_BY_KEY = {(route.method, route.path): route for route in ROUTES}
_BY_OPERATION = {route.operation_id: route for route in ROUTES}
RESOURCES = frozenset(route.path for route in ROUTES)


def find(method: str, path: str | None) -> Route | None:
    """The record of a route by method and API Gateway resource path, or None."""
    return _BY_KEY.get((method, path or ""))


def operation(operation_id: str) -> Route:
    return _BY_OPERATION[operation_id]


def methods_for(path_segments: list[str]) -> list[str]:
    """Methods the table offers for a concrete path (e.g. for a 405's ``Allow`` header)."""
    return [route.method for route in ROUTES if _matches(route.path.strip("/").split("/"), path_segments)]


def _matches(template: list[str], segments: list[str]) -> bool:
    return len(template) == len(segments) and all(
        t == s or (t.startswith("{") and s != "") for t, s in zip(template, segments, strict=False)
    )
