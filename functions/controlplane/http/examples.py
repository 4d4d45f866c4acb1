"""The OpenAPI examples of each error status of a route: each status shows its own codes, in the error
contract, with the very messages the code answers: each example is made by the code that raises it
(or from the message constant it raises), so Swagger UI shows what the route really answers."""

from collections.abc import Callable
from typing import Any

from controlplane.dal.cursor import INVALID
from controlplane.http import routes
from controlplane.http.auth import caller_from
from controlplane.http.errors import (
    IDEMPOTENCY_IN_PROGRESS,
    IDEMPOTENCY_KEY_REUSED,
    INTERNAL_ERROR,
    INVALID_JSON,
    NOT_A_PARAMETER,
    NOT_VALID,
    OUTAGE,
    body_too_large,
    error_body,
    send_as,
)
from controlplane.logic.access import ADMIN, Caller, authorize
from controlplane.logic.refusals import check_version
from controlplane.models import errors
from controlplane.models.errors import ApiError, QuotaExceeded
from controlplane.models.ids import EMAIL_PATTERN, SLUG_PATTERN
from controlplane.models.imports import suspended
from controlplane.models.plans import THROTTLED_MESSAGE
from controlplane.models.problems import plain
from controlplane.models.units import MAX_DEPTH, MAX_UNITS

REQUEST_ID = "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"
Example = dict[str, Any]  # OpenAPI's Example Object: a summary and a value


def raised(code: Callable[[], object]) -> str:
    """The message of the error ``code`` raises."""
    try:
        code()
    except ApiError as error:
        return error.message
    raise AssertionError(f"{code} raised nothing")


def _example(summary: str, code: str, message: str, details: Any = None) -> dict[str, Example]:
    return {code: {"summary": summary, "value": error_body(code, message, REQUEST_ID, details)}}


_ACME_ADMIN = Caller(subject="alice", user_id="alice", org_id="acme", role=ADMIN)

# A 422 of each route, at a place it has: a user's email, else the org's id (in the path; an org's
# create: in its body), else the page size (the list of orgs), or a parameter sent to a route that
# takes none (the list of plans).
_BAD_EMAIL: dict[str, Any] = {
    "loc": ["body", "email"],
    "type": "string_pattern_mismatch",
    "ctx": {"pattern": EMAIL_PATTERN},
}
_BAD_ORG_ID: dict[str, Any] = {"type": "string_pattern_mismatch", "ctx": {"pattern": SLUG_PATTERN}}
_NOT_A_PARAMETER: dict[str, Any] = {"loc": ["query", "limit"], "type": "extra_forbidden", "message": NOT_A_PARAMETER}
_BAD_LIMIT: dict[str, Any] = {
    "loc": ["query", "limit"],
    "type": "less_than_equal",
    "msg": "Input should be less than or equal to 100",
}

# Every route's examples of a status, whatever its shape.
_COMMON: dict[int, dict[str, Example]] = {
    401: _example("No token, or one that expired or is not valid", "unauthorized", raised(lambda: caller_from(None))),
    403: _example(
        "The caller may not call this route, or not in this organization",
        "forbidden",
        raised(lambda: authorize(_ACME_ADMIN, frozenset({ADMIN}), {"org_id": "globex"})),
    )
    | _example(
        "The caller's user or organization was deleted: the session has ended",
        "session_ended",
        errors.session_ended("acme").message,
    )
    | _example("The caller's organization is suspended", "org_suspended", errors.suspended_session("acme").message),
    404: _example("The organization, user or ticket does not exist", "not_found", errors.org_missing("acme").message),
    412: _example(
        "If-Match names a version that is not the current one",
        "precondition_failed",
        raised(lambda: check_version({"version": 4}, 3)),
    ),
    413: _example("The body is larger than the API accepts", "payload_too_large", body_too_large().message),
    415: _example("The body is not sent as application/json", "unsupported_media_type", send_as().message),
    429: _example("Too many requests: retry after Retry-After seconds", "throttled", THROTTLED_MESSAGE),
    500: _example("A bug of ours: the request_id finds it in the logs", "internal_error", INTERNAL_ERROR),
    503: _example("A dependency is busy or out: retry after Retry-After seconds", "service_unavailable", OUTAGE),
}


