"""What the routes answer: a new resource (201, ``Location``, ``ETag``), a versioned resource with
its ``ETag`` (and the version an ``If-Match`` asks for), nothing (204), accepted work (202); and the
CORS headers every response carries when origins are configured. Errors are ``errors``'.
"""

import re
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, CORSConfig, Response, content_types
from pydantic import BaseModel

from controlplane import config
from controlplane.http import routes
from controlplane.models.errors import PreconditionFailed
from controlplane.models.resources import Resource

# What the handlers answer: bodies are models, error dicts or nothing, so Any.
Reply = Response[Any]
_VERSION = re.compile(r"[0-9]{1,18}")


def created(app: APIGatewayRestResolver, route: routes.Route | None, body: Resource) -> Reply:
    """201 with its ``ETag`` and a ``Location``, the route record's, filled from the new resource and
    with the stage prefix the client called through."""
    location = _location(app, route, body)
    return Response(201, content_types.APPLICATION_JSON, body, {"Location": location, **_etag(body)})


def _location(app: APIGatewayRestResolver, route: routes.Route | None, body: BaseModel) -> str:
    event = app.current_event
    if route is None or route.location is None:
        raise LookupError(f"{event.http_method} {event.resource} has no location in the route table")
    called = event.request_context.path or event.path
    prefix = called[: len(called) - len(event.path)] if called.endswith(event.path) else ""
    return prefix + route.location.format(**body.model_dump())


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
    # ASCII digits only (str.isdigit also takes "²"), and no more than a version can have: a longer
    # number names no version, and would not fit a DynamoDB number.
    if not _VERSION.fullmatch(tag):
        raise PreconditionFailed('If-Match must be an ETag this API sent, e.g. "3"')
    return int(tag)


def accepted(body: BaseModel) -> Reply:
    """202: the work has begun and goes on after the response."""
    return Response(202, content_types.APPLICATION_JSON, body)


def started(app: APIGatewayRestResolver, route: routes.Route | None, body: BaseModel) -> Reply:
    """202 for a job the request created, with the ``Location`` to follow it (the route record's)."""
    return Response(202, content_types.APPLICATION_JSON, body, {"Location": _location(app, route, body)})


def no_content() -> Reply:
    return Response(204, None, None)


def request_id(event: dict[str, Any]) -> str:
    return (event.get("requestContext") or {}).get("requestId") or "unknown"


def cors() -> CORSConfig | None:
    """Browsers read a response only if it names their origin. API Gateway answers the preflight;
    the actual responses carry the header from here. The origins are the stage's (``config``)."""
    origins = config.cors_allow_origins()
    if not origins:
        return None
    return CORSConfig(
        allow_origin=origins[0],
        extra_origins=origins[1:],
        allow_headers=["Authorization", "Content-Type", "If-Match", "Idempotency-Key"],
        expose_headers=["ETag", "Location", "Retry-After"],
    )
