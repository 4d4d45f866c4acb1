"""Turn an HTTP request into the API Gateway REST proxy event a deployed function receives, and
dispatch it to the function that the route table names. Used by the local gateway and the tests.
"""

import importlib
import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

from controlplane.routes import ROUTES, Route

STAGE = "local"


@dataclass
class LambdaContext:
    """The attributes of Lambda's context object that Powertools reads."""

    function_name: str
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    memory_limit_in_mb: int = 256
    invoked_function_arn: str = ""
    log_group_name: str = ""
    log_stream_name: str = ""

    def __post_init__(self):
        self.invoked_function_arn = f"arn:aws:lambda:us-east-1:000000000000:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return 29_000


def match(method: str, path: str) -> tuple[Route | None, dict[str, str]]:
    """The route for a concrete path, and its path parameters; API Gateway's own matching rules:
    a ``{param}`` matches one non-empty segment, a literal segment wins over a parameter."""
    segments = [unquote(s) for s in path.strip("/").split("/")]
    best: tuple[Route | None, dict[str, str]] = (None, {})
    for route in ROUTES:
        template = route.path.strip("/").split("/")
        if route.method != method or len(template) != len(segments):
            continue
        params = {}
        for t, s in zip(template, segments, strict=False):
            if t.startswith("{"):
                if not s:
                    break
                params[t[1:-1]] = s
            elif t != s:
                break
        else:
            if best[0] is None or len(params) < len(best[1]):
                best = (route, params)
    return best


def resource_for(path: str) -> str | None:
    """The API Gateway resource (``/orgs/{org_id}``) a concrete path belongs to, any method."""
    for method in {route.method for route in ROUTES}:
        route, _ = match(method, path)
        if route:
            return route.path
    return None


def build_event(
    method: str,
    path: str,
    *,
    query: dict[str, list[str]] | None = None,
    headers: dict[str, list[str]] | None = None,
    body: str | None = None,
    request_id: str | None = None,
    claims: dict[str, str] | None = None,
    stage_in_url: bool = True,
) -> dict[str, Any]:
    """The REST proxy event (payload 1.0) for one request, as ``sam local generate-event`` shapes it.

    ``claims`` are what the Cognito authorizer passes on for a verified token. ``stage_in_url``:
    the client called ``/<stage>/orgs`` on the execute-api host; False for a custom domain (and
    the local server), where the URL is just ``/orgs``.
    """
    route, params = match(method, path)
    headers = {name: values for name, values in (headers or {}).items()}
    query = query or {}
    request_id = request_id or str(uuid.uuid4())
    now = datetime.now(UTC)
    event = {
        "resource": route.path if route else (resource_for(path) or "/{proxy+}"),
        "path": path,
        "httpMethod": method,
        "headers": {name: values[-1] for name, values in headers.items()} or None,
        "multiValueHeaders": headers or None,
        "queryStringParameters": {name: values[-1] for name, values in query.items()} or None,
        "multiValueQueryStringParameters": query or None,
        "pathParameters": params or None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": route.path if route else path,
            "httpMethod": method,
            "path": f"/{STAGE}{path}" if stage_in_url else path,
            "stage": STAGE,
            "requestId": request_id,
            "extendedRequestId": request_id,
            "requestTime": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "requestTimeEpoch": int(now.timestamp() * 1000),
            "protocol": "HTTP/1.1",
            "accountId": "000000000000",
            "apiId": "local",
            "identity": {"sourceIp": "127.0.0.1", "userAgent": headers.get("User-Agent", [""])[-1]},
        },
        "body": body,
        "isBase64Encoded": False,
    }
    if claims is not None:
        event["requestContext"]["authorizer"] = {"claims": claims}
    return event


def handler_for(function: str):
    return importlib.import_module(f"{function}.handler").lambda_handler


def invoke(event: dict[str, Any]) -> dict[str, Any]:
    """Dispatch an event to its function, as API Gateway would; unknown paths go to the first function
    so the answer is the handlers' own JSON 404 (in the cloud, API Gateway's gateway response)."""
    route, _ = match(event["httpMethod"], event["path"])
    function = route.function if route else _function_for_path(event["path"])
    return handler_for(function)(event, LambdaContext(function_name=function))


def _function_for_path(path: str) -> str:
    resource = resource_for(path)
    return next((r.function for r in ROUTES if r.path == resource), ROUTES[0].function)


def request(method: str, path: str, body: Any = None, **kwargs) -> dict[str, Any]:
    """Convenience for tests and scripts: JSON-encode ``body`` and invoke."""
    raw = body if isinstance(body, str) or body is None else json.dumps(body)
    return invoke(build_event(method, path, body=raw, **kwargs))
