"""The API's refusals as exceptions: one class per error code of its contract (docs/API.md, "Errors").

    from cpctl.errors import NotFound, PreconditionFailed

``error_for(response)`` turns an error answer into the class its code names (``ApiError`` for a code
this client does not know, or an answer not in the contract, e.g. a proxy's own 502).
"""

import httpx


class ApiError(Exception):
    """The API refused: ``status``, ``code``, ``message``, ``request_id`` (and ``details`` for
    validation errors). ``body`` is the error JSON exactly as the API sent it. ``maybe_made``: it
    ends a change one of whose attempts went unanswered (API Gateway's 502 or 504, or no answer),
    which may have been made all the same; ``idempotency_key`` is the key it was sent with, if it had one.
    ``attempts``: how often the request was sent, so that a 429 is said as retried only if it was (a
    ``Retry-After`` wait that would end past the request's timeout is not made)."""

    def __init__(self, response: httpx.Response):
        self.status = response.status_code
        self.body = response.text
        self.headers = response.headers
        self.maybe_made = False
        self.attempts = 1
        self.idempotency_key: str | None = None
        try:
            error = response.json()["error"]
            self.code, self.message = str(error["code"]), str(error["message"])
            self.request_id = error.get("request_id") or response.headers.get("x-amzn-RequestId")
            self.details = error.get("details")
        except (ValueError, KeyError, TypeError):
            # Not the API's error shape, e.g. a gateway in between answering 502 by itself.
            self.code, self.message = f"http_{self.status}", _not_the_contract(response)
            self.request_id, self.details = response.headers.get("x-amzn-RequestId"), None
        super().__init__(f"{self.status} {self.code}: {self.message} (request {self.request_id})")


def _not_the_contract(response: httpx.Response) -> str:
    """An error answer in no shape of the API's: its text, short; a web page (the URL names another
    server) is named, not printed as markup."""
    if "html" in response.headers.get("Content-Type", "").lower():
        return f"{response.reason_phrase}: an HTML page, not the API's JSON (is the API's URL right?)"
    return response.text[:200] or response.reason_phrase


class BadRequest(ApiError):
    """invalid_json, invalid_cursor, bad_request"""


class Unauthorized(ApiError):
    pass


class Forbidden(ApiError):
    """The caller's role may not call this route (or not in this org); other routes may still answer."""


class SessionEnded(ApiError):
    """The token's user or organization was deleted: no route answers it again. Log in as someone else."""


class NotFound(ApiError):
    pass


class MethodNotAllowed(ApiError):
    pass


class AlreadyExists(ApiError):
    pass


class Conflict(ApiError):
    """A request with the same Idempotency-Key is still in progress; or the change would break the
    tree of units (a unit under itself, one that still has units or users), or a listing's cursor
    is from before a move of its units (start again)."""


class MoveInProgress(ApiError):
    """Units of the org are being moved where the request reads or writes; retry after ``Retry-After``."""


class LimitExceeded(ApiError):
    """A fixed limit of the tree of units: 10 levels deep, 1,000 units per organization."""


class QuotaExceeded(ApiError):
    """The org's plan has no seat left (``details`` says which quota, its limit and the use)."""


class OrgSuspended(ApiError):
    """The org is suspended: its users' calls are refused (403), and it takes no new user (409)."""


class PreconditionFailed(ApiError):
    """The If-Match version is not the current one: read the resource again."""


class PayloadTooLarge(ApiError):
    pass


class UnsupportedMediaType(ApiError):
    pass


class ValidationFailed(ApiError):
    pass


class IdempotencyKeyReused(ApiError):
    pass


class Throttled(ApiError):
    pass


class InternalError(ApiError):
    pass


class ServiceUnavailable(ApiError):
    pass


class Interrupted(Exception):
    """Ctrl-C while a change was sent, or waited for: it may or may not have been made."""

    def __init__(self, method: str, path: str, idempotency_key: str | None):
        self.method, self.path, self.idempotency_key = method, path, idempotency_key
        super().__init__(f"{method} {path} interrupted")


class UnexpectedAnswer(Exception):
    """A success answer whose body is not the API's model of it: the URL names another server (a
    proxy's or a portal's page), or an API of another version. The request was sent."""

    def __init__(self, response: httpx.Response, problem: str):
        self.status = response.status_code
        self.problem = problem
        request = response.request
        super().__init__(f"{request.method} {request.url} answered {self.status}, but not as the API does: {problem}")


ERRORS: dict[str, type[ApiError]] = {
    "invalid_json": BadRequest,
    "invalid_cursor": BadRequest,
    "bad_request": BadRequest,
    "unauthorized": Unauthorized,
    "forbidden": Forbidden,
    "session_ended": SessionEnded,
    "not_found": NotFound,
    "method_not_allowed": MethodNotAllowed,
    "already_exists": AlreadyExists,
    "conflict": Conflict,
    "quota_exceeded": QuotaExceeded,
    "move_in_progress": MoveInProgress,
    "limit_exceeded": LimitExceeded,
    "org_suspended": OrgSuspended,
    "precondition_failed": PreconditionFailed,
    "payload_too_large": PayloadTooLarge,
    "unsupported_media_type": UnsupportedMediaType,
    "validation_error": ValidationFailed,
    "idempotency_key_reused": IdempotencyKeyReused,
    "throttled": Throttled,
    "internal_error": InternalError,
    "service_unavailable": ServiceUnavailable,
}


def error_for(response: httpx.Response) -> ApiError:
    error = ApiError(response)
    return ERRORS.get(error.code, ApiError)(response)
