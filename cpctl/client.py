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

from collections.abc import Iterator
from typing import Any

from controlplane.models.activity import ActivityEntry, ActivityPage
from controlplane.models.imports import UserImport, UserImportCreate
from controlplane.models.resources import (
    DeletionAccepted,
    Org,
    OrgCreate,
    OrgPage,
    OrgSummary,
    OrgUpdate,
    OrgWithUsers,
    PlanList,
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
from controlplane.models.units import MoveAccepted, Unit, UnitCreate, UnitPage, UnitUpdate
from cpctl import endpoints
from cpctl.transport import DEFAULT_URL, ETagLike, Transport, etag, if_match_header

__all__ = ["DEFAULT_URL", "Client", "ETagLike", "etag"]


class Client(Transport):
    """A method per route of the API, each one request (``cpctl.transport`` sends it)."""

    # Organizations.

    def create_org(self, org_id: str, name: str, plan: str | None = None, *, idempotency_key: str | None = None) -> Org:
        body = OrgCreate(org_id=org_id, name=name, **({"plan": plan} if plan is not None else {}))
        response = self.request(endpoints.POST_ORGS, body=body, idempotency_key=self._key(idempotency_key))
        return self._model(Org, response)

    def list_orgs(self, limit: int | None = None, cursor: str | None = None) -> OrgPage:
        return self._model(OrgPage, self.request(endpoints.GET_ORGS, params={"limit": limit, "cursor": cursor}))

    def org_pages(self, limit: int | None = None) -> Iterator[OrgPage]:
        return self.pages(lambda cursor: self.list_orgs(limit, cursor))

    def iter_orgs(self, limit: int | None = None) -> Iterator[OrgSummary]:
        for page in self.org_pages(limit):
            yield from page.items

    def list_plans(self) -> PlanList:
        """The plans and what each allows; any signed-in caller may read them."""
        return self._model(PlanList, self.request(endpoints.GET_PLANS))

    def import_users(
        self, org_id: str, rows: list[dict[str, Any]], *, idempotency_key: str | None = None
    ) -> UserImport:
        """Start an import of up to 10,000 users (a job creates them); follow it with ``get_user_import``.
        Sent again with its key, it is the same import."""
        body, key = UserImportCreate(rows=rows), self._key(idempotency_key)
        response = self.request(endpoints.POST_USER_IMPORTS, body=body, idempotency_key=key, org_id=org_id)
        return self._model(UserImport, response)

    def get_user_import(self, org_id: str, import_id: str) -> UserImport:
        return self._model(UserImport, self.request(endpoints.GET_USER_IMPORT, org_id=org_id, import_id=import_id))

    def get_org(self, org_id: str) -> Org:
        return self._model(Org, self.request(endpoints.GET_ORG, org_id=org_id))

    def get_org_with_users(self, org_id: str, limit: int | None = None) -> OrgWithUsers:
        """The org and its first users; ``next_cursor`` continues on ``list_users``."""
        response = self.request(endpoints.GET_ORG, params={"include": "users", "limit": limit}, org_id=org_id)
        return self._model(OrgWithUsers, response)

    def update_org(self, org_id: str, *, if_match: ETagLike = None, **changes: Any) -> Org:
        body, headers = OrgUpdate(**changes), if_match_header(if_match)
        response = self.request(endpoints.PATCH_ORG, body=body, headers=headers, org_id=org_id)
        return self._model(Org, response)

    def suspend_org(self, org_id: str, reason: str, *, if_match: ETagLike = None) -> Org:
        """Suspend an org (operators): until ``activate_org``, its admins and members are refused on
        every request, tokens they already hold included, within seconds (docs/SECURITY.md gives the
        bound), and their sign-ins are disabled; nothing is deleted. The ``reason`` is shown to
        operators only."""
        return self.update_org(org_id, if_match=if_match, status="suspended", suspension_reason=reason)

    def activate_org(self, org_id: str, *, if_match: ETagLike = None) -> Org:
        """Reactivate a suspended org (operators): within the same bound its users are served
        again, and their sign-ins are enabled."""
        return self.update_org(org_id, if_match=if_match, status="active")

    def delete_org(self, org_id: str, *, if_match: ETagLike = None) -> DeletionAccepted | None:
        """None when the org is gone; ``DeletionAccepted`` (202) when the delete continues in the
        background (GET the org until NotFound)."""
        response = self.request(endpoints.DELETE_ORG, headers=if_match_header(if_match), org_id=org_id)
        return self._model(DeletionAccepted, response) if response.status_code == 202 else None

    def list_activity(self, org_id: str, limit: int | None = None, cursor: str | None = None) -> ActivityPage:
        """The org's lifecycle events, newest first (its admins and operators)."""
        response = self.request(endpoints.GET_ACTIVITY, params={"limit": limit, "cursor": cursor}, org_id=org_id)
        return self._model(ActivityPage, response)

    def activity_pages(self, org_id: str, limit: int | None = None) -> Iterator[ActivityPage]:
        return self.pages(lambda cursor: self.list_activity(org_id, limit, cursor))

    def iter_activity(self, org_id: str, limit: int | None = None) -> Iterator[ActivityEntry]:
        for page in self.activity_pages(org_id, limit):
            yield from page.items

    # Users.

    def create_user(
        self,
        org_id: str,
        user_id: str,
        name: str,
        email: str,
        role: str | None = None,
        *,
        unit: str | None = None,
        idempotency_key: str | None = None,
    ) -> User:
        given = {name: value for name, value in {"role": role, "unit": unit}.items() if value is not None}
        body = UserCreate(user_id=user_id, name=name, email=email, **given)
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
        headers = if_match_header(if_match)
        response = self.request(
            endpoints.PATCH_USER, body=UserUpdate(**changes), headers=headers, org_id=org_id, user_id=user_id
        )
        return self._model(User, response)

    def delete_user(self, org_id: str, user_id: str, *, if_match: ETagLike = None) -> None:
        self.request(endpoints.DELETE_USER, headers=if_match_header(if_match), org_id=org_id, user_id=user_id)

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
        body, headers = TicketUpdate(**changes), if_match_header(if_match)
        response = self.request(endpoints.PATCH_TICKET, body=body, headers=headers, org_id=org_id, ticket_id=ticket_id)
        return self._model(Ticket, response)

    def delete_ticket(self, org_id: str, ticket_id: str, *, if_match: ETagLike = None) -> None:
        self.request(endpoints.DELETE_TICKET, headers=if_match_header(if_match), org_id=org_id, ticket_id=ticket_id)

    # Units.

    def create_unit(
        self, org_id: str, unit_id: str, name: str, parent_id: str | None = None, *, idempotency_key: str | None = None
    ) -> Unit:
        body = UnitCreate(unit_id=unit_id, name=name, **({"parent_id": parent_id} if parent_id is not None else {}))
        response = self.request(
            endpoints.POST_UNITS, body=body, idempotency_key=self._key(idempotency_key), org_id=org_id
        )
        return self._model(Unit, response)

    def list_units(
        self, org_id: str, under: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> UnitPage:
        """The units depth-first: the whole tree, or ``under`` a unit (it included)."""
        params = {"under": under, "limit": limit, "cursor": cursor}
        return self._model(UnitPage, self.request(endpoints.GET_UNITS, params=params, org_id=org_id))

    def unit_pages(self, org_id: str, under: str | None = None, limit: int | None = None) -> Iterator[UnitPage]:
        return self.pages(lambda cursor: self.list_units(org_id, under, limit, cursor))

    def iter_units(self, org_id: str, under: str | None = None) -> Iterator[Unit]:
        for page in self.unit_pages(org_id, under):
            yield from page.items

    def get_unit(self, org_id: str, unit_id: str) -> Unit:
        return self._model(Unit, self.request(endpoints.GET_UNIT, org_id=org_id, unit_id=unit_id))

    def update_unit(
        self, org_id: str, unit_id: str, *, if_match: ETagLike = None, **changes: Any
    ) -> Unit | MoveAccepted:
        """Rename (``name``) or move (``parent_id``) a unit; ``MoveAccepted`` (202) when the move of a
        big subtree continues in the background (GET the unit until ``moving`` is false)."""
        headers = if_match_header(if_match)
        response = self.request(
            endpoints.PATCH_UNIT, body=UnitUpdate(**changes), headers=headers, org_id=org_id, unit_id=unit_id
        )
        return self._model(MoveAccepted, response) if response.status_code == 202 else self._model(Unit, response)

    def delete_unit(self, org_id: str, unit_id: str, *, if_match: ETagLike = None) -> None:
        self.request(endpoints.DELETE_UNIT, headers=if_match_header(if_match), org_id=org_id, unit_id=unit_id)

    def list_unit_users(
        self, org_id: str, unit_id: str, direct: bool = False, limit: int | None = None, cursor: str | None = None
    ) -> UserPage:
        """The users of the unit and of every unit below it (``direct``: its own only)."""
        params = {"direct": "true" if direct else None, "limit": limit, "cursor": cursor}
        response = self.request(endpoints.GET_UNIT_USERS, params=params, org_id=org_id, unit_id=unit_id)
        return self._model(UserPage, response)

    def unit_user_pages(
        self, org_id: str, unit_id: str, direct: bool = False, limit: int | None = None
    ) -> Iterator[UserPage]:
        return self.pages(lambda cursor: self.list_unit_users(org_id, unit_id, direct, limit, cursor))

    def iter_unit_users(
        self, org_id: str, unit_id: str, direct: bool = False, limit: int | None = None
    ) -> Iterator[User]:
        for page in self.unit_user_pages(org_id, unit_id, direct, limit):
            yield from page.items
