"""Who is calling, and may they? Decided from the path alone, before any DynamoDB request.

The caller comes from the Cognito user pools authorizer's claims
(``requestContext.authorizer.claims``); in the cloud API Gateway has already verified the token,
locally the gateway does. Rules per route live in ``POLICY``; the two that depend on data are
enforced where the data is: field rules (``plan``, ``role``) on the request body, and ticket
ownership by a condition on the write itself (see ``tickets``).
"""

from dataclasses import dataclass

from controlplane.errors import Forbidden, Unauthorized

OPERATORS_GROUP = "operators"
ADMIN, MEMBER, ANYONE = "admin", "member", "anyone"

# Who besides operators may call each route, inside their own org:
#   "admin"  - an org admin          "member" - any member
#   "self"   - a member whose user_id is the path's user_id
#   "owner"  - a member, on tickets they own (checked by the data layer's condition)
#   "anyone" - any signed-in caller, in any org or none (routes with no org in their path)
# A route with no entry here is for operators only.
POLICY: dict[tuple[str, str], frozenset[str]] = {
    ("POST", "/orgs"): frozenset(),
    ("GET", "/orgs"): frozenset(),
    ("GET", "/orgs/{org_id}"): frozenset({"admin", "member"}),
    ("PATCH", "/orgs/{org_id}"): frozenset({"admin"}),
    ("DELETE", "/orgs/{org_id}"): frozenset(),
    ("GET", "/plans"): frozenset({ANYONE}),
    ("POST", "/orgs/{org_id}/users"): frozenset({"admin"}),
    ("GET", "/orgs/{org_id}/users"): frozenset({"admin", "member"}),
    ("GET", "/orgs/{org_id}/users/{user_id}"): frozenset({"admin", "self"}),
    ("PATCH", "/orgs/{org_id}/users/{user_id}"): frozenset({"admin", "self"}),
    ("DELETE", "/orgs/{org_id}/users/{user_id}"): frozenset({"admin"}),
    ("POST", "/orgs/{org_id}/users/{user_id}/tickets"): frozenset({"admin", "self"}),
    ("GET", "/orgs/{org_id}/users/{user_id}/tickets"): frozenset({"admin", "self"}),
    ("GET", "/orgs/{org_id}/tickets/{ticket_id}"): frozenset({"admin", "owner"}),
    ("PATCH", "/orgs/{org_id}/tickets/{ticket_id}"): frozenset({"admin", "owner"}),
    ("DELETE", "/orgs/{org_id}/tickets/{ticket_id}"): frozenset({"admin", "owner"}),
}

# Fields of a PATCH that only some callers may change.
FIELD_RULES = {"plan": frozenset(), "role": frozenset({"admin"})}


@dataclass(frozen=True)
class Caller:
    subject: str  # the token's ``sub``: who, across every org
    user_id: str | None
    org_id: str | None
    role: str | None
    operator: bool = False

    @property
    def is_member(self) -> bool:
        return not self.operator and self.role == MEMBER

    def owner_filter(self) -> str | None:
        """The user_id a ticket must belong to for this caller, or None when any ticket will do."""
        return self.user_id if self.is_member else None


def caller_from_claims(claims: dict | None) -> Caller:
    if not claims or not claims.get("sub"):
        raise Unauthorized("Sign in and send your ID token in the Authorization header")
    return Caller(
        subject=claims["sub"],
        user_id=claims.get("custom:user_id"),
        org_id=claims.get("custom:org_id"),
        role=claims.get("custom:role"),
        operator=OPERATORS_GROUP in _groups(claims.get("cognito:groups")),
    )


def _groups(value) -> set[str]:
    """API Gateway passes the groups claim as a string (``a,b`` or ``[a b]``), sometimes a list."""
    if isinstance(value, list):
        return set(value)
    return set((value or "").strip("[]").replace(",", " ").split())


def authorize(caller: Caller, method: str, resource: str, path_ids: dict[str, str]) -> None:
    """Raise Forbidden unless ``caller`` may call the route; routes not in POLICY are left alone
    (the resolver answers 404/405 for them)."""
    if caller.operator or (method, resource) not in POLICY:
        return
    allowed = POLICY[(method, resource)]
    if ANYONE in allowed:
        return
    if not caller.org_id or path_ids.get("org_id") != caller.org_id:
        raise Forbidden("You may not access this organization")
    if caller.role == ADMIN and ADMIN in allowed:
        return
    if caller.role == MEMBER and (
        MEMBER in allowed or "owner" in allowed or ("self" in allowed and path_ids.get("user_id") == caller.user_id)
    ):
        return
    raise Forbidden("Your role may not do this")


def authorize_fields(caller: Caller, fields: set[str]) -> None:
    if caller.operator:
        return
    denied = sorted(f for f in fields if f in FIELD_RULES and caller.role not in FIELD_RULES[f])
    if denied:
        raise Forbidden(f"Your role may not change: {', '.join(denied)}")
