"""The one Lambda entry point of the API functions, and the admission it runs, once per request,
before Powertools sees it: is the path a route at all (404/405), who is calling (401), are the
path's ids well-formed (422), may they call this route here (403), and is the body JSON (415). The
route record and the caller it found go on the resolver's context, for the route to use."""

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, CORSConfig, content_types
from aws_lambda_powertools.utilities.typing import LambdaContext

from controlplane.http import json_body, routes
from controlplane.http.auth import authorizer_context, caller_from
from controlplane.http.errors import NOT_VALID, body_too_large, error_body, headers_of, send_as, status_of
from controlplane.http.responses import cors, request_id
from controlplane.logic.access import Caller, authorize
from controlplane.models.errors import ApiError, InvalidRequest, MethodNotAllowed, NotFound
from controlplane.models.ids import SLUG_PATTERN, ULID_PATTERN
from controlplane.models.problems import malformed
from controlplane.observability import logger, metrics, tracer

# A Lambda handler of ours: an event (an API Gateway request or queue records) in, a response out.
LambdaHandler = Callable[[dict[str, Any], LambdaContext], Mapping[str, Any]]

_ID_FORMATS = {
    "org_id": re.compile(SLUG_PATTERN),
    "user_id": re.compile(SLUG_PATTERN),
    "unit_id": re.compile(SLUG_PATTERN),
    "ticket_id": re.compile(ULID_PATTERN),
    "import_id": re.compile(ULID_PATTERN),
}
_NOTHING = re.compile(r"(?!)")
# Bodies are JSON; PATCH also takes JSON Merge Patch (RFC 7396), which is what our PATCH does.
_JSON_MEDIA_TYPES = {
    "": frozenset({content_types.APPLICATION_JSON}),
    "PATCH": frozenset({"application/merge-patch+json"}),
}


def admit(route: routes.Route | None, context: Mapping[str, Any] | None, path_ids: dict[str, str]) -> Caller:
    """Who is calling (401), are the path's ids well-formed (422), may the caller call ``route``
    here (403; no record means operators only). Reads nothing but the path and the authorizer's
    ``context``. Ids are
    checked whole because the resolver's route regex ends in ``$``, which lets ``acme\n`` through."""
    caller = caller_from(context)
    bad = [name for name, value in path_ids.items() if not _ID_FORMATS.get(name, _NOTHING).fullmatch(value)]
    if bad:
        details = [
            # The message a body's id of that type gets: one explanation of a bad id, wherever it is.
            {
                "loc": ["path", name],
                "message": malformed(_ID_FORMATS.get(name, _NOTHING).pattern),
                "type": "string_pattern_mismatch",
            }
            for name in bad
        ]
        raise InvalidRequest(NOT_VALID, details=details)
    authorize(caller, route.allow if route else None, path_ids)
    return caller


def entry_point(app: APIGatewayRestResolver, on_records: LambdaHandler | None = None) -> LambdaHandler:
    """The Lambda handler of a function: logger, tracer and metrics around the resolver. Before
    Powertools sees the request, its caller is admitted and the body's media type is checked, so who
    may call is answered before what they sent (Powertools validates the body before any middleware
    of ours could run, and offers no public hook ahead of it). A route the table does not describe is
    for operators only. ``on_records`` takes the function's queue events, if it has any."""
    cors_config = cors()

    @logger.inject_lambda_context(clear_state=True)
    @tracer.capture_lambda_handler
    @metrics.log_metrics
    def lambda_handler(event: dict[str, Any], context: LambdaContext) -> Mapping[str, Any]:
        # API Gateway's request id is the correlation id: read here rather than through the logger's
        # ``correlation_id_path``, a JMESPath search per request for one known key (none for records).
        logger.set_correlation_id((event.get("requestContext") or {}).get("requestId"))
        if on_records is not None and "Records" in event:
            return on_records(event, context)
        try:
            method, resource = event.get("httpMethod", ""), event.get("resource")
            route = routes.find(method, resource)
            if route is None and (resource is None or resource in routes.RESOURCES or resource.endswith("{proxy+}")):
                # Not a route of the table, so not one API Gateway would have sent: 404 or 405 for
                # everyone, whatever a handler may have registered there. (A greedy ``{proxy+}`` is
                # what SAM and the local gateway name a path that matched no resource.)
                raise unrouted(method, event.get("path") or "/")
            path_ids = event.get("pathParameters") or {}
            caller = admit(route, authorizer_context(event), path_ids)
            if route is not None and not route.takes_body:
                # Not read, so not judged either: a body of another media type, or too big for a body
                # route, is not a 415 or 413 here (the document gives neither); it is dropped.
                event = {**event, "body": None, "isBase64Encoded": False}
            if route is not None and json_body.size(event) > route.max_body:
                raise body_too_large(route.max_body)
            event = json_body.as_text(_accept_json_only(event))
        except ApiError as refused:
            return _refusal(event, refused, cors_config)
        logger.append_keys(**path_ids, caller=caller.subject)
        app.append_context(route=route, caller=caller)  # type: ignore[no-untyped-call]  # unannotated in Powertools
        return app.resolve(event, context)

    return lambda_handler


def unrouted(method: str, path: str) -> ApiError:
    """The error for a method and path that no route of the table matched."""
    allowed = routes.methods_for(path.strip("/").split("/"))
    if method in allowed:
        # The route exists but the resolver refused a segment (e.g. a "#"): a malformed id.
        return InvalidRequest(f"{path} contains a malformed identifier")
    if allowed:
        return MethodNotAllowed(f"{method} is not allowed on {path}", allowed)
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
        raise send_as(accepted)
    for mapping in (headers, multi):
        for name in [name for name in mapping if name.lower() == "content-type"]:
            del mapping[name]
    if event.get("body"):
        headers["Content-Type"] = content_types.APPLICATION_JSON
        multi["Content-Type"] = [content_types.APPLICATION_JSON]
    return {**event, "headers": headers, "multiValueHeaders": multi}


def _refusal(event: dict[str, Any], refused: ApiError, cors_config: CORSConfig | None) -> dict[str, Any]:
    """The error contract as a proxy response, for what the entry point refuses itself."""
    headers = {"Content-Type": content_types.APPLICATION_JSON, **headers_of(refused)}
    if cors_config is not None:
        origin = next((v for k, v in (event.get("headers") or {}).items() if k.lower() == "origin"), None)
        headers |= cors_config.to_dict(cors_config.allowed_origin(origin) if origin else None)
    body = error_body(refused.code, refused.message, request_id(event), refused.details)
    return {
        "statusCode": status_of(refused),
        "multiValueHeaders": {name: [value] for name, value in headers.items()},
        "body": json.dumps(body, separators=(",", ":")),  # the resolver's own style: one for every error
        "isBase64Encoded": False,
    }
