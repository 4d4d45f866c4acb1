"""Request bodies and response bodies. Stored items are dicts built by the resource modules.

Every model builds its validator at import, on purpose: ``defer_build`` was measured (issue 14) and
saves under 10 ms of a cold start, because the first request builds the models it touches anyway,
and the first model build pays for most of pydantic's schema machinery. Under SnapStart, whatever is
built at import is in the snapshot; whatever is deferred is paid after every restore.
"""

from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from controlplane.models import plans
from controlplane.models.ids import EMAIL_PATTERN, ROOT_UNIT, SLUG_PATTERN, ULID_PATTERN
from controlplane.models.text import LINES, ONE_LINE

OrgId = Annotated[str, Field(pattern=SLUG_PATTERN, examples=["acme"])]
UserId = Annotated[str, Field(pattern=SLUG_PATTERN, examples=["alice"])]
UnitId = Annotated[str, Field(pattern=SLUG_PATTERN, examples=["platform"])]
UserUnit = Annotated[UnitId, Field(description="The user's unit (`root`: the org's root)", examples=["platform"])]
TicketId = Annotated[str, Field(pattern=ULID_PATTERN, examples=["01JD3Q0Z6V7S3M8E2K9XWQY4PB"])]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=128, pattern=ONE_LINE)]
Email = Annotated[str, Field(pattern=EMAIL_PATTERN, max_length=254)]
Subject = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200, pattern=ONE_LINE)]
Description = Annotated[str, Field(max_length=10_000, pattern=LINES)]
Tag = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=32, pattern=ONE_LINE)]
Tags = Annotated[list[Tag], Field(max_length=20)]
if TYPE_CHECKING:
    Plan = str  # a Literal built at run time is no type to a checker; pydantic validates the names
else:
    Plan = Literal[tuple(plans.CATALOGUE)]  # the catalogue is the one list
Role = Literal["admin", "member"]
Status = Literal["open", "pending", "solved", "closed"]
# An org's standing. Orgs stored before statuses existed have none, and read as active.
OrgStatus = Literal["active", "suspended"]
ACTIVE: Final = "active"
SUSPENDED: Final = "suspended"
SuspensionReason = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=500, pattern=ONE_LINE),
    Field(description="Why, for operators (shown to operators only)", examples=["Invoice 2026-11 unpaid"]),
]
Priority = Literal["low", "normal", "high", "urgent"]
Timestamp = Annotated[str, Field(description="RFC 3339, UTC", examples=["2026-11-21T23:41:48.123Z"])]


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Patch(Request):
    """A partial update: at least one field, and no field set to null."""

    @model_validator(mode="after")
    def _one_field_no_nulls(self) -> Self:
        if not self.model_fields_set:
            raise ValueError("at least one field is required")
        nulls = sorted(name for name in self.model_fields_set if getattr(self, name) is None)
        if nulls:
            raise ValueError(f"fields may not be null: {', '.join(nulls)}")
        return self

    def changes(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True)


def _unique(tags: list[str] | None) -> list[str] | None:
    if tags is not None and len(set(tags)) != len(tags):
        raise ValueError("tags must be unique")
    return tags


class OrgCreate(Request):
    org_id: OrgId
    name: Name
    plan: Plan = plans.DEFAULT_PLAN


class OrgUpdate(Patch):
    name: Name | None = None
    plan: Plan | None = None
    status: OrgStatus | None = Field(
        None, description="Operators only. `suspended` needs a `suspension_reason`; `active` clears it"
    )
    suspension_reason: SuspensionReason | None = None

    @model_validator(mode="after")
    def _reason_goes_with_suspension(self) -> Self:
        # Suspending without a reason would leave the next operator guessing; a reason without a
        # suspension would be stored on an active org, or silently dropped.
        if self.status == SUSPENDED and self.suspension_reason is None:
            raise ValueError("suspending an organization needs a suspension_reason")
        if self.suspension_reason is not None and self.status != SUSPENDED:
            raise ValueError('suspension_reason goes with "status": "suspended" only')
        return self


class UserCreate(Request):
    user_id: UserId
    name: Name
    email: Email
    role: Role = "member"
    unit: UserUnit = ROOT_UNIT


class UserUpdate(Patch):
    name: Name | None = None
    email: Email | None = None
    role: Role | None = None
    unit: UserUnit | None = Field(None, description="A move: it may go with a `name` change, not `role` or `email`")

    @model_validator(mode="after")
    def _a_move_goes_alone(self) -> Self:
        # A move is a transaction with its new unit; role and e-mail are copied to the sign-in in
        # Cognito, which no transaction covers.
        if self.unit is not None and self.model_fields_set & {"role", "email"}:
            raise ValueError("move a user to another unit in a change of its own, without role or email")
        return self


