"""The OpenAPI examples of each error status of a route: each status shows its own codes, in the error
contract, so Swagger UI shows what the route really answers with that status."""

from typing import Any

from controlplane.http import routes
from controlplane.models.errors import UNAUTHORIZED_MESSAGE
from controlplane.models.plans import THROTTLED_MESSAGE

REQUEST_ID = "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"
Example = dict[str, Any]  # OpenAPI's Example Object: a summary and a value


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    body = {"code": code, "message": message, "request_id": REQUEST_ID}
    return {"error": body | ({"details": details} if details is not None else {})}


def _example(summary: str, code: str, message: str, details: Any = None) -> dict[str, Example]:
    return {code: {"summary": summary, "value": error_body(code, message, details)}}


_QUOTA = {"quota": "users", "limit": 5, "used": 5, "plan": "free"}

# Every route's examples of a status, whatever its shape.
_COMMON: dict[int, dict[str, Example]] = {
    401: _example("No token, or one that expired or is not valid", "unauthorized", UNAUTHORIZED_MESSAGE),
    403: _example(
        "The caller may not call this route, or not in this organization",
        "forbidden",
        "An admin of organization acme may not call this route in organization globex",
    ),
    404: _example("The organization, user or ticket does not exist", "not_found", "Organization acme not found"),
    412: _example(
        "If-Match names a version that is not the current one",
        "precondition_failed",
        'The resource is at version "4", not "3"; GET it again',
    ),
    413: _example("The body is larger than the API accepts", "payload_too_large", "The request body is too large"),
    415: _example(
        "The body is not sent as application/json",
        "unsupported_media_type",
        "Send the body as application/json",
    ),
    422: _example(
        "A parameter or a body field is not valid",
        "validation_error",
        "The request is not valid",
        [{"loc": ["body", "email"], "message": "not a valid e-mail address", "type": "value_error"}],
    ),
    429: _example("Too many requests: retry after Retry-After seconds", "throttled", THROTTLED_MESSAGE),
    500: _example("A bug of ours: the request_id finds it in the logs", "internal_error", "Internal error"),
    503: _example(
        "A dependency is busy or out: retry after Retry-After seconds",
        "service_unavailable",
        "The service is busy; retry later",
    ),
}


def error_examples(route: routes.Route, status: int, page: bool) -> dict[str, Example]:
    """The examples of ``status`` for ``route``: the common ones and those of its shape. ``page``: the
    route answers a page, so a cursor can be refused."""
    if status == 400:
        examples: dict[str, Example] = {}
        if route.method in ("POST", "PATCH"):
            examples |= _example("The body is not JSON", "invalid_json", "The request body is not valid JSON")
        if page:
            examples |= _example(
                "The cursor is malformed, or belongs to another list", "invalid_cursor", "The cursor is not valid"
            )
        return examples
    if status == 409:
        return _conflicts(route)
    examples = dict(_COMMON[status])
    if status == 422 and route.method == "POST":
        examples |= _example(
            "The Idempotency-Key was used with another body",
            "idempotency_key_reused",
            "This Idempotency-Key was used with another request body",
        )
    return examples


def _conflicts(route: routes.Route) -> dict[str, Example]:
    examples: dict[str, Example] = {}
    if route.method == "POST":
        examples |= _example(
            "The resource already exists", "already_exists", f"{_NOUN.get(route.function, 'It')} already exists"
        )
        examples |= _example(
            "A request with the same Idempotency-Key is still in progress",
            "conflict",
            "A request with this Idempotency-Key is still in progress; retry shortly",
        )
    if route.seats:
        summary = (
            "The org's plan has no seat left"
            if route.method == "POST"
            else "The new plan has fewer seats than the org has users"
        )
        examples |= _example(
            summary,
            "quota_exceeded",
            "The free plan allows 5 users and the organization has 5",
            _QUOTA,
        )
    return examples


_NOUN = {
    routes.ORGANIZATIONS: "Organization acme",
    routes.USERS: "User alice",
    routes.TICKETS: "Ticket 01J9Z3K4M5N6P7Q8R9S0T1V2W3",
}
