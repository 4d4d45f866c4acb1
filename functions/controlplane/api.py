"""HTTP glue shared by the three handlers: the resolver, typed parameters and the error contract.

Every error leaves as ``{"error": {"code", "message", "request_id"[, "details"]}}``.
"""

import json
import os
import re
from collections.abc import Callable
from http import HTTPStatus
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, CORSConfig, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.middlewares.openapi_validation import OpenAPIRequestValidationMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.event_handler.openapi.params import Header, Path, Query
from pydantic import BaseModel

from controlplane import routes
from controlplane.auth import Caller, authorize, caller_from_claims
from controlplane.errors import ApiError, PayloadTooLarge, PreconditionFailed
from controlplane.ids import SLUG_PATTERN, ULID_PATTERN
from controlplane.models import ErrorResponse, Resource
from controlplane.observability import logger

OrgIdPath = Annotated[str, Path(pattern=SLUG_PATTERN, description="Organization slug")]
UserIdPath = Annotated[str, Path(pattern=SLUG_PATTERN, description="User slug")]
TicketIdPath = Annotated[str, Path(pattern=ULID_PATTERN, description="Ticket ULID")]
Limit = Annotated[int, Query(ge=1, le=100, description="Page size")]
Cursor = Annotated[str | None, Query(max_length=2048, description="`next_cursor` of the previous page")]
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=255,
        pattern=r"^[\x21-\x7e]+$",
        description="Any unique string (e.g. a UUID): a retry with the same key and body gets the first response",
    ),
]
IfMatch = Annotated[
    str | None,
    Header(
        alias="If-Match", description='The `ETag` you last read, e.g. `"3"`: the change applies only to that version'
    ),
]

# Every status an error can have, documented once for every route (see the README's error codes).
_ERROR_STATUSES = (400, 401, 403, 404, 405, 409, 412, 413, 415, 422, 429, 500, 503)


def responses(successes: dict[int, Any]) -> dict[int, dict]:
    """The OpenAPI responses of a route: its success statuses (with their body model, or None for
    no body) and the error contract for every error status."""
    documented: dict[int, dict] = {
        status: {
            "description": HTTPStatus(status).phrase,
            "content": {content_types.APPLICATION_JSON: {"model": ErrorResponse}},
        }
        for status in _ERROR_STATUSES
    }
    for status, model in successes.items():
        documented[status] = {"description": HTTPStatus(status).phrase}
        if model is not None:
            documented[status]["content"] = {content_types.APPLICATION_JSON: {"model": model}}
    return documented


DEFAULT_LIMIT = 20
# The largest valid body (a ticket: 10,000-character description, 20 tags) is far below this;
# anything bigger is refused before it is parsed, and never gets near DynamoDB's 400 KB item limit.
MAX_BODY_BYTES = 64 * 1024
_ID_FORMATS = {
    "org_id": re.compile(SLUG_PATTERN),
    "user_id": re.compile(SLUG_PATTERN),
    "ticket_id": re.compile(ULID_PATTERN),
}
_NOTHING = re.compile(r"(?!)")


class _JsonBodiesOnly(OpenAPIRequestValidationMiddleware):
    """Powertools' request validation, for a JSON-only API: a body of any other media type is 415
    before Powertools tries it as a form (its multipart parser raises a bare ValueError, a 500,
    when the boundary is missing)."""

    def handler(self, app: APIGatewayRestResolver, next_middleware):
        event = app.current_event
        media_type = (event.headers.get("content-type") or "").split(";")[0].strip().lower()
        if event.body and media_type not in ("", content_types.APPLICATION_JSON):
            raise RequestUnsupportedContentType("Unsupported content type", errors=[])
        return super().handler(app, next_middleware)


def _cors() -> CORSConfig | None:
    """Browsers read a response only if it names their origin. API Gateway answers the preflight;
    the actual responses carry the header from here. CORS_ALLOW_ORIGINS: comma-separated, or unset."""
    origins = [origin.strip() for origin in os.environ.get("CORS_ALLOW_ORIGINS", "").split(",") if origin.strip()]
    if not origins:
        return None
    return CORSConfig(
        allow_origin=origins[0],
        extra_origins=origins[1:],
        allow_headers=["Authorization", "Content-Type", "If-Match", "Idempotency-Key"],
        expose_headers=["ETag", "Location", "Retry-After"],
    )


