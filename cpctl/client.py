"""A typed client for the control-plane API, on httpx, speaking the API's own pydantic models.

    from cpctl.client import Client
    from cpctl.errors import NotFound
    with Client("http://127.0.0.1:3000", token) as api:
        org = api.create_org("acme", name="Acme")
        for ticket in api.iter_tickets("acme", "alice"):
            ...
        api.update_org("acme", name="Acme Inc", if_match=org)   # only if nobody changed it since

Every method is one route of ``controlplane.http.routes.ROUTES`` (``cpctl.endpoints``; a test checks
none is missing). Request bodies are validated with the API's request models before they are sent,
responses are parsed into its response models, and an error answer is raised as a ``cpctl.errors``
class that carries the error code, message and request id. ``cpctl.retries`` says which requests are
sent again; every create carries an ``Idempotency-Key``, the same one in each attempt.
"""

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from controlplane.models.resources import (
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
from cpctl import endpoints, retries
from cpctl.errors import error_for

DEFAULT_URL = "http://127.0.0.1:3000"

M = TypeVar("M", bound=BaseModel)
P = TypeVar("P", bound=Page)


# ETags: the API's ETag of a resource is its version in quotes.

ETagLike = str | Resource | None


def etag(resource: Resource) -> str:
    """The ``ETag`` the API sent with ``resource`` (``"<version>"``), for ``If-Match``."""
    return f'"{resource.version}"'


def _if_match(value: ETagLike) -> dict[str, str]:
    if value is None:
        return {}
    return {"If-Match": etag(value) if isinstance(value, Resource) else value}


class Client:
    """One API endpoint and one ID token. ``on_response(route, response)`` sees every answer
    (``route`` is ``(method, path template)``), e.g. for logging."""

    def __init__(
        self,
        url: str = DEFAULT_URL,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        max_attempts: int = retries.MAX_ATTEMPTS,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        on_response: Callable[[tuple[str, str], httpx.Response], None] | None = None,
    ):
        # The authorizer takes the raw ID token, as Cognito's did, or "Bearer <token>".
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
        Sent again as ``cpctl.retries`` says, always with the same Idempotency-Key."""
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
        resendable = retries.resendable(method, idempotency_key)
        for attempt in range(self.max_attempts):
            last = attempt == self.max_attempts - 1
            try:
                response = self.http.request(method, url, params=query, content=content, headers=headers)
            except httpx.TransportError:
                if not resendable or last:
                    raise
                self.sleep(retries.backoff(attempt))
                continue
            self.last_response = response
            if self.on_response:
                self.on_response(route, response)
            if response.is_success:
                return response
            error = error_for(response)
            if not retries.retryable(error, idempotency_key) or last:
                raise error
            self.sleep(retries.retry_after(response, attempt))
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
        response = self.request(endpoints.POST_ORGS, body=body, idempotency_key=self._key(idempotency_key))
        return self._model(Org, response)

    def list_orgs(self, limit: int | None = None, cursor: str | None = None) -> OrgPage:
        return self._model(OrgPage, self.request(endpoints.GET_ORGS, params={"limit": limit, "cursor": cursor}))

    def org_pages(self, limit: int | None = None) -> Iterator[OrgPage]:
        return self.pages(lambda cursor: self.list_orgs(limit, cursor))

    def iter_orgs(self, limit: int | None = None) -> Iterator[Org]:
        for page in self.org_pages(limit):
            yield from page.items

    def list_plans(self) -> PlanList:
        """The plans and what each allows; any signed-in caller may read them."""
        return self._model(PlanList, self.request(endpoints.GET_PLANS))

    def get_org(self, org_id: str) -> Org:
        return self._model(Org, self.request(endpoints.GET_ORG, org_id=org_id))

    def get_org_with_users(self, org_id: str, limit: int | None = None) -> OrgWithUsers:
        """The org and its first users; ``next_cursor`` continues on ``list_users``."""
        response = self.request(endpoints.GET_ORG, params={"include": "users", "limit": limit}, org_id=org_id)
        return self._model(OrgWithUsers, response)

    def update_org(self, org_id: str, *, if_match: ETagLike = None, **changes: Any) -> Org:
        body, headers = OrgUpdate(**changes), _if_match(if_match)
        response = self.request(endpoints.PATCH_ORG, body=body, headers=headers, org_id=org_id)
        return self._model(Org, response)

    def delete_org(self, org_id: str, *, if_match: ETagLike = None) -> DeletionAccepted | None:
        """None when the org is gone; ``DeletionAccepted`` (202) when the delete continues in the
        background (GET the org until NotFound)."""
        response = self.request(endpoints.DELETE_ORG, headers=_if_match(if_match), org_id=org_id)
        return self._model(DeletionAccepted, response) if response.status_code == 202 else None

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
        response = self.request(
            endpoints.POST_USERS, body=body, idempotency_key=self._key(idempotency_key), org_id=org_id
        )
        return self._model(User, response)

    def list_users(self, org_id: str, limit: int | None = None, cursor: str | None = None) -> UserPage:
        response = self.request(endpoints.GET_USERS, params={"limit": limit, "cursor": cursor}, org_id=org_id)
        return self._model(UserPage, response)

    def user_pages(self, org_id: str, limit: int | None = None, cursor: str | None = None) -> Iterator[UserPage]:
        return self.pages(lambda c: self.list_users(org_id, limit, c), cursor)

    def iter_users(self, org_id: str, limit: int | None = None) -> Iterator[User]:
        for page in self.user_pages(org_id, limit):
            yield from page.items

    def get_user(self, org_id: str, user_id: str) -> User:
        return self._model(User, self.request(endpoints.GET_USER, org_id=org_id, user_id=user_id))

    def get_user_with_tickets(self, org_id: str, user_id: str, limit: int | None = None) -> UserWithTickets:
        """The user and their newest tickets; ``next_cursor`` continues on ``list_tickets``."""
        params = {"include": "tickets", "limit": limit}
        return self._model(
            UserWithTickets, self.request(endpoints.GET_USER, params=params, org_id=org_id, user_id=user_id)
        )

    def update_user(self, org_id: str, user_id: str, *, if_match: ETagLike = None, **changes: Any) -> User:
        headers = _if_match(if_match)
        response = self.request(
            endpoints.PATCH_USER, body=UserUpdate(**changes), headers=headers, org_id=org_id, user_id=user_id
        )
        return self._model(User, response)

    def delete_user(self, org_id: str, user_id: str, *, if_match: ETagLike = None) -> None:
        self.request(endpoints.DELETE_USER, headers=_if_match(if_match), org_id=org_id, user_id=user_id)

    # Tickets.

    def create_ticket(
        self, org_id: str, user_id: str, subject: str, *, idempotency_key: str | None = None, **fields: Any
    ) -> Ticket:
        """Open a ticket; ``fields``: description, status, priority, tags."""
        body = TicketCreate(subject=subject, **fields)
        key = self._key(idempotency_key)
        response = self.request(endpoints.POST_TICKETS, body=body, idempotency_key=key, org_id=org_id, user_id=user_id)
        return self._model(Ticket, response)

    def list_tickets(
        self, org_id: str, user_id: str, limit: int | None = None, cursor: str | None = None
    ) -> TicketPage:
        """A user's tickets, newest first."""
        params = {"limit": limit, "cursor": cursor}
        return self._model(
            TicketPage, self.request(endpoints.GET_TICKETS, params=params, org_id=org_id, user_id=user_id)
        )

    def ticket_pages(
        self, org_id: str, user_id: str, limit: int | None = None, cursor: str | None = None
    ) -> Iterator[TicketPage]:
        return self.pages(lambda c: self.list_tickets(org_id, user_id, limit, c), cursor)

    def iter_tickets(self, org_id: str, user_id: str, limit: int | None = None) -> Iterator[Ticket]:
        for page in self.ticket_pages(org_id, user_id, limit):
            yield from page.items

    def get_ticket(self, org_id: str, ticket_id: str) -> Ticket:
        return self._model(Ticket, self.request(endpoints.GET_TICKET, org_id=org_id, ticket_id=ticket_id))

    def update_ticket(self, org_id: str, ticket_id: str, *, if_match: ETagLike = None, **changes: Any) -> Ticket:
        body, headers = TicketUpdate(**changes), _if_match(if_match)
        response = self.request(endpoints.PATCH_TICKET, body=body, headers=headers, org_id=org_id, ticket_id=ticket_id)
        return self._model(Ticket, response)

    def delete_ticket(self, org_id: str, ticket_id: str, *, if_match: ETagLike = None) -> None:
        self.request(endpoints.DELETE_TICKET, headers=_if_match(if_match), org_id=org_id, ticket_id=ticket_id)
