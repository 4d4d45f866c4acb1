"""Domain errors. Each carries its HTTP status and error code; ``api`` maps them in one place."""


class ApiError(Exception):
    status = 500
    code = "internal_error"

    def __init__(self, message: str, headers: dict[str, str] | None = None, details: dict | None = None):
        super().__init__(message)
        self.message = message
        self.headers = headers or {}
        self.details = details


class InvalidCursor(ApiError):
    status = 400
    code = "invalid_cursor"


class NotFound(ApiError):
    status = 404
    code = "not_found"


class AlreadyExists(ApiError):
    status = 409
    code = "already_exists"


class PreconditionFailed(ApiError):
    status = 412
    code = "precondition_failed"


class ServiceUnavailable(ApiError):
    """DynamoDB kept throttling after the client's own retries; the caller should retry later."""

    status = 503
    code = "service_unavailable"

    def __init__(self, message: str = "The service is busy; retry later", retry_after: int = 1):
        super().__init__(message, headers={"Retry-After": str(retry_after)})


class Unauthorized(ApiError):
    status = 401
    code = "unauthorized"


class Forbidden(ApiError):
    status = 403
    code = "forbidden"


class Conflict(ApiError):
    status = 409
    code = "conflict"


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


class PayloadTooLarge(ApiError):
    status = 413
    code = "payload_too_large"