def create_app() -> APIGatewayRestResolver:
    app = APIGatewayRestResolver(enable_validation=True, json_body_deserializer=_parse_body, cors=_cors())
    # Powertools runs this middleware before any of ours and offers no public way to swap it.
    app._request_validation_middleware = _JsonBodiesOnly()

    def error(status: int, code: str, message: str, details: Any = None, headers: dict | None = None) -> Response:
        body: dict[str, Any] = {"code": code, "message": message, "request_id": _request_id(app)}
        if details is not None:
            body["details"] = details
        return Response(status, content_types.APPLICATION_JSON, {"error": body}, headers)

    @app.exception_handler(ApiError)
    def api_error(exc: ApiError) -> Response:
        return error(exc.status, exc.code, exc.message, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    def invalid_request(exc: RequestValidationError) -> Response:
        problems = exc.errors()
        if any(problem["type"] == "json_invalid" for problem in problems):
            return error(400, "invalid_json", "The request body is not valid JSON")
        details = [{"loc": list(p["loc"]), "message": p["msg"], "type": p["type"]} for p in problems]
        return error(422, "validation_error", "The request is not valid", details)

    @app.exception_handler(RequestUnsupportedContentType)
    def unsupported_content_type(exc: RequestUnsupportedContentType) -> Response:
        return error(415, "unsupported_media_type", "Send the body as application/json")

    @app.not_found
    def no_route(exc: NotFoundError) -> Response:
        event = app.current_event
        allowed = routes.methods_for(event.path.strip("/").split("/"))
        if event.http_method in allowed:
            # The route exists but the resolver refused a segment (e.g. a "#"): a malformed id.
            return error(422, "validation_error", f"{event.path} contains a malformed identifier")
        if allowed:
            message = f"{event.http_method} is not allowed on {event.path}"
            return error(405, "method_not_allowed", message, headers={"Allow": ", ".join(allowed)})
        return error(404, "not_found", f"No route for {event.http_method} {event.path}")

    @app.exception_handler(Exception)
    def unexpected(exc: Exception) -> Response:
        logger.exception("Unhandled error")
        return error(500, "internal_error", "Something went wrong on our side")

    def guard(app: APIGatewayRestResolver, next_middleware):
        """Before the route runs, after Powertools has validated the request (it always runs
        first): who is calling (401), are the ids well-formed (422), may the caller use this route
        in this org (403). Nothing before this reads data. Ids are checked whole here too because
        the resolver's route regex ends in ``$``, which lets ``acme\n`` through as ``acme``."""
        event = app.current_event
        caller = caller_from_claims(event.request_context.authorizer.claims)
        parameters = event.path_parameters or {}
        bad = [name for name, value in parameters.items() if not _ID_FORMATS.get(name, _NOTHING).fullmatch(value)]
        if bad:
            details = [
                {"loc": ["path", name], "message": "malformed identifier", "type": "string_pattern_mismatch"}
                for name in bad
            ]
            return error(422, "validation_error", "The request is not valid", details)
        logger.append_keys(**parameters, caller=caller.subject)
        authorize(caller, event.http_method, event.resource, parameters)
        app.append_context(caller=caller)
        return next_middleware(app)

    app.use(middlewares=[guard])
    return app


def created(app: APIGatewayRestResolver, body: Resource, path: str) -> Response:
    """201 with its ``ETag`` and a ``Location`` that keeps the stage prefix the client called through."""
    event = app.current_event
    called = event.request_context.path or event.path
    prefix = called[: len(called) - len(event.path)] if called.endswith(event.path) else ""
    return Response(201, content_types.APPLICATION_JSON, body, {"Location": prefix + path, **_etag(body)})


def create_once(
    app: APIGatewayRestResolver,
    idempotency_key: str | None,
    body: BaseModel,
    create: Callable[[], Resource],
    location: Callable[[Resource], str],
) -> Response:
    """201 for a new resource, once per Idempotency-Key: a retry replays the first response."""
    caller = current_caller(app)
    event = app.current_event
    partition = (event.path_parameters or {}).get("org_id", "operators")
    identity = {"caller": caller.subject, "route": f"{event.http_method} {event.path}"}

    def respond() -> Response:
        resource = create()
        return created(app, resource, location(resource))

    # Here, not at the top: Powertools' idempotency utility is only needed for a POST with a key.
    from controlplane import idempotency

    return idempotency.once(idempotency_key, partition, identity, body, respond, app.lambda_context)


def with_etag(body: BaseModel) -> Response:
    """200 with ``ETag: "<version>"`` when the body is one versioned resource."""
    return Response(200, content_types.APPLICATION_JSON, body, _etag(body) if isinstance(body, Resource) else {})


def _etag(resource: Resource) -> dict[str, str]:
    return {"ETag": f'"{resource.version}"'}


def expected_version(if_match: str | None) -> int | None:
    """The version an ``If-Match`` header names; None for no header or ``*`` (any version)."""
    if if_match is None or if_match.strip() == "*":
        return None
    tag = if_match.strip().removeprefix("W/").strip('"')
    if not tag.isdigit():
        raise PreconditionFailed('If-Match must be an ETag this API sent, e.g. "3"')
    return int(tag)


def current_caller(app: APIGatewayRestResolver) -> Caller:
    return app.context["caller"]


def no_content() -> Response:
    return Response(204, None, None)


def _parse_body(raw: str) -> Any:
    """The resolver's JSON parser, bounded: too big is 413, nested too deep is invalid JSON."""
    if len(raw) > MAX_BODY_BYTES:
        raise PayloadTooLarge(f"Request bodies are limited to {MAX_BODY_BYTES // 1024} KiB")
    try:
        return json.loads(raw)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", raw, 0) from None


def _request_id(app: APIGatewayRestResolver) -> str:
    try:
        return app.current_event.request_context.request_id or "unknown"
    except (AttributeError, KeyError):
        return "unknown"
