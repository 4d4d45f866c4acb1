"""HTTP glue shared by the three handlers: their one Lambda entry point, the resolver, route
registration from the route table, typed parameters, the guard and the error contract.

Every error leaves as ``{"error": {"code", "message", "request_id"[, "details"]}}``.
"""

import json
import os
import re
import typing
from collections.abc import Callable, Mapping
from http import HTTPStatus
from typing import Annotated, Any, Literal, TypeVar, cast

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, CORSConfig, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.event_handler.openapi.params import Header, Path, Query
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel

from controlplane.http import routes
from controlplane.http.auth import Caller, authorize, authorizer_context, caller_from
from controlplane.models.errors import (
    ApiError,
    InvalidRequest,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    PreconditionFailed,
    ServiceUnavailable,
    TooDeep,
    UnsupportedMediaType,
    is_outage,
)
from controlplane.models.ids import SLUG_PATTERN, ULID_PATTERN
from controlplane.models.resources import ErrorResponse, Page, Resource
from controlplane.observability import logger, metrics, tracer

# What the handlers answer: bodies are models, error dicts or nothing, so Any.
Reply = Response[Any]
RouteFunction = TypeVar("RouteFunction", bound=Callable[..., Any])
# A Lambda handler of ours: an event (an API Gateway request or queue records) in, a response out.
LambdaHandler = Callable[[dict[str, Any], LambdaContext], Mapping[str, Any]]

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
IncludeUsers = Annotated[
    Literal["users"] | None,
    Query(description="`users`: the org comes with its first `limit` users, and `next_cursor` goes on from there"),
]
IncludeTickets = Annotated[
    Literal["tickets"] | None,
    Query(description="`tickets`: the user comes with their newest `limit` tickets; `next_cursor` goes on"),
]
IfMatch = Annotated[
    str | None,
    Header(
        alias="If-Match", description='The `ETag` you last read, e.g. `"3"`: the change applies only to that version'
    ),
]

_HEADERS: dict[str, dict[str, Any]] = {
    "ETag": {
        "description": 'The version of the resource, e.g. `"3"`: send it as If-Match',
        "schema": {"type": "string"},
    },
    "Location": {"description": "The path of the new resource", "schema": {"type": "string"}},
    "Retry-After": {"description": "Seconds to wait before retrying", "schema": {"type": "integer"}},
}


def _error_example(code: str, message: str, details: Any = None) -> dict[str, Any]:
    body = {"code": code, "message": message, "request_id": "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"}
    return {"error": body | ({"details": details} if details is not None else {})}


# The 409s of a write that takes or resizes an org's seats.
QUOTA_CONFLICTS = {
    "quota_exceeded": {
        "summary": "The org's plan has no seat left (or, on a plan change, fewer seats than users)",
        "value": _error_example(
            "quota_exceeded",
            "The free plan allows 5 users and the organization has 5",
            {"quota": "users", "limit": 5, "used": 5, "plan": "free"},
        ),
    },
    "already_exists": {
        "summary": "The resource already exists",
        "value": _error_example("already_exists", "User alice already exists in organization acme"),
    },
}


def responses(route: routes.Route) -> dict[int, dict[str, Any]]:
    """The OpenAPI responses of a route, from its record: its success statuses with their bodies
    and headers, and the errors a route of its shape can return, each in the error contract."""
    documented: dict[int, dict[str, Any]] = {
        status: {
            "description": HTTPStatus(status).phrase,
            "content": {content_types.APPLICATION_JSON: {"model": ErrorResponse}},
        }
        for status in sorted(error_statuses(route))
    }
    documented[503]["headers"] = {"Retry-After": {**_HEADERS["Retry-After"], "required": True}}
    if route.seats:
        documented[409]["content"][content_types.APPLICATION_JSON]["examples"] = QUOTA_CONFLICTS
    for status, model in route.successes.items():
        documented[status] = {"description": HTTPStatus(status).phrase}
        if model is not None:
            documented[status]["content"] = {content_types.APPLICATION_JSON: {"model": model}}
        if status == 201:
            documented[status]["headers"] = {
                name: {**_HEADERS[name], "required": True} for name in ("Location", "ETag")
            }
        elif model is not None and _versioned(model):
            # Sent with one versioned resource; not with a page, or a resource with its children.
            documented[status]["headers"] = {"ETag": {**_HEADERS["ETag"], "required": _versioned(model, every=True)}}
    return documented


