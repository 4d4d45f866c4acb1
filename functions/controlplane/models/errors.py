"""Domain errors. Each carries its error code, a message and, where a caller can act on them, details
as data (by how much a quota was exceeded, when to retry, which methods a path has); none knows a
transport. ``controlplane.http.errors`` maps each code to its HTTP status, in one table."""

from typing import Any


class ApiError(Exception):
    code = "internal_error"

    def __init__(self, message: str, details: Any = None):
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidCursor(ApiError):
    code = "invalid_cursor"


class InvalidJson(ApiError):
    """A body that is not JSON text as RFC 8259 defines it: not UTF-8, an object with a key twice, NaN..."""

    code = "invalid_json"


class TooDeep(ApiError):
    code = "invalid_json"


class NotFound(ApiError):
    code = "not_found"


def org_missing(org_id: str) -> NotFound:
    return NotFound(f"Organization {org_id} not found")


def user_missing(org_id: str, user_id: str) -> NotFound:
    return NotFound(f"User {user_id} not found in organization {org_id}")


def ticket_missing(org_id: str, ticket_id: str) -> NotFound:
    return NotFound(f"Ticket {ticket_id} not found in organization {org_id}")


def unit_missing(org_id: str, unit_id: str) -> NotFound:
    return NotFound(f"Unit {unit_id} not found in organization {org_id}")


def unit_moving(org_id: str) -> "MoveInProgress":
    return MoveInProgress(f"Units of organization {org_id} are being moved; retry shortly")


def units_moved_since() -> "Conflict":
    """A listing's cursor from before a move that changed the listed subtree."""
    return Conflict("Units were moved since this listing began; start again from the first page")


def unit_created_again_since(unit_id: str) -> "Conflict":
    """A listing's cursor taken of an earlier unit of the same id, deleted since."""
    return Conflict(
        f"Unit {unit_id} was deleted and created again since this listing began; start again from the first page"
    )


def unit_exists(org_id: str, unit_id: str) -> "AlreadyExists":
    return AlreadyExists(f"Unit {unit_id} already exists in organization {org_id}")


def unit_not_empty(unit_id: str, what: str) -> "Conflict":
    return Conflict(f"Unit {unit_id} still has {what}; move or delete them first")


def unit_being_deleted(unit_id: str) -> "Conflict":
    return Conflict(f"A delete of unit {unit_id} is under way; retry shortly")


def unit_under_itself(unit_id: str) -> "Conflict":
    return Conflict(f"Unit {unit_id} cannot move under itself or its own descendants")


# What the root refuses: it is the org's own unit, named after it, and goes with it.
ROOT_REFUSES = {
    "move": "The root cannot move",
    "rename": "The root takes its organization's name; rename the organization",
    "delete": "The root cannot be deleted; it goes with its organization",
}


def root_refuses(action: str) -> "Conflict":
    return Conflict(ROOT_REFUSES[action])


def too_deep(max_depth: int, parent_id: str, depth: int, moving: bool = False) -> "LimitExceeded":
    """A unit created at ``depth`` under ``parent_id``, or a moved subtree whose deepest unit would be."""
    where = f"under {parent_id} this subtree reaches {depth}" if moving else f"{parent_id} is at depth {depth}"
    return LimitExceeded(f"Units nest at most {max_depth} deep; {where}")


def too_many_units(max_units: int) -> "LimitExceeded":
    return LimitExceeded(f"An organization has at most {max_units} units")


def suspended_for_users(org_id: str) -> "OrgSuspended":
    """A suspended org takes no new user: their sign-in would be the one enabled sign-in of the org,
    and the sign-ins job that disabled the others has already passed. Reactivate it first."""
    return OrgSuspended(f"Organization {org_id} is suspended; reactivate it before adding users")


def no_sign_in(user_id: str) -> "Conflict":
    """A role or e-mail change for a user whose sign-in an import has not made (yet, or at all):
    there is nothing to keep in step, and the import would make it from the row as it was."""
    return Conflict(
        f"User {user_id} has no sign-in: their import has not made it yet, or Cognito refused it (the "
        "import's sign_ins.failed says why). Change the role or e-mail once it is made, or delete the "
        "user and create them again"
    )


