"""A typed client for the control-plane API, on httpx, speaking the API's own pydantic models.

    from cpctl.client import Client, NotFound
    with Client("http://127.0.0.1:3000", token) as api:
        org = api.create_org("acme", name="Acme")
        for ticket in api.iter_tickets("acme", "alice"):
            ...
        api.update_org("acme", name="Acme Inc", if_match=org)   # only if nobody changed it since

Every method is one route of ``controlplane.http.routes.ROUTES`` (a test checks none is missing).
Request bodies are validated with the API's request models before they are sent, responses are
parsed into its response models, and an error answer is raised as an ``ApiError`` subclass that
carries the error code, message and request id.

Retries: a ``429`` or ``503`` is retried after ``Retry-After`` seconds (bounded), every create
carries an ``Idempotency-Key`` and a retry of it (after a ``503``, or a ``409 conflict``, which
means the first request with that key is still running) sends the same key, so a create happens
once however often it is sent.
"""

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import suppress
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from controlplane.http import routes
from controlplane.models.resources import (
    ActivityPage,
    DeletionAccepted,
    Org,
    OrgCreate,
    OrgPage,
    OrgUpdate,
    OrgWithUsers,
    Page,
    PlanList,
    Resource,
    Ticket,
    TicketCreate,
    TicketPage,
    TicketUpdate,
    User,
    UserCreate,
    UserPage,
    UserUpdate,
    UserWithTickets,
)

DEFAULT_URL = "http://127.0.0.1:3000"
MAX_ATTEMPTS = 5
MAX_WAIT_SECONDS = 30.0
RETRY_STATUSES = (429, 503)

M = TypeVar("M", bound=BaseModel)
P = TypeVar("P", bound=Page)


# Errors: one class per error code of the API's contract (README, "Errors").


class ApiError(Exception):
    """The API refused: ``status``, ``code``, ``message``, ``request_id`` (and ``details`` for
    validation errors). ``body`` is the error JSON exactly as the API sent it."""

    def __init__(self, response: httpx.Response):
        self.status = response.status_code
        self.body = response.text
        self.headers = response.headers
        try:
            error = response.json()["error"]
            self.code, self.message = str(error["code"]), str(error["message"])
            self.request_id = error.get("request_id") or response.headers.get("x-amzn-RequestId")
            self.details = error.get("details")
        except (ValueError, KeyError, TypeError):
            # Not the API's error shape, e.g. a gateway in between answering 502 by itself.
            self.code, self.message = f"http_{self.status}", response.text[:200] or response.reason_phrase
            self.request_id, self.details = response.headers.get("x-amzn-RequestId"), None
        super().__init__(f"{self.status} {self.code}: {self.message} (request {self.request_id})")


class BadRequest(ApiError):
    """invalid_json, invalid_cursor, bad_request"""


class Unauthorized(ApiError):
    pass


class Forbidden(ApiError):
    pass


class NotFound(ApiError):
    pass


class MethodNotAllowed(ApiError):
    pass


class AlreadyExists(ApiError):
    pass


class Conflict(ApiError):
    """A request with the same Idempotency-Key is still in progress."""


class QuotaExceeded(ApiError):
    """The org's plan has no seat left (``details`` says which quota, its limit and the use)."""


class PreconditionFailed(ApiError):
    """The If-Match version is not the current one: read the resource again."""


class PayloadTooLarge(ApiError):
    pass


class UnsupportedMediaType(ApiError):
    pass


class ValidationFailed(ApiError):
    pass


class IdempotencyKeyReused(ApiError):
    pass


class Throttled(ApiError):
    pass


class InternalError(ApiError):
    pass


class ServiceUnavailable(ApiError):
    pass


ERRORS: dict[str, type[ApiError]] = {
    "invalid_json": BadRequest,
    "invalid_cursor": BadRequest,
    "bad_request": BadRequest,
    "unauthorized": Unauthorized,
    "forbidden": Forbidden,
    "not_found": NotFound,
    "method_not_allowed": MethodNotAllowed,
    "already_exists": AlreadyExists,
    "conflict": Conflict,
    "quota_exceeded": QuotaExceeded,
    "precondition_failed": PreconditionFailed,
    "payload_too_large": PayloadTooLarge,
    "unsupported_media_type": UnsupportedMediaType,
    "validation_error": ValidationFailed,
    "idempotency_key_reused": IdempotencyKeyReused,
    "throttled": Throttled,
    "internal_error": InternalError,
    "service_unavailable": ServiceUnavailable,
}


