"""Who is calling, and may they? Decided from the path alone, before any DynamoDB request.

A ``Caller`` is who the API's Lambda authorizer (functions/authorizer) verified; ``http.auth`` reads
it from the request. Who may call a route is its record's ``allow`` (``http.routes``); a route
without a record is for operators only. The two rules that depend on data are enforced where the
data is: field rules (``plan``, ``role``) on the request body, and ticket
ownership by a condition on the write itself (see ``tickets``).
"""

from dataclasses import dataclass

from controlplane.models.errors import Forbidden

OPERATORS_GROUP = "operators"
ADMIN, MEMBER = "admin", "member"
# The rules a route's record (``http.routes.Route.allow``) may grant, besides operators, who may call
# every route. Each is limited to the caller's own org:
#   ADMIN  - an org admin            MEMBER - any member
#   SELF   - a member whose user_id is the path's user_id
#   OWNER  - a member, on tickets they own (checked by the data layer's condition)
#   ANYONE - any signed-in caller, in any org or none (for routes with no org in their path)
SELF, OWNER, ANYONE = "self", "owner", "anyone"

# Fields of a PATCH that only some callers may change (besides operators, who may change every field).
FIELD_RULES = {
    "plan": frozenset[str](),
    "role": frozenset({ADMIN}),
    # the sign-in's address is written verified: only an admin vouches for one (docs/SECURITY.md)
    "email": frozenset({ADMIN}),
    "unit": frozenset({ADMIN}),  # a member does not move themselves between units
    "status": frozenset[str](),  # suspending or reactivating an org
    "suspension_reason": frozenset[str](),
}


@dataclass(frozen=True)
class Caller:
    subject: str  # the token's ``sub``: who, across every org
    user_id: str | None
    org_id: str | None
    role: str | None
    operator: bool = False
    # Their user item's ``created_at``: a ticket older than it under their user id is a deleted
    # namesake's (``tickets.first_id_of``). None for operators, and in a context that does not name it.
    user_created_at: str | None = None

    @property
    def is_member(self) -> bool:
        return not self.operator and self.role == MEMBER

    def owner_filter(self) -> str | None:
        """The user_id a ticket must belong to for this caller, or None when any ticket will do."""
        return self.user_id if self.is_member else None


def authorize(caller: Caller, allow: frozenset[str] | None, path_ids: dict[str, str]) -> None:
    """Raise Forbidden unless ``caller`` may call a route that grants ``allow``. Fails closed: no
    rules (``None``, a route absent from the table) or no matching rule is 403, for all but operators."""
    if caller.operator:
        return
    if not allow:
        raise Forbidden("Only operators may do this")
    if ANYONE in allow:
        return
    if not caller.org_id or path_ids.get("org_id") != caller.org_id:
        raise Forbidden("You may not access this organization")
    if caller.role == ADMIN and ADMIN in allow:
        return
    if caller.role == MEMBER and (
        MEMBER in allow or OWNER in allow or (SELF in allow and path_ids.get("user_id") == caller.user_id)
    ):
        return
    raise Forbidden("Your role may not do this")


def authorize_fields(caller: Caller, fields: set[str]) -> None:
    if caller.operator:
        return
    denied = sorted(f for f in fields if f in FIELD_RULES and caller.role not in FIELD_RULES[f])
    if denied:
        raise Forbidden(f"Your role may not change: {', '.join(denied)}")
