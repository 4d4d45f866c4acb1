"""API Gateway off the cloud, for the local gateway, the tests, the benchmarks and events/: the
REST proxy event a deployed function receives for an HTTP request, the claims of a caller's ID token,
the context the Lambda authorizer (functions/authorizer) passes on for them, and the call of the
function the route table names, with the headers of its answer.

Kept light (no token library, nothing of the test tools): the benchmarks' cold-start child imports it.
"""

import importlib
import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import Message
from typing import Any
from urllib.parse import unquote

from controlplane.http.routes import LAMBDA_PAYLOAD_BYTES, ROUTES, Route
from controlplane.logic.access import OPERATORS_GROUP

STAGE = "local"
OPERATOR = "operator"


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


def claims(role: str, org_id: str | None = None, user_id: str | None = None) -> dict[str, str]:
    """The claims of a Cognito ID token (beyond iss, aud, exp...) for an operator, or for ``user_id``
    of ``org_id`` with ``role``."""
    if role == OPERATOR:
        return {"sub": "local-operator", "cognito:username": OPERATOR, "cognito:groups": OPERATORS_GROUP}
    return {
        "sub": f"local-{org_id}-{user_id}",
        "cognito:username": f"{org_id}.{user_id}",
        "custom:org_id": org_id or "",
        "custom:user_id": user_id or "",
        "custom:role": role,
    }


def authorizer_context(
    role: str, org_id: str | None = None, user_id: str | None = None, plan: str = "free"
) -> dict[str, str]:
    """What the Lambda authorizer passes on in ``requestContext.authorizer`` (every value a string)
    for the token ``claims(role, org_id, user_id)`` of an active org on ``plan``; all but the user's
    ``user_created_at``, which only their item holds (without it, a member's tickets have no lower bound)."""
    if role == OPERATOR:
        return {"sub": "local-operator", "org_id": "", "user_id": "", "role": "", "groups": OPERATORS_GROUP, "plan": ""}
    token = claims(role, org_id, user_id)
    return {
        "sub": token["sub"],
        "org_id": org_id or "",
        "user_id": user_id or "",
        "role": role,
        "groups": "",
        "plan": plan,
    }


OPERATOR_CONTEXT = authorizer_context(OPERATOR)


# The routes by method and segment count, their templates split once: every request through the
# local gateway (and each call the benchmarks time) is matched against only the few that could fit.
_TEMPLATES: dict[tuple[str, int], list[tuple[Route, list[str]]]] = {}
for _route in ROUTES:
    _template = _route.path.strip("/").split("/")
    _TEMPLATES.setdefault((_route.method, len(_template)), []).append((_route, _template))


def match(method: str, path: str) -> tuple[Route | None, dict[str, str]]:
    """The route for a concrete path, and its path parameters; API Gateway's own matching rules:
    a ``{param}`` matches one non-empty segment, a literal segment wins over a parameter. A parameter
    is the segment as the client spelled it, as API Gateway's REST API passes it on (``ac%2Fme``
    stays ``ac%2Fme``, one segment): undecoded, like ``event.path``."""
    segments = path.strip("/").split("/")
    best: tuple[Route | None, dict[str, str]] = (None, {})
    for route, template in _TEMPLATES.get((method, len(segments)), ()):
        params = {}
        for t, s in zip(template, segments, strict=False):
            if t.startswith("{"):
                if not s:
                    break
                params[t[1:-1]] = s
            elif t != unquote(s):
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


# The stack's CORS preflight: infra/api.py gives every resource (each route's path, each path above
# one, the root) CDK's OPTIONS method, a mock integration that needs no token, spends no usage plan
# and runs no function; what infra/api.py does not set is CDK's default (tests/infra guard the copy).
PREFLIGHT_STATUS = 204
_PREFLIGHT_METHODS = "OPTIONS,GET,PUT,POST,DELETE,PATCH,HEAD"  # CDK's Cors.ALL_METHODS
_PREFLIGHT_HEADERS = (
    "Content-Type,X-Amz-Date,Authorization,X-Api-Key,X-Amz-Security-Token,X-Amz-User-Agent"  # Cors.DEFAULT_HEADERS
    ",If-Match,Idempotency-Key"  # the API's own: infra.constants.CORS_REQUEST_HEADERS
)
_RESOURCES = {tuple(t[:n]) for routes in _TEMPLATES.values() for _, t in routes for n in range(len(t) + 1)}


