"""The resolver of the API functions: Powertools' REST resolver with our JSON body parser, the
error contract's exception handlers and the guard; and what a route function asks of it: to be
registered as its route record describes it, the caller, and a create that happens once per
Idempotency-Key."""

import json
from collections.abc import Callable
from typing import Any, TypeVar, cast

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from pydantic import BaseModel

from controlplane.http import routes
from controlplane.http.auth import Caller, authorizer_context
from controlplane.http.docs import responses
from controlplane.http.entry import LambdaHandler, admit, entry_point, unrouted
from controlplane.http.responses import Reply, cors, created, error_body, request_id
from controlplane.models.errors import ApiError, PayloadTooLarge, ServiceUnavailable, TooDeep, is_outage
from controlplane.models.problems import plain
from controlplane.models.resources import Resource
from controlplane.observability import logger

RouteFunction = TypeVar("RouteFunction", bound=Callable[..., Any])

# The largest body any route takes; each route's own limit (``Route.max_body``: 64 KiB, far above the
# largest valid ticket, except a user import's) is checked by the entry point, before this parser.
MAX_BODY_BYTES = max(route.max_body for route in routes.ROUTES)


class Resolver(APIGatewayRestResolver):
    def __init__(self) -> None:
        super().__init__(enable_validation=True, json_body_deserializer=_parse_body, cors=cors())
        self._answer_errors_in_the_contract()
        self.use(middlewares=[_guard])

    def operation(self, operation_id: str) -> Callable[[RouteFunction], RouteFunction]:
        """Register a route function as the table's record ``operation_id`` describes it."""
        route = routes.operation(operation_id)
        return self.route(
            route.rule,
            route.method,
            summary=route.summary,
            tags=[route.function],
            operation_id=operation_id,
            status_code=route.status,
            # Plain dicts: Powertools' OpenAPIResponseHeader has no ``required``, an OpenAPI header field we set.
            responses=cast(dict[int, OpenAPIResponse], responses(route)),
        )

    @property
    def caller(self) -> Caller:
        return cast(Caller, self.context["caller"])  # Powertools' context is untyped; the guard put it there

    def create_once(self, idempotency_key: str | None, body: BaseModel, create: Callable[[], Resource]) -> Reply:
        """201 for a new resource, once per Idempotency-Key: a retry replays the first response."""
        event = self.current_event
        partition = (event.path_parameters or {}).get("org_id", "operators")
        identity = {"caller": self.caller.subject, "route": f"{event.http_method} {event.path}"}

        def respond() -> Reply:
            return created(self, create())

        # Here, not at the top: Powertools' idempotency utility is only needed for a POST with a key.
        from controlplane.http import idempotency

        return idempotency.once(idempotency_key, partition, identity, body, respond, self.lambda_context)

    def entry_point(self, on_records: LambdaHandler | None = None) -> LambdaHandler:
        """The function's Lambda handler (see ``controlplane.http.entry``)."""
        return entry_point(self, on_records)

    def _answer_errors_in_the_contract(self) -> None:
        def error(
            status: int, code: str, message: str, details: Any = None, headers: dict[str, str] | None = None
        ) -> Reply:
            body = error_body(code, message, request_id(self.current_event.raw_event), details)
            return Response(status, content_types.APPLICATION_JSON, body, headers)

        # Powertools leaves its exception_handler decorator unannotated.
        @self.exception_handler(ApiError)  # type: ignore[untyped-decorator]
        def api_error(exc: ApiError) -> Reply:
            return error(exc.status, exc.code, exc.message, exc.details, exc.headers)

        @self.exception_handler(RequestValidationError)  # type: ignore[untyped-decorator]
        def invalid_request(exc: RequestValidationError) -> Reply:
            problems = exc.errors()
            if any(problem["type"] == "json_invalid" for problem in problems):
                return error(400, "invalid_json", "The request body is not valid JSON")
            details = [{"loc": list(p["loc"]), "message": plain(p), "type": p["type"]} for p in problems]
            return error(422, "validation_error", "The request is not valid", details)

        @self.exception_handler(RequestUnsupportedContentType)  # type: ignore[untyped-decorator]
        def unsupported_content_type(exc: RequestUnsupportedContentType) -> Reply:
            return error(415, "unsupported_media_type", "Send the body as application/json")

        @self.not_found
        def no_route(exc: NotFoundError) -> Reply:
            refused = unrouted(self.current_event.http_method, self.current_event.path)
            return error(refused.status, refused.code, refused.message, headers=refused.headers)

        @self.exception_handler(Exception)  # type: ignore[untyped-decorator]
        def unexpected(exc: Exception) -> Reply:
            if is_outage(exc):
                logger.warning("A service we depend on is unavailable", exc_info=exc)
                outage = ServiceUnavailable("A service this API depends on is unavailable; retry later")
                return error(outage.status, outage.code, outage.message, headers=outage.headers)
            logger.exception("Unhandled error")
            return error(500, "internal_error", "Something went wrong on our side")


def _guard(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Reply:
    """Every route the resolver matched is admitted here before it runs; one the table does not
    describe, for operators only. The entry point has already admitted the table's routes, before
    Powertools read the body."""
    event = app.current_event
    parameters = event.path_parameters or {}
    caller = admit(routes.find(event.http_method, event.resource), authorizer_context(event.raw_event), parameters)
    logger.append_keys(**parameters, caller=caller.subject)
    app.append_context(caller=caller)  # type: ignore[no-untyped-call]  # unannotated in Powertools
    return next_middleware(app)


def _parse_body(raw: str) -> Any:
    """The resolver's JSON parser, bounded: too big is 413, nested too deep is 400."""
    if len(raw) > MAX_BODY_BYTES:
        raise PayloadTooLarge(f"Request bodies are limited to {MAX_BODY_BYTES // 1024} KiB")
    try:
        return json.loads(raw)
    except RecursionError:
        raise TooDeep("The request body is nested too deeply") from None