def error_statuses(route: routes.Route) -> set[int]:
    """What a route of this shape can answer besides success. Every route: no or a bad token (401),
    not allowed (403), malformed parameters (422), API Gateway's throttling (429), our bug (500),
    a dependency's outage (503)."""
    statuses = {401, 403, 422, 429, 500, 503}
    if "{" in route.path:
        statuses.add(404)  # a missing org, user or ticket
    if route.method in ("POST", "PATCH"):
        statuses |= {400, 413, 415}  # a body that is not JSON, too big, or of another media type
    if route.method == "POST" or route.seats:
        statuses.add(409)  # already exists, the same Idempotency-Key still in flight, no seat left
    if route.method in ("PATCH", "DELETE"):
        statuses.add(412)  # If-Match names an older version
    if route.model is not None and any(issubclass(m, Page) for m in _models(route.model)):
        statuses.add(400)  # a cursor that is malformed or of another list
    return statuses


def _models(model: Any) -> tuple[type, ...]:
    return typing.get_args(model) or (model,)


def _versioned(model: Any, every: bool = False) -> bool:
    found = [issubclass(m, Resource) for m in _models(model)]
    return all(found) if every else any(found)


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
# Bodies are JSON; PATCH also takes JSON Merge Patch (RFC 7396), which is what our PATCH does.
_JSON_MEDIA_TYPES = {
    "": frozenset({content_types.APPLICATION_JSON}),
    "PATCH": frozenset({"application/merge-patch+json"}),
}


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


def _error_body(code: str, message: str, request_id: str, details: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message, "request_id": request_id}
    if details is not None:
        body["details"] = details
    return {"error": body}


def admit(route: routes.Route | None, context: Mapping[str, Any] | None, path_ids: dict[str, str]) -> Caller:
    """Who is calling (401), are the path's ids well-formed (422), may the caller call ``route``
    here (403; no record means operators only). Reads nothing but the path and the authorizer's
    ``context``. Ids are
    checked whole because the resolver's route regex ends in ``$``, which lets ``acme\n`` through."""
    caller = caller_from(context)
    bad = [name for name, value in path_ids.items() if not _ID_FORMATS.get(name, _NOTHING).fullmatch(value)]
    if bad:
        details = [
            {"loc": ["path", name], "message": "malformed identifier", "type": "string_pattern_mismatch"}
            for name in bad
        ]
        raise InvalidRequest("The request is not valid", details=details)
    authorize(caller, route.allow if route else None, path_ids)
    return caller