def preflight(path: str, asked: Message | dict[str, str], origins: list[str]) -> list[tuple[str, str]] | None:
    """The headers of the stack's answer to ``OPTIONS path`` with the request headers ``asked``, or None
    where API Gateway has no resource (so no OPTIONS method). ``origins`` are the functions' (the stack
    sets the console's first; none: the console's here, this server's): the asker's ``Origin`` is named
    if it is one of them, else the first, as CDK's response template does."""
    segments = tuple(unquote(s) for s in path.strip("/").split("/")) if path.strip("/") else ()
    if not any(
        len(t) == len(segments) and all(s if p.startswith("{") else p == s for p, s in zip(t, segments, strict=True))
        for t in _RESOURCES
    ):
        return None
    origins = origins or [f"http://{asked.get('Host')}"]
    return [
        ("Content-Type", "application/json"),
        ("Access-Control-Allow-Headers", _PREFLIGHT_HEADERS),
        ("Access-Control-Allow-Origin", origin if (origin := asked.get("Origin")) in origins else origins[0]),
        *([("Vary", "Origin")] if origins[0] != "*" else []),
        ("Access-Control-Allow-Methods", _PREFLIGHT_METHODS),
        ("x-amzn-RequestId", str(uuid.uuid4())),
    ]


def build_event(
    method: str,
    path: str,
    *,
    query: dict[str, Any] | None = None,
    headers: dict[str, Any] | None = None,
    body: Any = None,
    request_id: str | None = None,
    authorizer: dict[str, str] | None = None,
    stage_in_url: bool = True,
) -> dict[str, Any]:
    """The REST proxy event (payload 1.0) for one request, as ``sam local generate-event`` shapes it.

    ``query`` and ``headers`` values are a string or a list of them (repeated names). ``body`` is
    sent as is when it is a string, else as JSON. ``authorizer`` is the context the Lambda authorizer
    passes on for a token it allowed (None: no authorizer context). ``stage_in_url``: the client called
    ``/<stage>/orgs`` on the execute-api host; False for a custom domain (and the local server),
    where the URL is just ``/orgs``.
    """
    route, params = match(method, path)
    headers, query = _multi(headers), _multi(query)
    if body is not None and not isinstance(body, str):
        body = json.dumps(body)
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
    if authorizer is not None:
        # API Gateway adds the policy's principal (the token's sub) and the authorizer's latency.
        event["requestContext"]["authorizer"] = {
            **authorizer,
            "principalId": authorizer.get("sub", ""),
            "integrationLatency": 0,
        }
    return event


def outgrows_lambda(event: dict[str, Any]) -> bool:
    """Whether Lambda would refuse ``event``: more than a synchronous invoke's payload, as JSON, where the
    body is a string whose quotes and newlines take two bytes. Counted as UTF-8 text: whether API Gateway
    escapes the characters beyond ASCII is not documented."""
    return len(json.dumps(event, ensure_ascii=False).encode()) > LAMBDA_PAYLOAD_BYTES


def _multi(values: dict[str, Any] | None) -> dict[str, list[str]]:
    return {
        name: [str(v) for v in value] if isinstance(value, list) else [str(value)]
        for name, value in (values or {}).items()
    }


def handler_for(function: str):
    return importlib.import_module(f"{function}.handler").lambda_handler


def run(function: str, event: dict[str, Any]) -> Any:
    """Invoke a function's ``lambda_handler`` with any event (an SQS batch, say), as Lambda would."""
    return handler_for(function)(event, LambdaContext(function_name=function))


def invoke(event: dict[str, Any]) -> dict[str, Any]:
    """Dispatch an event to its function, as API Gateway would; unknown paths go to the first function
    so the answer is the handlers' own JSON 404 (in the cloud, API Gateway's gateway response)."""
    route, _ = match(event["httpMethod"], event["path"])
    return run(route.function if route else _function_for_path(event["path"]), event)


def response_headers(response: dict) -> list[tuple[str, str]]:
    """The headers API Gateway sends for a proxy answer: every value of multiValueHeaders, plus the
    headers it does not name."""
    multi = response.get("multiValueHeaders") or {}
    named = {name.lower() for name in multi}
    pairs = [(name, str(value)) for name, values in multi.items() for value in values]
    single = response.get("headers") or {}
    pairs += [(name, str(value)) for name, value in single.items() if name.lower() not in named]
    return pairs


def _function_for_path(path: str) -> str:
    resource = resource_for(path)
    return next((r.function for r in ROUTES if r.path == resource), ROUTES[0].function)


@dataclass
class Reply:
    """A proxy response, read as a client reads it: status, headers (the last of each), JSON body."""

    status: int
    headers: dict[str, str]
    body: Any

    @property
    def error_code(self) -> str | None:
        return (self.body or {}).get("error", {}).get("code") if isinstance(self.body, dict) else None


def call(method: str, path: str, body: Any = None, *, caller: dict | None = OPERATOR_CONTEXT, **options) -> Reply:
    """One request through its function, as ``caller`` (the authorizer's context; None for no
    token): an operator unless told. ``options`` are ``build_event``'s (query, headers, request_id...)."""
    return read(invoke(build_event(method, path, body=body, authorizer=caller, **options)))


def read(response: dict[str, Any]) -> Reply:
    """A proxy response as a client reads it."""
    headers = {name: values[-1] for name, values in (response.get("multiValueHeaders") or {}).items()}
    headers.update(response.get("headers") or {})
    raw = response.get("body")
    return Reply(response["statusCode"], headers, json.loads(raw) if raw else None)