def error_for(response: httpx.Response) -> ApiError:
    error = ApiError(response)
    return ERRORS.get(error.code, ApiError)(response)


# Routes: each client method names its row of the route table; COVERED is what a test compares.

COVERED: set[tuple[str, str]] = set()


def _route(method: str, path: str) -> tuple[str, str]:
    """A row of the route table; fails at import if the table has no such route."""
    if not any(route.method == method and route.path == path for route in routes.ROUTES):
        raise LookupError(f"{method} {path} is not in controlplane.http.routes.ROUTES")
    COVERED.add((method, path))
    return method, path


POST_ORGS = _route("POST", "/orgs")
GET_ORGS = _route("GET", "/orgs")
GET_ORG = _route("GET", "/orgs/{org_id}")
PATCH_ORG = _route("PATCH", "/orgs/{org_id}")
DELETE_ORG = _route("DELETE", "/orgs/{org_id}")
GET_PLANS = _route("GET", "/plans")
GET_ACTIVITY = _route("GET", "/orgs/{org_id}/activity")
POST_USERS = _route("POST", "/orgs/{org_id}/users")
GET_USERS = _route("GET", "/orgs/{org_id}/users")
GET_USER = _route("GET", "/orgs/{org_id}/users/{user_id}")
PATCH_USER = _route("PATCH", "/orgs/{org_id}/users/{user_id}")
DELETE_USER = _route("DELETE", "/orgs/{org_id}/users/{user_id}")
POST_TICKETS = _route("POST", "/orgs/{org_id}/users/{user_id}/tickets")
GET_TICKETS = _route("GET", "/orgs/{org_id}/users/{user_id}/tickets")
GET_TICKET = _route("GET", "/orgs/{org_id}/tickets/{ticket_id}")
PATCH_TICKET = _route("PATCH", "/orgs/{org_id}/tickets/{ticket_id}")
DELETE_TICKET = _route("DELETE", "/orgs/{org_id}/tickets/{ticket_id}")


# ETags: the API's ETag of a resource is its version in quotes.

ETagLike = str | Resource | None


def etag(resource: Resource) -> str:
    """The ``ETag`` the API sent with ``resource`` (``"<version>"``), for ``If-Match``."""
    return f'"{resource.version}"'


def _if_match(value: ETagLike) -> dict[str, str]:
    if value is None:
        return {}
    return {"If-Match": etag(value) if isinstance(value, Resource) else value}


def retry_after(response: httpx.Response, attempt: int) -> float:
    """Seconds to wait before the next attempt: ``Retry-After`` (seconds or an HTTP date) if the
    answer has one, else exponential backoff; never more than MAX_WAIT_SECONDS."""
    value = response.headers.get("Retry-After")
    wait = 0.2 * 2**attempt
    if value:
        try:
            wait = float(value)
        except ValueError:
            with suppress(TypeError, ValueError):
                wait = parsedate_to_datetime(value).timestamp() - time.time()
    return min(max(wait, 0.0), MAX_WAIT_SECONDS)