def create_app() -> APIGatewayRestResolver:
    app = APIGatewayRestResolver(enable_validation=True, json_body_deserializer=_parse_body, cors=_cors())

    def error(
        status: int, code: str, message: str, details: Any = None, headers: dict[str, str] | None = None
    ) -> Reply:
        body = _error_body(code, message, _request_id(app.current_event.raw_event), details)
        return Response(status, content_types.APPLICATION_JSON, body, headers)

    # Powertools leaves its exception_handler decorator unannotated.
    @app.exception_handler(ApiError)  # type: ignore[untyped-decorator]
    def api_error(exc: ApiError) -> Reply:
        return error(exc.status, exc.code, exc.message, exc.details, exc.headers)

    @app.exception_handler(RequestValidationError)  # type: ignore[untyped-decorator]
    def invalid_request(exc: RequestValidationError) -> Reply:
        problems = exc.errors()
        if any(problem["type"] == "json_invalid" for problem in problems):
            return error(400, "invalid_json", "The request body is not valid JSON")
        details = [{"loc": list(p["loc"]), "message": p["msg"], "type": p["type"]} for p in problems]
        return error(422, "validation_error", "The request is not valid", details)

    @app.exception_handler(RequestUnsupportedContentType)  # type: ignore[untyped-decorator]
    def unsupported_content_type(exc: RequestUnsupportedContentType) -> Reply:
        return error(415, "unsupported_media_type", "Send the body as application/json")

    @app.not_found
    def no_route(exc: NotFoundError) -> Reply:
        unrouted = _unrouted(app.current_event.http_method, app.current_event.path)
        return error(unrouted.status, unrouted.code, unrouted.message, headers=unrouted.headers)

    @app.exception_handler(Exception)  # type: ignore[untyped-decorator]
    def unexpected(exc: Exception) -> Reply:
        if is_outage(exc):
            logger.warning("A service we depend on is unavailable", exc_info=exc)
            outage = ServiceUnavailable("A service this API depends on is unavailable; retry later")
            return error(outage.status, outage.code, outage.message, headers=outage.headers)
        logger.exception("Unhandled error")
        return error(500, "internal_error", "Something went wrong on our side")

    def guard(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Reply:
        """Every route the resolver matched is admitted here before it runs; one the table does not
        describe, for operators only. The entry point has already admitted the table's routes, before
        Powertools read the body."""
        event = app.current_event
        parameters = event.path_parameters or {}
        caller = admit(routes.find(event.http_method, event.resource), authorizer_context(event.raw_event), parameters)
        logger.append_keys(**parameters, caller=caller.subject)
        app.append_context(caller=caller)  # type: ignore[no-untyped-call]  # unannotated in Powertools
        return next_middleware(app)

    app.use(middlewares=[guard])
    return app


def operation(app: APIGatewayRestResolver, operation_id: str) -> Callable[[RouteFunction], RouteFunction]:
    """Register a route function as the table's record ``operation_id`` describes it."""
    route = routes.operation(operation_id)
    return app.route(
        route.rule,
        route.method,
        summary=route.summary,
        tags=[route.function],
        operation_id=operation_id,
        status_code=route.status,
        # Plain dicts: Powertools' OpenAPIResponseHeader has no ``required``, an OpenAPI header field we set.
        responses=cast(dict[int, OpenAPIResponse], responses(route)),
    )


def entry_point(app: APIGatewayRestResolver, on_records: LambdaHandler | None = None) -> LambdaHandler:
    """The Lambda handler of a function: logger, tracer and metrics around the resolver. Before
    Powertools sees the request, a route of the table admits its caller and the body's media type is
    checked, so who may call is answered before what they sent (Powertools validates the body before
    any middleware of ours could run, and offers no public hook ahead of it). ``on_records`` takes
    the function's queue events, if it has any."""
    cors = _cors()

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True)
    @tracer.capture_lambda_handler
    @metrics.log_metrics
    def lambda_handler(event: dict[str, Any], context: LambdaContext) -> Mapping[str, Any]:
        if on_records is not None and "Records" in event:
            return on_records(event, context)
        try:
            method, resource = event.get("httpMethod", ""), event.get("resource")
            route = routes.find(method, resource)
            if route is not None:
                admit(route, authorizer_context(event), event.get("pathParameters") or {})
            elif resource is None or resource in routes.RESOURCES or resource.endswith("{proxy+}"):
                # Not a route of the table, so not one API Gateway would have sent: 404 or 405 for
                # everyone, whatever a handler may have registered there. (A greedy ``{proxy+}`` is
                # what SAM and the local gateway name a path that matched no resource.)
                raise _unrouted(method, event.get("path") or "/")
            event = _accept_json_only(event)
        except ApiError as refused:
            return _refusal(event, refused, cors)
        return app.resolve(event, context)

    return lambda_handler


def _unrouted(method: str, path: str) -> ApiError:
    allowed = routes.methods_for(path.strip("/").split("/"))
    if method in allowed:
        # The route exists but the resolver refused a segment (e.g. a "#"): a malformed id.
        return InvalidRequest(f"{path} contains a malformed identifier")
    if allowed:
        return MethodNotAllowed(f"{method} is not allowed on {path}", headers={"Allow": ", ".join(allowed)})
    return NotFound(f"No route for {method} {path}")