def org_exists(org_id: str) -> "AlreadyExists":
    return AlreadyExists(f"Organization {org_id} already exists")


def user_exists(org_id: str, user_id: str) -> "AlreadyExists":
    return AlreadyExists(f"User {user_id} already exists in organization {org_id}")


def ticket_exists(ticket_id: str) -> "AlreadyExists":
    return AlreadyExists(f"Ticket {ticket_id} already exists")


class MethodNotAllowed(ApiError):
    code = "method_not_allowed"

    def __init__(self, message: str, allowed: list[str]):
        super().__init__(message)
        self.allowed = allowed  # the methods the path does have


class AlreadyExists(ApiError):
    code = "already_exists"


class PreconditionFailed(ApiError):
    code = "precondition_failed"


class ServiceUnavailable(ApiError):
    """Something this API depends on cannot answer now (the table or the sign-in directory is
    throttling, writes keep conflicting, an org's seats are being counted); the caller should retry
    later. Each raiser says which in its message."""

    code = "service_unavailable"

    def __init__(self, message: str, retry_after: int = 1):
        super().__init__(message)
        self.retry_after = retry_after  # seconds


# Every 401's message, the functions' and API Gateway's alike: API Gateway answers a TOKEN authorizer's
# refusal with one static gateway response (UNAUTHORIZED), which cannot tell a missing token from an
# expired or forged one, so none of them says which.
UNAUTHORIZED_MESSAGE = "Sign in and send your ID token in the Authorization header"


class Unauthorized(ApiError):
    code = "unauthorized"


class Forbidden(ApiError):
    code = "forbidden"


class SessionEnded(ApiError):
    """The caller's sign-in no longer admits them: their user or their organization was deleted (a
    user id or org id created again has new sign-ins). Only the authorizer refuses with it, on every
    route (403 through API Gateway's ACCESS_DENIED): a client ends its session, where ``forbidden``
    is one route that the caller's role may not call."""

    code = "session_ended"


def session_ended(org_id: str) -> SessionEnded:
    """One message whether the user or the org is gone: it says only what the caller's own token is
    no longer, never whether an org of that id exists now (another tenant's, made since)."""
    return SessionEnded(f"Your sign-in is no longer a user of organization {org_id}")


class Conflict(ApiError):
    code = "conflict"


class MoveInProgress(ApiError):
    """A move of units is under way where the request would read or write (issue 27): retry after it."""

    code = "move_in_progress"

    def __init__(self, message: str, retry_after: int = 5):
        super().__init__(message)
        self.retry_after = retry_after  # seconds


class LimitExceeded(ApiError):
    """A fixed limit of the product (not of a plan): a tree's depth, its number of units."""

    code = "limit_exceeded"


class OrgSuspended(ApiError):
    """The org is suspended, and the request would add to it (a user, who could sign in)."""

    code = "org_suspended"


def suspended_session(org_id: str) -> OrgSuspended:
    """The authorizer's refusal of a suspended org's users, on every route (403 through API Gateway's
    ACCESS_DENIED, where the API's own ``org_suspended`` refusals of a change are 409)."""
    return OrgSuspended(f"Organization {org_id} is suspended")


class QuotaExceeded(ApiError):
    """The org's plan allows fewer than the request needs; ``details`` says which quota and by how much."""

    code = "quota_exceeded"

    def __init__(self, quota: str, limit: int, used: int, plan: str):
        super().__init__(
            f"The {plan} plan allows {limit} {quota} and the organization has {used}",
            details={"quota": quota, "limit": limit, "used": used, "plan": plan},
        )


class IdempotencyKeyReused(ApiError):
    code = "idempotency_key_reused"


class InvalidRequest(ApiError):
    """What Powertools' validation answers too: a malformed path, query, header or body."""

    code = "validation_error"


class UnsupportedMediaType(ApiError):
    code = "unsupported_media_type"


class PayloadTooLarge(ApiError):
    code = "payload_too_large"
