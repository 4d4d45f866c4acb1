"""The resolver of the API functions: Powertools' REST resolver with our JSON body parser and the
error contract's exception handlers; and what a route function asks of it: to be registered as its
route record describes it, the caller the entry point admitted, and a create that happens once per
Idempotency-Key."""

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.middlewares import openapi_validation
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from pydantic import BaseModel

from controlplane.dal.outage import is_outage
from controlplane.http import json_body, routes
from controlplane.http.docs import responses
from controlplane.http.entry import LambdaHandler, entry_point, unrouted
from controlplane.http.errors import (
    INTERNAL_ERROR,
    INVALID_JSON,
    NOT_A_PARAMETER,
    NOT_VALID,
    OUTAGE,
    STATUS,
    body_too_large,
    error_body,
    headers_of,
    send_as,
    status_of,
)
from controlplane.http.responses import Reply, cors, created, request_id, started
from controlplane.logic.access import Caller
from controlplane.models.errors import ApiError, InvalidRequest, MoveInProgress, ServiceUnavailable, TooDeep
from controlplane.models.problems import plain
from controlplane.models.resources import Resource
from controlplane.observability import logger

RouteFunction = TypeVar("RouteFunction", bound=Callable[..., Any])

# The largest body any route takes; each route's own limit (``Route.max_body``: 128 KiB, above the
# largest valid ticket however it is encoded, except a user import's) is checked by the entry point,
# before this parser.
_LARGEST_BODY = max(route.max_body for route in routes.ROUTES)


