"""The OpenAPI documentation of each route's responses, derived from its record in the route table:
its success statuses with their bodies and headers, and the errors a route of its shape can return,
each in the error contract, with examples of its own codes (``examples``)."""

import typing
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import content_types

from controlplane.http import routes
from controlplane.http.examples import error_examples
from controlplane.models.error_body import ErrorResponse
from controlplane.models.resources import Page, Resource

_HEADERS: dict[str, dict[str, Any]] = {
    "ETag": {
        "description": 'The version of the resource, e.g. `"3"`: send it as If-Match',
        "schema": {"type": "string", "pattern": '^"[0-9]+"$'},
    },
    "Location": {"description": "The path of the new resource", "schema": {"type": "string"}},
    "Retry-After": {"description": "Seconds to wait before retrying", "schema": {"type": "integer"}},
}


def responses(route: routes.Route) -> dict[int, dict[str, Any]]:
    """The OpenAPI responses of a route, from its record: its success statuses with their bodies
    and headers, and the errors a route of its shape can return, each in the error contract."""
    page = route.model is not None and any(issubclass(m, Page) for m in _models(route.model))
    documented: dict[int, dict[str, Any]] = {
        status: {
            "description": HTTPStatus(status).phrase,
            "content": {
                content_types.APPLICATION_JSON: {
                    "model": ErrorResponse,
                    "examples": error_examples(route, status, page),
                }
            },
        }
        for status in sorted(error_statuses(route))
    }
    for busy in (429, 503):
        documented[busy]["headers"] = {"Retry-After": {**_HEADERS["Retry-After"], "required": True}}
    if "move_in_progress" in route.conflicts:
        # Only that 409 says when to retry; the route's others do not.
        documented[409]["headers"] = {"Retry-After": {**_HEADERS["Retry-After"], "required": False}}
    for status, model in route.successes.items():
        documented[status] = {"description": HTTPStatus(status).phrase}
        if model is not None:
            documented[status]["content"] = {content_types.APPLICATION_JSON: {"model": model}}
        if status == 201:
            documented[status]["headers"] = {
                name: {**_HEADERS[name], "required": True} for name in ("Location", "ETag")
            }
        elif status == 202 and route.location is not None:
            # A job the request started: where to follow it.
            documented[status]["headers"] = {"Location": {**_HEADERS["Location"], "required": True}}
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
    if route.takes_body:
        statuses |= {400, 413, 415}  # a body that is not JSON, too big, or of another media type
    if route.method == "POST" or route.seats or route.conflicts:
        statuses.add(409)  # already exists, the same Idempotency-Key still in flight, no seat left...
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
