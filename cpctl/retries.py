"""When the client sends a request again, and how long it waits first.

A ``429`` or ``503`` is retried after ``Retry-After`` seconds (bounded). A create carries an
``Idempotency-Key``, so it may be sent again after a ``409 conflict`` (the first request with that
key is still running) or a lost connection; a ``409 move_in_progress`` changed nothing, so any request
is sent again after its ``Retry-After``: the API creates once however often it is sent. Other
requests are sent again only when they are GETs.

Each attempt has a bound (``attempt_timeout``), and the whole request another (``TOTAL_SECONDS``, the
client's ``timeout``, ``cpctl --timeout``): a wait that would end past it is not made, and the last
error is raised instead. A server that takes the request and never answers is given up on after
``WRITE_SECONDS`` for a change, which is not sent again unless it carries an ``Idempotency-Key``.
API Gateway's ``504`` (its 29 s integration timeout) is no answer too: the function runs on and may
still make the change, so it is sent again on the same terms. So is its ``502``: the function was
invoked and gave no answer, as Lambda ended it (its 28 s timeout, ``infra.constants.TIMEOUT``, comes
before API Gateway's 29 s) or it crashed, maybe after it wrote.
"""

import time
from contextlib import suppress
from email.utils import parsedate_to_datetime

import httpx

from cpctl.errors import ApiError, Conflict, MoveInProgress

MAX_ATTEMPTS = 5
MAX_WAIT_SECONDS = 30.0
RETRY_STATUSES = (429, 503)
TOTAL_SECONDS = 30.0  # one request: its attempts and the waits between them
CONNECT_SECONDS = 5.0  # a host that has not taken the connection by then is not going to
READ_SECONDS = 10.0  # the API answers a GET in well under a second; one that has not is sent again
# Just over API Gateway's 29 s integration timeout: by then the API has answered, if only with a 502
# or 504. A change is given that long because cutting it short leaves unknown whether it was made.
WRITE_SECONDS = 30.0
# API Gateway's answer when Lambda ended the function (its timeout, its memory) or it crashed.
BAD_GATEWAY = 502
# API Gateway's answer when the function has not answered in its 29 s: the function runs on.
GATEWAY_TIMEOUT = 504
# The transport errors raised before any of the request left: nothing can have been made.
NOT_SENT = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
    httpx.LocalProtocolError,
    httpx.UnsupportedProtocol,
    httpx.ProxyError,
)


def attempt_timeout(method: str, left: float) -> httpx.Timeout:
    """One attempt's bounds, none past the ``left`` seconds of the request's own."""
    answer = READ_SECONDS if method == "GET" else WRITE_SECONDS
    left = max(left, 0.001)
    return httpx.Timeout(min(answer, left), connect=min(CONNECT_SECONDS, left))


def backoff(attempt: int) -> float:
    """Seconds before attempt ``attempt + 1`` when the answer does not say: 0.2, 0.4, 0.8..."""
    return 0.2 * 2**attempt


def retry_after(response: httpx.Response, attempt: int) -> float:
    """Seconds to wait before the next attempt: ``Retry-After`` (seconds or an HTTP date) if the
    answer has one, else exponential backoff; never more than MAX_WAIT_SECONDS."""
    value = response.headers.get("Retry-After")
    wait = backoff(attempt)
    if value:
        try:
            wait = float(value)
        except ValueError:
            with suppress(TypeError, ValueError):
                wait = parsedate_to_datetime(value).timestamp() - time.time()
    return min(max(wait, 0.0), MAX_WAIT_SECONDS)


def resendable(method: str, idempotency_key: str | None) -> bool:
    """A request that may be sent again after a lost connection: it changes nothing, or only once."""
    return method == "GET" or idempotency_key is not None


def refused(error: httpx.TransportError) -> bool:
    """Nothing listens at the URL: sending again in a moment would only delay saying so."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def unanswered(error: ApiError | httpx.TransportError) -> bool:
    """The request was sent and its outcome never came: no answer, or API Gateway's 502 or 504."""
    if isinstance(error, httpx.TransportError):
        return not isinstance(error, NOT_SENT)
    return error.status in (BAD_GATEWAY, GATEWAY_TIMEOUT)


def retryable(error: ApiError, method: str, idempotency_key: str | None) -> bool:
    """An error answer worth another attempt with the same request. A 429 for the daily quota is
    not: its Retry-After is the hours until midnight UTC, beyond any wait worth making."""
    if unanswered(error):  # as after no answer
        return resendable(method, idempotency_key)
    if error.status == 429 and quota_spent(error):
        return False
    if isinstance(error, MoveInProgress):  # refused before anything changed: the same request, once moved
        return True
    return error.status in RETRY_STATUSES or (isinstance(error, Conflict) and idempotency_key is not None)


def quota_spent(error: ApiError) -> bool:
    """A 429 for the org's daily quota: its Retry-After is longer than any wait the client makes."""
    value = error.headers.get("Retry-After", "")
    return value.isdigit() and int(value) > MAX_WAIT_SECONDS
