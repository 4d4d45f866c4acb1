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
    """A body that is not JSON text as RFC 8259 defines it: not UTF-8, or an object with a key twice."""

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


class Conflict(ApiError):
    code = "conflict"


class OrgSuspended(ApiError):
    """The org is suspended, and the request would add to it (a user, who could sign in)."""

    code = "org_suspended"


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
