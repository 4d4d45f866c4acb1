"""What ``cpctl`` says on stderr when a command fails: the API's refusal, an API it cannot reach or
that does not answer in time (or only with API Gateway's 502 or 504), an answer that is not the
API's, and usage errors."""

import base64
import json
import time
from urllib.parse import urlsplit

import httpx
import pydantic

from controlplane.models.problems import field, plain
from cpctl.errors import ApiError, Interrupted, SessionEnded, Throttled, Unauthorized, UnexpectedAnswer
from cpctl.output import Output, complain
from cpctl.retries import NOT_SENT, quota_spent, refused

DAY_SECONDS = 86_400


def show_throttled(error: ApiError) -> None:
    """A 429: a rate (the org's, or the web ACL's for an address), still refused after the client's
    retries, or not retried at all when its wait would end past --timeout (the web ACL's 30 s, at
    the default --timeout of 30 s); or the org's daily quota, never retried. The quota comes back at midnight
    UTC, counted from the clock: the deployed API's Retry-After for it is a static 3600 (API
    Gateway's template cannot count the hours, ``infra.api``)."""
    if quota_spent(error):
        hours = round((DAY_SECONDS - time.time() % DAY_SECONDS) / 3600)
        when = f"in about {hours} hours" if hours > 1 else "within the hour" if hours < 1 else "in about an hour"
        complain(f"Error: throttled: {error.message}. The daily quota is spent: it comes back at midnight UTC, {when}.")
        return
    wait = error.headers.get("Retry-After", "a few")
    if error.attempts > 1:
        complain(f"Error: throttled: {error.message}. Still refused after retrying; try again in {wait} s.")
    else:
        complain(f"Error: throttled: {error.message}. Try again in {wait} s (a longer --timeout waits it out).")


def show_refusal(url: str, token: str, output: Output, error: ApiError) -> None:
    """The API's refusal (json: its error JSON as sent), said as what to do; then, for a change an
    attempt of which went unanswered, that it may have been made all the same, as after no answer."""
    if output is Output.json:
        show_api_error(output, error)
        return
    if isinstance(error, Unauthorized):
        show_unauthorized(url, token, error)
    elif isinstance(error, SessionEnded):  # the token's user or org is gone: say so, and how to sign in again
        show_session_ended(url, error)
    elif isinstance(error, Throttled):  # say which limit, and whether the client retried
        show_throttled(error)
    else:
        show_api_error(output, error)
    if error.maybe_made:
        _made_or_not(error.idempotency_key)


def show_api_error(output: Output, error: ApiError) -> None:
    """The API's refusal: its error JSON as sent (json), or a line with its code and request id, and
    a line per field that failed validation, as the API's ``details`` name them."""
    if output is Output.json and error.body:
        complain(error.body)
        return
    complain(f"Error: {error.code}: {error.message} (status {error.status}, request {error.request_id})")
    if isinstance(error.details, list):
        for problem in error.details:
            if isinstance(problem, dict):
                complain(f"  {field(problem.get('loc') or [])}: {problem.get('message')}")


def show_unauthorized(url: str, token: str, error: ApiError) -> None:
    """A 401, said as what to do: whether the token expired or is not valid, and how to get another."""
    state = "expired" if token_expired(token) else "is not valid"
    complain(f"Error: unauthorized: the token {state}. Get a new one: {_login_again(url)}")
    complain(f"  (status {error.status}, request {error.request_id})")


def show_session_ended(url: str, error: ApiError) -> None:
    """A 403 session_ended, said as what it means: the token's user or org was deleted, so this token
    will never work again, whatever the command; sign in as a user who exists."""
    complain(f"Error: session_ended: {error.message}. Its user or organization was deleted.")
    complain(f"  Sign in as a user who exists: {_login_again(url)}")
    complain(f"  (status {error.status}, request {error.request_id})")


def _login_again(url: str) -> str:
    local = urlsplit(url).hostname in ("127.0.0.1", "localhost", "::1")
    return (
        "cpctl login --local (an operator; --role admin|member --org ORG --user USER for others)"
        if local
        else "cpctl login --username USERNAME --client-id CLIENT_ID (Cognito sign-in)"
    )


def token_expired(token: str) -> bool:
    """Whether the token's ``exp`` has passed: read, not verified (the API verifies it)."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return float(claims["exp"]) < time.time()
    except (IndexError, ValueError, KeyError, TypeError):
        return False


def show_unreachable(url: str, error: httpx.TransportError, timeout: float) -> None:
    """No answer: nothing listens, or the connection failed before the request left; or the request
    was sent and no answer came, in time or at all (the connection closed: a proxy's reset), when
    whether a change was made is unknown (a create can be sent again with its key)."""
    if isinstance(error, NOT_SENT):
        reason = "nothing answers there (connection refused)" if refused(error) else str(error) or type(error).__name__
        complain(f"Error: cannot reach {url}: {reason}. Is the API running (make run)?")
        return
    request = error.request
    if isinstance(error, httpx.TimeoutException):
        complain(
            f"Error: no answer from {url} to {request.method} {request.url.path} in time: cpctl gives a request "
            f"at most {timeout:g} s (--timeout), its retries included."
        )
    else:
        reason = str(error).rstrip(".") or type(error).__name__
        complain(
            f"Error: no answer from {url} to {request.method} {request.url.path}: the connection ended ({reason})."
        )
    if request.method != "GET":
        _made_or_not(request.headers.get("Idempotency-Key"))


def show_interrupted(stopped: Interrupted) -> None:
    """Ctrl-C while a change was on its way: it may have been made, so say how to send it safely."""
    complain(f"Interrupted: {stopped.method} {stopped.path} was sent or about to be.")
    _made_or_not(stopped.idempotency_key)


def _made_or_not(idempotency_key: str | None) -> None:
    again = "look before sending it again"
    if idempotency_key:
        # Not "made once" outright: a user or an import keeps its answer for the key after its write,
        # and Lambda may end the request between the two (a 502 or 504): then the key replays nothing
        # (docs/API.md). An org, a unit or a ticket keeps it in the write that makes it.
        again = (
            f"send it again with --idempotency-key {idempotency_key}: the API makes it once, unless Lambda "
            "ended the request after making it (a 502 or 504): then an import is made again, and a user "
            "is 409 already_exists"
        )
    complain(f"  It may or may not have been made: {again}.")


def show_unexpected(url: str, error: UnexpectedAnswer) -> None:
    complain(f"Error: {error}. Is {url} the control-plane API?")


def show_usage_error(message: str) -> None:
    complain(f"Usage error: {message}")


def invalid_body(error: pydantic.ValidationError) -> str:
    """The problems the API's models found in a body (it is never sent): a line per field, in the
    API's own words."""
    return "\n".join(f"  {field(problem['loc'])}: {plain(dict(problem))}" for problem in error.errors())