class TicketCreate(Request):
    subject: Subject
    description: Description = ""
    status: Status = "open"
    priority: Priority = "normal"
    tags: Tags = []

    _unique_tags = field_validator("tags")(_unique)


class TicketUpdate(Patch):
    subject: Subject | None = None
    description: Description | None = None
    status: Status | None = None
    priority: Priority | None = None
    tags: Tags | None = None

    _unique_tags = field_validator("tags")(_unique)


class Resource(BaseModel):
    created_at: Timestamp
    updated_at: Timestamp
    version: int

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> Self:
        """The API representation of a stored item."""
        return cls.model_validate(item)


class Limits(BaseModel):
    users: int = Field(description="Seats: how many users the org may have", examples=[5])


class Usage(BaseModel):
    users: int | None = Field(
        description="Users the org has; null only for an org stored before seats were counted, until the "
        "user-count migration counts them",
        examples=[3],
    )


class OrgSummary(Resource):
    """An org as the listing shows it: everything but its seats used, which are on an item of its own
    (docs/DATA_MODEL.md: the listing is one index partition, and a user create must not write it)."""

    org_id: OrgId
    name: str
    plan: Plan
    deleting_since: Timestamp | None = Field(None, description="Set while the org's cascade delete runs")
    status: OrgStatus = Field(
        ACTIVE, description="`suspended`: its users cannot sign in or call the API until an operator reactivates it"
    )
    suspended_at: Timestamp | None = Field(None, description="Since when it is suspended; null while active")
    suspension_reason: str | None = Field(None, description="Why it is suspended; shown to operators only")
    limits: Limits

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> Self:
        """The listed org, with its plan's limits."""
        return cls.model_validate({**item, "limits": {"users": plans.limit(item["plan"])}})


class Org(OrgSummary):
    usage: Usage

    @classmethod
    def from_item(cls, item: dict[str, Any], seats: dict[str, Any] | None = None) -> "Org":
        """The stored org and its seat counter (``user_count``, ``user_limit``), shown as usage and
        limits. An org not migrated yet has them on its own item."""
        counter = seats or item
        limit = counter.get(plans.USER_LIMIT, plans.limit(item["plan"]))
        usage = {"users": counter.get(plans.USER_COUNT)}
        return cls.model_validate({**item, "usage": usage, "limits": {"users": limit}})

    def seen_by(self, operator: bool) -> "Org":
        """The org as a caller may see it: the suspension's reason is for operators only."""
        if operator or self.suspension_reason is None:
            return self
        return self.model_copy(update={"suspension_reason": None})


class RequestLimits(BaseModel):
    """What API Gateway lets each org of the plan send: its own token bucket and daily quota."""

    per_second: int = Field(description="Requests per second, sustained (the bucket's refill rate)", examples=[10])
    burst: int = Field(description="Requests at once above the rate (the bucket's size)", examples=[20])
    per_day: int | None = Field(description="Requests per day (UTC); null: no daily quota", examples=[10_000])


class PlanOffer(BaseModel):
    plan: Plan
    limits: Limits
    requests: RequestLimits


class PlanList(BaseModel):
    items: list[PlanOffer]


class User(Resource):
    org_id: OrgId
    user_id: UserId
    name: str
    email: str
    role: Role
    unit: UnitId = ROOT_UNIT  # users stored before units were in the root


class Ticket(Resource):
    org_id: OrgId
    ticket_id: TicketId
    user_id: UserId
    subject: str
    description: str
    status: Status
    priority: Priority
    tags: list[str]


class Page(BaseModel):
    next_cursor: str | None = Field(
        description="Pass as `cursor` to get the next page; null on the last page. A page as long as `limit` may be "
        "the last one and still have a cursor, whose page is then empty: stop at null, not at a short page"
    )


class OrgPage(Page):
    items: list[OrgSummary]


class UserPage(Page):
    items: list[User]


class TicketPage(Page):
    items: list[Ticket]


class DeletionAccepted(BaseModel):
    org_id: OrgId
    status: Literal["deleting"] = "deleting"
    message: str = "The delete continues in the background; GET the org until it is 404"


class OrgWithUsers(BaseModel):
    org: Org
    users: list[User]
    next_cursor: str | None = Field(description="Continues on GET /orgs/{org_id}/users")


class UserWithTickets(BaseModel):
    user: User
    tickets: list[Ticket]
    next_cursor: str | None = Field(description="Continues on GET /orgs/{org_id}/users/{user_id}/tickets")
