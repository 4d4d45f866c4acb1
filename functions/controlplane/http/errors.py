"""The error contract on the wire: each error code's HTTP status, in one table, the headers an error's
data becomes, and the one error body every answer of the API carries, API Gateway's own included
(``infra.api``), the local gateway's and the local console's:
``{"error": {"code", "message", "request_id"[, "details"]}}``.

Import-light on purpose (no Powertools, no pydantic): infra and the local servers build their error
bodies with it.
"""

from typing import Any

from controlplane.models.errors import (
    ApiError,
    MethodNotAllowed,
    MoveInProgress,
    PayloadTooLarge,
    ServiceUnavailable,
    UnsupportedMediaType,
)

STATUS = {
    "invalid_cursor": 400,
    "invalid_json": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "session_ended": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "already_exists": 409,
    "conflict": 409,
    "org_suspended": 409,
    "quota_exceeded": 409,
    "move_in_progress": 409,
    "limit_exceeded": 409,
    "precondition_failed": 412,
    "payload_too_large": 413,
    "unsupported_media_type": 415,
    "idempotency_key_reused": 422,
    "validation_error": 422,
    "throttled": 429,
    "internal_error": 500,
    "service_unavailable": 503,
}
# The codes the authorizer's Deny carries, answered 403 through API Gateway's ACCESS_DENIED on every
# route, whatever their status when a route answers them (org_suspended: a change refused, 409).
DENIED_AT_THE_GATEWAY = frozenset({"forbidden", "session_ended", "org_suspended"})

# What the http layer answers itself, in words (the OpenAPI examples show these very messages).
INVALID_JSON = "The request body is not valid JSON"
NOT_VALID = "The request is not valid"
NOT_A_PARAMETER = "not a parameter of this request"  # a query parameter the route does not take
OUTAGE = "A service this API depends on is unavailable; retry later"
INTERNAL_ERROR = "Something went wrong on our side"
IDEMPOTENCY_KEY_REUSED = "This Idempotency-Key was used with another request body"
IDEMPOTENCY_IN_PROGRESS = "A request with this Idempotency-Key is still in progress; retry shortly"
# The largest valid body is a ticket's (200-character subject, 10,000-character description, 20 tags
# of 32): 127.2 KiB as an ASCII-only encoder writes it (json.dumps' default, Python requests' json=),
# where every character beyond the BMP is a 12-byte surrogate pair (\ud83d\ude00); 44 KB in UTF-8.
# Anything bigger is refused before it is parsed, and never gets near DynamoDB's 400 KB item limit.
MAX_BODY_BYTES = 128 * 1024


def send_as(media_types: frozenset[str] = frozenset({"application/json"})) -> UnsupportedMediaType:
    return UnsupportedMediaType(f"Send the body as {' or '.join(sorted(media_types))}")


def body_too_large(limit: int = MAX_BODY_BYTES) -> PayloadTooLarge:
    return PayloadTooLarge(f"Request bodies are limited to {limit // 1024} KiB")


def status_of(error: ApiError) -> int:
    return STATUS[error.code]


def headers_of(error: ApiError) -> dict[str, str]:
    """The headers an error's data becomes: when to retry, which methods the path has."""
    if isinstance(error, ServiceUnavailable | MoveInProgress):
        return {"Retry-After": str(error.retry_after)}
    if isinstance(error, MethodNotAllowed):
        return {"Allow": ", ".join(error.allowed)}
    return {}


def error_body(code: str, message: str, request_id: str, details: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message, "request_id": request_id}
    if details is not None:
        body["details"] = details
    return {"error": body}