def error_examples(route: routes.Route, status: int, page: bool) -> dict[str, Example]:
    """The examples of ``status`` for ``route``: the common ones and those of its shape. ``page``: the
    route answers a page, so a cursor can be refused."""
    if status == 400:
        examples: dict[str, Example] = {}
        if route.method in ("POST", "PATCH"):
            examples |= _example(
                "The body is not JSON: bad syntax, not UTF-8, or a name twice in one object",
                "invalid_json",
                INVALID_JSON,
            )
        if page:
            examples |= _example("The cursor is malformed, or belongs to another list", "invalid_cursor", INVALID)
        return examples
    if status == 409:
        return _conflicts(route)
    examples = _not_valid(route, page) if status == 422 else dict(_COMMON[status])
    if status == 422 and route.method == "POST":
        examples |= _example(
            "The Idempotency-Key was used with another body", "idempotency_key_reused", IDEMPOTENCY_KEY_REUSED
        )
    return examples


def _not_valid(route: routes.Route, page: bool) -> dict[str, Example]:
    if route.operation_id in ("createUser", "updateUser"):
        problem = _BAD_EMAIL
    elif "{org_id}" in route.path or route.method == "POST":
        problem = {**_BAD_ORG_ID, "loc": ["path" if "{org_id}" in route.path else "body", "org_id"]}
    else:  # the list of orgs takes a page size; the list of plans nothing, and refuses what is sent
        problem = _BAD_LIMIT if page else _NOT_A_PARAMETER
    detail = {"loc": problem["loc"], "message": problem.get("message") or plain(problem), "type": problem["type"]}
    return _example("A parameter or a body field is not valid", "validation_error", NOT_VALID, [detail])


def _conflicts(route: routes.Route) -> dict[str, Example]:
    examples: dict[str, Example] = {}
    if route.method == "POST" and route.status == 202:  # a job: it starts or it is refused whole
        refused = suspended("acme")
        examples |= _example("The organization is suspended", refused.code, refused.message)
    elif route.method == "POST":
        examples |= _example("The resource already exists", "already_exists", _EXISTS[route.operation_id].message)
    if route.method == "POST":  # a create or a job, each takes an Idempotency-Key
        examples |= _example(
            "A request with the same Idempotency-Key is still in progress", "conflict", IDEMPOTENCY_IN_PROGRESS
        )
    if route.seats:
        summary = (
            "The org's plan has no seat left"
            if route.method == "POST"
            else "The new plan has fewer seats than the org has users"
        )
        quota = QuotaExceeded("users", 5, 5, "free")
        examples |= _example(summary, quota.code, quota.message, quota.details)
    for name in route.conflicts:
        summary, error = CONFLICTS[name]
        examples[name] = {"summary": summary, "value": error_body(error.code, error.message, REQUEST_ID)}
    return examples


_EXISTS = {
    "createOrg": errors.org_exists("acme"),
    "createUnit": errors.unit_exists("acme", "platform"),
    "createUser": errors.user_exists("acme", "alice"),
    "openTicket": errors.ticket_exists("01J9Z3K4M5N6P7Q8R9S0T1V2W3"),
}
# The 409s a route answers by the state of its data (``Route.conflicts`` names them).
CONFLICTS: dict[str, tuple[str, ApiError]] = {
    "move_in_progress": ("A move of units is under way where this request reads or writes", errors.unit_moving("acme")),
    "moved_since": ("The cursor is from before a move of the listed units", errors.units_moved_since()),
    "created_again": (
        "The cursor is of a unit deleted since (one of its id was created again)",
        errors.unit_created_again_since("platform"),
    ),
    "suspended": ("The organization is suspended", errors.suspended_for_users("acme")),
    "too_deep": ("The parent is at the deepest level", errors.too_deep(MAX_DEPTH, "platform", MAX_DEPTH)),
    "too_deep_move": (
        "The moved subtree would nest too deep",
        errors.too_deep(MAX_DEPTH, "platform", MAX_DEPTH + 1, moving=True),
    ),
    "too_many_units": ("The organization has as many units as it may", errors.too_many_units(MAX_UNITS)),
    "root_move": ("The root never moves", errors.root_refuses("move")),
    "root_rename": ("The root is named after its organization", errors.root_refuses("rename")),
    "root_delete": ("The root goes with its organization only", errors.root_refuses("delete")),
    "under_itself": ("The new parent is the unit or below it", errors.unit_under_itself("platform")),
    "not_empty": ("The unit still has units or users", errors.unit_not_empty("platform", "users")),
    "being_deleted": ("A delete of the unit is under way", errors.unit_being_deleted("platform")),
    "no_sign_in": ("A role or e-mail change for a user with no sign-in yet", errors.no_sign_in("alice")),
}