def _asked_once(question: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """``question`` answered once per parameter. Powertools' request validation asks of every query
    and header parameter, on every request, whether its annotation is a scalar: a walk of typing's
    generics, ~5 µs a parameter, whose answer is fixed when the route is registered."""
    answers: dict[int, tuple[Any, bool]] = {}

    def asked(field: Any) -> bool:
        known = answers.get(id(field))
        if known is None or known[0] is not field:  # keyed by identity: parameters are not hashable
            known = answers[id(field)] = (field, question(field))
        return known[1]

    return asked


# Powertools' middleware looks the function up by this module name on each call: patched there.
openapi_validation.is_scalar_field = _asked_once(openapi_validation.is_scalar_field)  # type: ignore[attr-defined,assignment]


def _refuse_query(names: list[str]) -> None:
    if names:
        details = [{"loc": ["query", name], "message": NOT_A_PARAMETER, "type": "extra_forbidden"} for name in names]
        raise InvalidRequest(NOT_VALID, details=details)


class Resolver(APIGatewayRestResolver):
    def __init__(self) -> None:
        super().__init__(enable_validation=True, json_body_deserializer=_parse_body, cors=cors())
        self._answer_errors_in_the_contract()

    def operation(self, operation_id: str) -> Callable[[RouteFunction], RouteFunction]:
        """Register a route function as the table's record ``operation_id`` describes it."""
        route = routes.operation(operation_id)
        register = self.route(
            route.rule,
            route.method,
            summary=route.summary,
            tags=[route.function],
            operation_id=operation_id,
            status_code=route.status,
            # Plain dicts: Powertools' OpenAPIResponseHeader has no ``required``, an OpenAPI header field we set.
            responses=cast(dict[int, OpenAPIResponse], responses(route)),
        )

        def registered(function: RouteFunction) -> RouteFunction:
            # Powertools reads the parameters and the return type through ``__wrapped__``.
            @functools.wraps(function)
            def answered(**parameters: Any) -> Any:
                self._refuse_unknown_query()
                try:
                    return function(**parameters)
                except MoveInProgress:
                    if not self._ran_an_abandoned_move():
                        raise
                return function(**parameters)

            register(answered)
            return function

        return registered

    def _ran_an_abandoned_move(self) -> bool:
        """A request refused by a move whose lock no run holds (an outage stopped it with no queue
        to go on, make run's; or its request died, anywhere) is asked again once this request has
        run the move on, within its own time (``logic.stopped_moves``); a live move's refusal
        stands. A request refused ``move_in_progress`` leaves nothing written (a unit's delete takes
        its mark back), so it may be asked again; each such route is an org's."""
        # Here, not at the top: only a refused request needs the move code.
        from controlplane.logic import stopped_moves

        return stopped_moves.run_stopped(self.current_event.path_parameters["org_id"], self.time_left)

    def time_left(self) -> float:
        """Seconds until Lambda ends this request."""
        return float(self.lambda_context.get_remaining_time_in_millis()) / 1000

    def _refuse_unknown_query(self) -> None:
        """422 for a query parameter the route does not take (``?include=users&cursor=...``, where
        ``cursor`` belongs to the list route, or a misspelt ``?limt=5``), as a body's unknown field
        is: a request is not answered as if part of it had not been sent. Powertools ignores them."""
        if given := self._query_names():
            # The parameters Powertools validated for this route: its route object, on the context key
            # Powertools' own ``app.request`` reads.
            known = {field.alias for field in self.context["_route"].dependant.query_params}
            _refuse_query([name for name in given if name not in known])

    def refuse_query(self, *names: str) -> None:
        """422 for each of ``names`` the query has: parameters of the route that this request, as a
        whole, does not take (``limit`` with no ``include=``: no page to size)."""
        _refuse_query([name for name in self._query_names() if name in names])

    def _query_names(self) -> list[str]:
        """The names the query has, in both forms, as Powertools reads the values from either
        (``resolved_query_string_parameters``)."""
        event = self.current_event
        single, multi = event.get("queryStringParameters"), event.get("multiValueQueryStringParameters")
        if not single and not multi:
            return []
        return list(dict.fromkeys([*(single or ()), *(multi or ())]))

    # Powertools' context is untyped; the entry point put the route and the caller there, once.
    @property
    def caller(self) -> Caller:
        return cast(Caller, self.context["caller"])

    @property
    def route_record(self) -> routes.Route | None:
        """The request's record in the route table (None for a route registered without one)."""
        return cast(routes.Route | None, self.context["route"])

    def create_once(self, idempotency_key: str | None, body: BaseModel, create: Callable[[], Resource]) -> Reply:
        """201 for a new resource, once per Idempotency-Key: a retry replays the first response."""

        route = self.route_record

        def answer(made: BaseModel) -> Reply:
            return created(self, route, cast(Resource, made))

        return self._once(idempotency_key, body, lambda: answer(create()), answer=answer)

    def start_once(
        self,
        idempotency_key: str | None,
        body: BaseModel,
        start: Callable[[], BaseModel],
        read: Callable[[str], BaseModel],
    ) -> Reply:
        """202 for a job (a user import), once per Idempotency-Key: a retry gets the first response
        with the job's body as ``read`` (by its ``import_id``) finds it now."""

        def respond() -> Reply:
            return started(self, self.route_record, start())

        return self._once(idempotency_key, body, respond, ("import_id", read))

    def _once(
        self,
        key: str | None,
        body: BaseModel,
        respond: Callable[[], Reply],
        slim: tuple[str, Callable[[str], BaseModel]] | None = None,
        answer: Callable[[BaseModel], Reply] | None = None,
    ) -> Reply:
        event = self.current_event
        org_id = (event.path_parameters or {}).get("org_id")
        identity = {"caller": self.caller.subject, "route": f"{event.http_method} {event.path}"}
        # Here, not at the top: Powertools' idempotency utility is only needed for a POST with a key.
        from controlplane.http import idempotency

        return idempotency.once(key, org_id, identity, body, respond, self.lambda_context, slim, answer)

    def entry_point(self, on_records: LambdaHandler | None = None) -> LambdaHandler:
        """The function's Lambda handler (see ``controlplane.http.entry``)."""
        return entry_point(self, on_records)

    def _answer_errors_in_the_contract(self) -> None:
        def error(code: str, message: str, details: Any = None, headers: dict[str, str] | None = None) -> Reply:
            body = error_body(code, message, request_id(self.current_event.raw_event), details)
            return Response(STATUS[code], content_types.APPLICATION_JSON, body, headers)

        def refusal(refused: ApiError) -> Reply:
            body = error_body(refused.code, refused.message, request_id(self.current_event.raw_event), refused.details)
            return Response(status_of(refused), content_types.APPLICATION_JSON, body, headers_of(refused))

        # Powertools leaves its exception_handler decorator unannotated.
        @self.exception_handler(ApiError)  # type: ignore[untyped-decorator]
        def api_error(exc: ApiError) -> Reply:
            return refusal(exc)

        @self.exception_handler(RequestValidationError)  # type: ignore[untyped-decorator]
        def invalid_request(exc: RequestValidationError) -> Reply:
            problems = exc.errors()
            if any(problem["type"] == "json_invalid" for problem in problems):
                return error("invalid_json", INVALID_JSON)
            details = [{"loc": list(p["loc"]), "message": _said(p), "type": p["type"]} for p in problems]
            return error("validation_error", NOT_VALID, details)

        @self.exception_handler(RequestUnsupportedContentType)  # type: ignore[untyped-decorator]
        def unsupported_content_type(exc: RequestUnsupportedContentType) -> Reply:
            return refusal(send_as())

        @self.not_found
        def no_route(exc: NotFoundError) -> Reply:
            return refusal(unrouted(self.current_event.http_method, self.current_event.path))

        @self.exception_handler(Exception)  # type: ignore[untyped-decorator]
        def unexpected(exc: Exception) -> Reply:
            if is_outage(exc):
                logger.warning("A service we depend on is unavailable", exc_info=exc)
                return refusal(ServiceUnavailable(OUTAGE))
            logger.exception("Unhandled error")
            return error("internal_error", INTERNAL_ERROR)


def _said(problem: Any) -> str:
    """A validation problem in plain words. A name repeated in the query string or the headers comes
    as a list of its values, which no parameter takes: "Input should be a valid integer" for
    ``?limit=5&limit=10`` would blame values that are each valid."""
    given = problem.get("input")
    if tuple(problem["loc"])[:1] in (("query",), ("header",)) and isinstance(given, list):
        return f"given {len(given)} times; send it once"
    return plain(problem)


def _parse_body(raw: str) -> Any:
    """The resolver's JSON parser, bounded and strict: too big is 413, nested too deep, not UTF-8 or
    with a repeated name is 400 (``json_body``)."""
    if len(raw) > _LARGEST_BODY:
        raise body_too_large(_LARGEST_BODY)
    try:
        return json_body.loads(raw)
    except RecursionError:
        raise TooDeep(json_body.TOO_DEEP) from None
