"""The local gateway's authorizer step, as API Gateway runs a TOKEN authorizer: a header that fails
the identity validation expression (authorizer.token_format) is 401 without a call; otherwise the
same functions/authorizer handler, called with the event API Gateway sends, its decision cached per
Authorization header for AUTHORIZER_TTL_SECONDS (60 by default, as the stack's
``authorizer_ttl_seconds``), and its refusals answered as the stack's gateway responses do:
UNAUTHORIZED 401 (one message, whatever the reason, as API Gateway's), ACCESS_DENIED 403 with the
authorizer's code and message, AUTHORIZER_FAILURE 503.

The cache is dropped whenever a lifecycle event that changes access is published
(``on_events``, controlplane.lifecycle.access), as functions/revocations flushes the stage's cache in
the cloud: ``make run`` reads the table's stream every half second, so within a second. A decision
that was being made when the cache dropped answers its own request but is not cached: its read may
predate the change.
"""

import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

from local.apigw import STAGE, LambdaContext

DEFAULT_TTL_SECONDS = 60
FAILURE_MESSAGE = "The API cannot check your token right now; retry later"
RETRY_AFTER_SECONDS = 1
_METHOD_ARN = "arn:aws:execute-api:us-east-1:000000000000:local/{stage}/{method}{path}"


@dataclass(frozen=True)
class Refusal:
    """A gateway response instead of the function: status, error code, message and extra headers."""

    status: int
    code: str
    message: str
    headers: tuple[tuple[str, str], ...] = ()


class Authorizer:
    def __init__(self, unauthorized_message: str, ttl_seconds: float | None = None) -> None:
        self.unauthorized_message = unauthorized_message
        self._ttl = ttl_seconds
        self._cache: dict[str, tuple[float, dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self.invocations = 0  # how often the handler ran: the tests' view of the cache
        self.flushes = 0

    @property
    def ttl(self) -> float:
        """Read when used, so a test or the shell can set AUTHORIZER_TTL_SECONDS after import."""
        return float(os.environ.get("AUTHORIZER_TTL_SECONDS", DEFAULT_TTL_SECONDS)) if self._ttl is None else self._ttl

    def decide(self, authorization: str | None, method: str, path: str) -> dict[str, Any] | Refusal:
        """The context the function receives in ``requestContext.authorizer``, or the refusal.
        Without the header, API Gateway answers 401 without calling the authorizer."""
        from authorizer.token_format import well_formed

        if not well_formed(authorization or ""):  # API Gateway's own refusal: the Lambda is not called
            return Refusal(401, "unauthorized", self.unauthorized_message)
        policy = self._policy(authorization or "", method, path)
        if isinstance(policy, Refusal):
            return policy
        context = {name: str(value) for name, value in (policy.get("context") or {}).items()}
        [statement] = policy["policyDocument"]["Statement"]
        if statement["Effect"] != "Allow":
            return Refusal(403, context.get("error_code") or "forbidden", context.get("error_message") or "Forbidden")
        return {**context, "principalId": policy["principalId"], "integrationLatency": 0}

    def _policy(self, authorization: str, method: str, path: str) -> dict[str, Any] | Refusal:
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(authorization)
            flushes = self.flushes
        if cached and cached[0] > now:
            return cached[1]
        from authorizer.handler import lambda_handler  # the deployed code, imported on first use

        event = {
            "type": "TOKEN",
            "authorizationToken": authorization,
            "methodArn": _METHOD_ARN.format(stage=STAGE, method=method, path=path),
        }
        self.invocations += 1
        try:
            policy = lambda_handler(event, LambdaContext(function_name="authorizer"))
        except Exception as error:
            if str(error) == "Unauthorized":  # not cached, as API Gateway does not cache a 401
                return Refusal(401, "unauthorized", self.unauthorized_message)
            logging.getLogger("local.authorizer").warning("The authorizer failed: %r", error)
            return Refusal(503, "service_unavailable", FAILURE_MESSAGE, (("Retry-After", str(RETRY_AFTER_SECONDS)),))
        if self.ttl > 0:
            with self._lock:
                # A flush while it was being decided: its read may be older than the change that
                # flushed, so it answers this request only and is decided again on the next.
                if self.flushes == flushes:
                    self._cache[authorization] = (now + self.ttl, policy)
        return policy

    def trust(self, jwks_url: str) -> None:
        """Have the authorizer trust local tokens (``make token``'s) from the JWKS at ``jwks_url``,
        with nothing fetched or cached yet."""
        from authorizer import handler
        from local import tokens

        os.environ.update(tokens.environment(jwks_url))
        handler.reset()
        self.clear()

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()
            self.flushes += 1

    def on_events(self, entries: list[dict[str, Any]]) -> None:
        """The bus published ``entries`` (PutEvents entries): flush if one of them changes access."""
        from controlplane.lifecycle.access import ACCESS_CHANGES

        if any(entry.get("DetailType") in ACCESS_CHANGES for entry in entries):
            self.clear()


def _sign_in_message() -> str:
    """Every 401's message (the functions' and the stack's UNAUTHORIZED gateway response)."""
    from controlplane.models.errors import UNAUTHORIZED_MESSAGE

    return UNAUTHORIZED_MESSAGE


# The authorizer's 401 in make run's gateway, with how to get a token here.
UNAUTHORIZED = (
    f'{_sign_in_message()}. Locally: OPS=$(make -s token), then -H "Authorization: Bearer $OPS" '
    "(make tokens prints one per role of the demo org)"
)
AUTHORIZER = Authorizer(UNAUTHORIZED)  # functions/authorizer, called and cached as API Gateway does