def _accept_json_only(event: dict[str, Any]) -> dict[str, Any]:
    """415 for a body of another media type, before Powertools tries it as a form (its multipart
    parser raises a bare ValueError, a 500, when the boundary is missing). A JSON media type, in any
    case and with parameters, is handed on as the plain ``application/json`` Powertools looks for."""
    headers = dict(event.get("headers") or {})
    multi = dict(event.get("multiValueHeaders") or {})
    given = [v for n, v in headers.items() if n.lower() == "content-type"]
    given += [vs[-1] for n, vs in multi.items() if n.lower() == "content-type" and vs]
    if not given:
        return event
    accepted = _JSON_MEDIA_TYPES[""] | _JSON_MEDIA_TYPES.get(event.get("httpMethod", ""), frozenset())
    if event.get("body") and given[0].split(";")[0].strip().lower() not in accepted:
        raise UnsupportedMediaType(f"Send the body as {' or '.join(sorted(accepted))}")
    for mapping in (headers, multi):
        for name in [name for name in mapping if name.lower() == "content-type"]:
            del mapping[name]
    if event.get("body"):
        headers["Content-Type"] = content_types.APPLICATION_JSON
        multi["Content-Type"] = [content_types.APPLICATION_JSON]
    return {**event, "headers": headers, "multiValueHeaders": multi}


def _refusal(event: dict[str, Any], refused: ApiError, cors: CORSConfig | None) -> dict[str, Any]:
    """The error contract as a proxy response, for what the entry point refuses itself."""
    headers = {"Content-Type": content_types.APPLICATION_JSON, **refused.headers}
    if cors is not None:
        origin = next((v for k, v in (event.get("headers") or {}).items() if k.lower() == "origin"), None)
        headers |= cors.to_dict(cors.allowed_origin(origin) if origin else None)
    body = _error_body(refused.code, refused.message, _request_id(event), refused.details)
    return {
        "statusCode": refused.status,
        "multiValueHeaders": {name: [value] for name, value in headers.items()},
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }


def created(app: APIGatewayRestResolver, body: Resource) -> Reply:
    """201 with its ``ETag`` and a ``Location``, the route record's, filled from the new resource and
    with the stage prefix the client called through."""
    event = app.current_event
    route = routes.find(event.http_method, event.resource)
    if route is None or route.location is None:
        raise LookupError(f"{event.http_method} {event.resource} has no location in the route table")
    called = event.request_context.path or event.path
    prefix = called[: len(called) - len(event.path)] if called.endswith(event.path) else ""
    location = prefix + route.location.format(**body.model_dump())
    return Response(201, content_types.APPLICATION_JSON, body, {"Location": location, **_etag(body)})


def create_once(
    app: APIGatewayRestResolver, idempotency_key: str | None, body: BaseModel, create: Callable[[], Resource]
) -> Reply:
    """201 for a new resource, once per Idempotency-Key: a retry replays the first response."""
    caller = current_caller(app)
    event = app.current_event
    partition = (event.path_parameters or {}).get("org_id", "operators")
    identity = {"caller": caller.subject, "route": f"{event.http_method} {event.path}"}

    def respond() -> Reply:
        return created(app, create())

    # Here, not at the top: Powertools' idempotency utility is only needed for a POST with a key.
    from controlplane.http import idempotency

    return idempotency.once(idempotency_key, partition, identity, body, respond, app.lambda_context)


def with_etag(body: BaseModel) -> Reply:
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
    return cast(Caller, app.context["caller"])  # Powertools' context is untyped; the guard put it there


def no_content() -> Reply:
    return Response(204, None, None)


def _parse_body(raw: str) -> Any:
    """The resolver's JSON parser, bounded: too big is 413, nested too deep is 400."""
    if len(raw) > MAX_BODY_BYTES:
        raise PayloadTooLarge(f"Request bodies are limited to {MAX_BODY_BYTES // 1024} KiB")
    try:
        return json.loads(raw)
    except RecursionError:
        raise TooDeep("The request body is nested too deeply") from None


def _request_id(event: dict[str, Any]) -> str:
    return (event.get("requestContext") or {}).get("requestId") or "unknown"