class Client:
    """One API endpoint and one ID token. ``on_response(route, response)`` sees every answer
    (``route`` is ``(method, path template)``), e.g. for logging."""

    def __init__(
        self,
        url: str = DEFAULT_URL,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        max_attempts: int = MAX_ATTEMPTS,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        on_response: Callable[[tuple[str, str], httpx.Response], None] | None = None,
    ):
        # API Gateway's Cognito authorizer takes the raw ID token, without "Bearer ".
        headers = {"Authorization": token} if token else {}
        self.http = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout, transport=transport)
        self.max_attempts = max_attempts
        self.sleep = sleep
        self.on_response = on_response
        self.last_response: httpx.Response | None = None

    def __enter__(self) -> "Client":
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

        Retried: 429 and 503 (after Retry-After), and for a create with an Idempotency-Key a
        ``409 conflict`` (its first attempt is still running) and a lost connection, always with
        the same key.
        """
        method, template = route
        headers = dict(headers or {})
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        content = body.model_dump_json(exclude_unset=True) if body is not None else None
        if content is not None:
            headers["Content-Type"] = "application/json"
        query = {name: value for name, value in (params or {}).items() if value is not None}
        # Quoted whole: an id holding a "/" or "?" must stay one path segment (and fail validation).
        url = template.format(**{name: quote(value, safe="") for name, value in path.items()})
        resendable = method == "GET" or idempotency_key is not None
        for attempt in range(self.max_attempts):
            last = attempt == self.max_attempts - 1
            try:
                response = self.http.request(method, url, params=query, content=content, headers=headers)
            except httpx.TransportError:
                if not resendable or last:
                    raise
                self.sleep(0.2 * 2**attempt)
                continue
            self.last_response = response
            if self.on_response:
                self.on_response(route, response)
            if response.is_success:
                return response
            error = error_for(response)
            retry = response.status_code in RETRY_STATUSES or (
                isinstance(error, Conflict) and idempotency_key is not None
            )
            if not retry or last:
                raise error
            self.sleep(retry_after(response, attempt))
        raise AssertionError("unreachable")

    def _model(self, model: type[M], response: httpx.Response) -> M:
        return model.model_validate_json(response.content)

    @staticmethod
    def _key(idempotency_key: str | None) -> str:
        return idempotency_key or str(uuid.uuid4())

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

    # Organizations.

    def create_org(self, org_id: str, name: str, plan: str | None = None, *, idempotency_key: str | None = None) -> Org:
        body = OrgCreate(org_id=org_id, name=name, **({"plan": plan} if plan else {}))
        return self._model(Org, self.request(POST_ORGS, body=body, idempotency_key=self._key(idempotency_key)))

    def list_orgs(self, limit: int | None = None, cursor: str | None = None) -> OrgPage:
        return self._model(OrgPage, self.request(GET_ORGS, params={"limit": limit, "cursor": cursor}))

    def org_pages(self, limit: int | None = None) -> Iterator[OrgPage]:
        return self.pages(lambda cursor: self.list_orgs(limit, cursor))

    def iter_orgs(self, limit: int | None = None) -> Iterator[Org]:
        for page in self.org_pages(limit):
            yield from page.items

    def list_plans(self) -> PlanList:
        """The plans and what each allows; any signed-in caller may read them."""
        return self._model(PlanList, self.request(GET_PLANS))

    def get_org(self, org_id: str) -> Org:
        return self._model(Org, self.request(GET_ORG, org_id=org_id))

    def get_org_with_users(self, org_id: str, limit: int | None = None) -> OrgWithUsers:
        """The org and its first users; ``next_cursor`` continues on ``list_users``."""
        response = self.request(GET_ORG, params={"include": "users", "limit": limit}, org_id=org_id)
        return self._model(OrgWithUsers, response)

    def update_org(self, org_id: str, *, if_match: ETagLike = None, **changes: Any) -> Org:
        response = self.request(PATCH_ORG, body=OrgUpdate(**changes), headers=_if_match(if_match), org_id=org_id)
        return self._model(Org, response)

    def delete_org(self, org_id: str, *, if_match: ETagLike = None) -> DeletionAccepted | None:
        """None when the org is gone; ``DeletionAccepted`` (202) when the delete continues in the
        background (GET the org until NotFound)."""
        response = self.request(DELETE_ORG, headers=_if_match(if_match), org_id=org_id)
        return self._model(DeletionAccepted, response) if response.status_code == 202 else None

    def list_activity(self, org_id: str, limit: int | None = None, cursor: str | None = None) -> ActivityPage:
        """The org's lifecycle events, newest first (its admins and operators)."""
        response = self.request(GET_ACTIVITY, params={"limit": limit, "cursor": cursor}, org_id=org_id)
        return self._model(ActivityPage, response)

    def activity_pages(self, org_id: str, limit: int | None = None) -> Iterator[ActivityPage]:
        return self.pages(lambda cursor: self.list_activity(org_id, limit, cursor))

    # Users.

    def create_user(
        self,
        org_id: str,
        user_id: str,
        name: str,
        email: str,
        role: str | None = None,
        *,
        idempotency_key: str | None = None,
    ) -> User:
        body = UserCreate(user_id=user_id, name=name, email=email, **({"role": role} if role else {}))
        response = self.request(POST_USERS, body=body, idempotency_key=self._key(idempotency_key), org_id=org_id)
        return self._model(User, response)

    def list_users(self, org_id: str, limit: int | None = None, cursor: str | None = None) -> UserPage:
        response = self.request(GET_USERS, params={"limit": limit, "cursor": cursor}, org_id=org_id)
        return self._model(UserPage, response)

    def user_pages(self, org_id: str, limit: int | None = None, cursor: str | None = None) -> Iterator[UserPage]:
        return self.pages(lambda c: self.list_users(org_id, limit, c), cursor)

    def iter_users(self, org_id: str, limit: int | None = None) -> Iterator[User]:
        for page in self.user_pages(org_id, limit):
            yield from page.items

    def get_user(self, org_id: str, user_id: str) -> User:
        return self._model(User, self.request(GET_USER, org_id=org_id, user_id=user_id))

    def get_user_with_tickets(self, org_id: str, user_id: str, limit: int | None = None) -> UserWithTickets:
        """The user and their newest tickets; ``next_cursor`` continues on ``list_tickets``."""
        params = {"include": "tickets", "limit": limit}
        return self._model(UserWithTickets, self.request(GET_USER, params=params, org_id=org_id, user_id=user_id))

    def update_user(self, org_id: str, user_id: str, *, if_match: ETagLike = None, **changes: Any) -> User:
        headers = _if_match(if_match)
        response = self.request(PATCH_USER, body=UserUpdate(**changes), headers=headers, org_id=org_id, user_id=user_id)
        return self._model(User, response)

    def delete_user(self, org_id: str, user_id: str, *, if_match: ETagLike = None) -> None:
        self.request(DELETE_USER, headers=_if_match(if_match), org_id=org_id, user_id=user_id)

    # Tickets.

    def create_ticket(
        self, org_id: str, user_id: str, subject: str, *, idempotency_key: str | None = None, **fields: Any
    ) -> Ticket:
        """Open a ticket; ``fields``: description, status, priority, tags."""
        body = TicketCreate(subject=subject, **fields)
        key = self._key(idempotency_key)
        response = self.request(POST_TICKETS, body=body, idempotency_key=key, org_id=org_id, user_id=user_id)
        return self._model(Ticket, response)

    def list_tickets(
        self, org_id: str, user_id: str, limit: int | None = None, cursor: str | None = None
    ) -> TicketPage:
        """A user's tickets, newest first."""
        params = {"limit": limit, "cursor": cursor}
        return self._model(TicketPage, self.request(GET_TICKETS, params=params, org_id=org_id, user_id=user_id))

    def ticket_pages(
        self, org_id: str, user_id: str, limit: int | None = None, cursor: str | None = None
    ) -> Iterator[TicketPage]:
        return self.pages(lambda c: self.list_tickets(org_id, user_id, limit, c), cursor)

    def iter_tickets(self, org_id: str, user_id: str, limit: int | None = None) -> Iterator[Ticket]:
        for page in self.ticket_pages(org_id, user_id, limit):
            yield from page.items

    def get_ticket(self, org_id: str, ticket_id: str) -> Ticket:
        return self._model(Ticket, self.request(GET_TICKET, org_id=org_id, ticket_id=ticket_id))

    def update_ticket(self, org_id: str, ticket_id: str, *, if_match: ETagLike = None, **changes: Any) -> Ticket:
        body, headers = TicketUpdate(**changes), _if_match(if_match)
        response = self.request(PATCH_TICKET, body=body, headers=headers, org_id=org_id, ticket_id=ticket_id)
        return self._model(Ticket, response)

    def delete_ticket(self, org_id: str, ticket_id: str, *, if_match: ETagLike = None) -> None:
        self.request(DELETE_TICKET, headers=_if_match(if_match), org_id=org_id, ticket_id=ticket_id)
