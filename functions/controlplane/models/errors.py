"""Domain errors. Each carries its HTTP status and error code; ``controlplane.http.resolver`` maps them in one place."""

from typing import Any

from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)


class ApiError(Exception):
    status = 500
    code = "internal_error"

    def __init__(self, message: str, headers: dict[str, str] | None = None, details: Any = None):
        super().__init__(message)
        self.message = message
        self.headers = headers or {}
        self.details = details


class InvalidCursor(ApiError):
    status = 400
    code = "invalid_cursor"


class TooDeep(ApiError):
    status = 400
    code = "invalid_json"


class NotFound(ApiError):
    status = 404
    code = "not_found"


def org_missing(org_id: str) -> NotFound:
    return NotFound(f"Organization {org_id} not found")


def user_missing(org_id: str, user_id: str) -> NotFound:
    return NotFound(f"User {user_id} not found in organization {org_id}")


def ticket_missing(org_id: str, ticket_id: str) -> NotFound:
    return NotFound(f"Ticket {ticket_id} not found in organization {org_id}")


class MethodNotAllowed(ApiError):
    status = 405
    code = "method_not_allowed"


class AlreadyExists(ApiError):
    status = 409
    code = "already_exists"


class PreconditionFailed(ApiError):
    status = 412
    code = "precondition_failed"


class ServiceUnavailable(ApiError):
    """Something this API depends on cannot answer now (the table or the sign-in directory is
    throttling, writes keep conflicting, an org's seats are being counted); the caller should retry
    later. Each raiser says which in its message."""

    status = 503
    code = "service_unavailable"

    def __init__(self, message: str, retry_after: int = 1):
        super().__init__(message, headers={"Retry-After": str(retry_after)})


# Every 401's message, the functions' and API Gateway's alike: API Gateway answers a TOKEN authorizer's
# refusal with one static gateway response (UNAUTHORIZED), which cannot tell a missing token from an
# expired or forged one, so none of them says which.
UNAUTHORIZED_MESSAGE = "Sign in and send your ID token in the Authorization header"


class Unauthorized(ApiError):
    status = 401
    code = "unauthorized"


class Forbidden(ApiError):
    status = 403
    code = "forbidden"


class Conflict(ApiError):
    status = 409
    code = "conflict"


class OrgSuspended(ApiError):
    """The org is suspended, and the request would add to it (a user, who could sign in)."""

    status = 409
    code = "org_suspended"


class QuotaExceeded(ApiError):
    """The org's plan allows fewer than the request needs; ``details`` says which quota and by how much."""

    status = 409
    code = "quota_exceeded"

    def __init__(self, quota: str, limit: int, used: int, plan: str):
        super().__init__(
            f"The {plan} plan allows {limit} {quota} and the organization has {used}",
            details={"quota": quota, "limit": limit, "used": used, "plan": plan},
        )


class IdempotencyKeyReused(ApiError):
    status = 422
    code = "idempotency_key_reused"


class InvalidRequest(ApiError):
    """What Powertools' validation answers too: a malformed path, query, header or body."""

    status = 422
    code = "validation_error"


class UnsupportedMediaType(ApiError):
    status = 415
    code = "unsupported_media_type"


class PayloadTooLarge(ApiError):
    status = 413
    code = "payload_too_large"


_UNREACHABLE = (EndpointConnectionError, ConnectTimeoutError, ReadTimeoutError, ConnectionClosedError)


def is_outage(error: BaseException | None) -> bool:
    """An AWS service we depend on is unreachable, timing out or failing on its side (5xx), after
    the client's own retries: worth a retry later, never a 500. Looks through the errors that
    libraries raise in its place (e.g. Powertools' idempotency layer)."""
    while error is not None:
        if isinstance(error, _UNREACHABLE):
            return True
        if (
            isinstance(error, ClientError)
            and error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) >= 500
        ):
            return True
        error = error.__cause__ or error.__context__
    return False
