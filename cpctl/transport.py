"""The client's transport: one API endpoint and one ID token, the one place requests are sent (with
``cpctl.retries``' rules), ETags for If-Match, and following pages. ``cpctl.client.Client`` adds a
method per route."""

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from controlplane.models.resources import Page, Resource
from cpctl import retries
from cpctl.errors import ApiError, Interrupted, UnexpectedAnswer, error_for

DEFAULT_URL = "http://127.0.0.1:3000"

M = TypeVar("M", bound=BaseModel)
P = TypeVar("P", bound=Page)


# ETags: the API's ETag of a resource is its version in quotes.

ETagLike = str | Resource | None


def etag(resource: Resource) -> str:
    """The ``ETag`` the API sent with ``resource`` (``"<version>"``), for ``If-Match``."""
    return f'"{resource.version}"'


def if_match_header(value: ETagLike) -> dict[str, str]:
    """No header for None; an empty one is refused (``"$ETAG"`` unset): a proxy may drop an empty
    header, and the change would then apply whatever the version."""
    if value is None:
        return {}
    if value == "":
        raise ValueError("If-Match is empty: give the ETag you read, or None for no condition")
    return {"If-Match": etag(value) if isinstance(value, Resource) else value}


def _segment(value: str) -> str:
    """An id as one path segment, which fails validation if it is not an id: quoted whole (a "/" or
    "?" in it), and "." and ".." escaped, which a URL would otherwise resolve to the route's parent
    (DELETE /orgs/acme/users/.. is DELETE /orgs/acme)."""
    quoted = quote(value, safe="")
    return quoted.replace(".", "%2E") if quoted in (".", "..") else quoted


def _maybe_made(unanswered: Exception, idempotency_key: str | None) -> Exception:
    """The error of a change's attempt that went unanswered (a 502 or 504, or no answer), raised in place
    of a later attempt's that never left: that one would say nothing was sent, and a new key."""
    if isinstance(unanswered, ApiError):
        unanswered.maybe_made, unanswered.idempotency_key = True, idempotency_key
    return unanswered


class Transport:
    """One API endpoint and one ID token. ``timeout``: the most seconds one request may take, its
    attempts and the waits between them included (each attempt has its own, shorter bound:
    ``cpctl.retries.attempt_timeout``). ``on_response(route, response)`` sees every answer
    (``route`` is ``(method, path template)``), e.g. for logging."""

    def __init__(
        self,
        url: str = DEFAULT_URL,
        token: str | None = None,
        *,
        timeout: float = retries.TOTAL_SECONDS,
        max_attempts: int = retries.MAX_ATTEMPTS,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        on_response: Callable[[tuple[str, str], httpx.Response], None] | None = None,
    ):
        # The authorizer takes the raw ID token, as Cognito's did, or "Bearer <token>".
        headers = {"Authorization": token} if token else {}
        self.http = httpx.Client(base_url=url.rstrip("/"), headers=headers, transport=transport)
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.sleep = sleep
        self.clock = clock
        self.on_response = on_response
        self.last_response: httpx.Response | None = None

    def __enter__(self) -> "Transport":
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    # The one place requests are sent.

    def request(
        self,
        route: tuple[str, str],
        *,
        params: dict[str, Any] | None = None,
        body: BaseModel | None = None,
        headers: dict[str, str] | None = None,
        idempotency_key: str | None = None,
        **path: str,
    ) -> httpx.Response:
        """Send ``route`` with ``path`` filled in; the successful response, else an ApiError.
        Sent again as ``cpctl.retries`` says, always with the same Idempotency-Key, while the
        request's ``timeout`` lasts. Ctrl-C during a change raises ``Interrupted``: it may have been made;
        so may a change whose error follows an attempt that went unanswered (``ApiError.maybe_made``)."""
        method, template = route
        headers = dict(headers or {})
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        content = body.model_dump_json(exclude_unset=True) if body is not None else None
        if content is not None:
            headers["Content-Type"] = "application/json"
        query = {name: value for name, value in (params or {}).items() if value is not None}
        url = template.format(**{name: _segment(value) for name, value in path.items()})
        resendable = retries.resendable(method, idempotency_key)
        deadline = self.clock() + self.timeout
        unanswered: Exception | None = None  # the first attempt that went unanswered: a change may have been made
        try:
            for attempt in range(self.max_attempts):
                last = attempt == self.max_attempts - 1
                bounds = retries.attempt_timeout(method, deadline - self.clock())
                try:
                    response = self.http.request(
                        method, url, params=query, content=content, headers=headers, timeout=bounds
                    )
                except httpx.TransportError as error:
                    unanswered = unanswered or (error if retries.unanswered(error) else None)
                    wait = retries.backoff(attempt)
                    if not resendable or last or retries.refused(error) or self.clock() + wait >= deadline:
                        if unanswered is not None and method != "GET" and isinstance(error, retries.NOT_SENT):
                            # Not "never sent": an attempt before it went unanswered, and may have made it.
                            raise _maybe_made(unanswered, idempotency_key) from error
                        raise
                    self.sleep(wait)
                    continue
                self.last_response = response
                if self.on_response:
                    self.on_response(route, response)
                if response.is_success:
                    return response
                error = error_for(response)
                unanswered = unanswered or (error if retries.unanswered(error) else None)
                wait = retries.retry_after(response, attempt)
                if not retries.retryable(error, method, idempotency_key) or last or self.clock() + wait >= deadline:
                    error.maybe_made = unanswered is not None and method != "GET"
                    error.attempts = attempt + 1
                    error.idempotency_key = idempotency_key
                    raise error
                self.sleep(wait)
        except KeyboardInterrupt:
            if method == "GET":
                raise
            raise Interrupted(method, url, idempotency_key) from None  # made or not: unknown
        raise AssertionError("unreachable")

    def _model(self, model: type[M], response: httpx.Response) -> M:
        """The answer as ``model``; one that is not raises ``UnexpectedAnswer``, never the
        ValidationError a request body the API would refuse raises (that one was never sent)."""
        try:
            return model.model_validate_json(response.content)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(map(str, first["loc"])) or "body"
            raise UnexpectedAnswer(response, f"{where}: {first['msg']}") from None

    @staticmethod
    def _key(idempotency_key: str | None) -> str:
        """A new key when none is given; one given empty (an unset variable) is refused, not replaced:
        a retry with a key of its own would make the create twice."""
        if idempotency_key is None:
            return str(uuid.uuid4())
        if not idempotency_key:
            raise ValueError("an Idempotency-Key is never empty: pass None for a new one")
        return idempotency_key

    # Pages.

    @staticmethod
    def pages(fetch: Callable[[str | None], P], cursor: str | None = None) -> Iterator[P]:
        """Every page of a list, following ``next_cursor`` from ``cursor`` on."""
        while True:
            page = fetch(cursor)
            yield page
            cursor = page.next_cursor
            if not cursor:
                return
