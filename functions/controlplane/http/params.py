"""The typed request parameters of the routes: path ids, paging, the optional headers. Powertools
validates each one (422) and documents it in the OpenAPI document from these annotations."""

import re
from typing import Annotated, Literal

from aws_lambda_powertools.event_handler.openapi.params import Header, Path, Query
from pydantic import BeforeValidator, Field

from controlplane.models.ids import SLUG_PATTERN, ULID_PATTERN

DEFAULT_LIMIT = 20


def _as_written(spellings: str, told: str) -> BeforeValidator:
    """A query value read only in the spelling the document gives its type (``spellings``, a
    pattern; ``told`` says it in words), not in every one pydantic's lax mode reads: ``10.0``,
    ``1_0``, `` 5`` or ``+5`` for an integer, ``yes`` or ``0`` for a boolean."""
    pattern = re.compile(spellings)

    def check(value: object) -> object:
        if isinstance(value, str) and not pattern.fullmatch(value):
            raise ValueError(f"must be written {told}")
        return value

    return BeforeValidator(check)


OrgIdPath = Annotated[str, Path(pattern=SLUG_PATTERN, description="Organization slug")]
UserIdPath = Annotated[str, Path(pattern=SLUG_PATTERN, description="User slug")]
UnitIdPath = Annotated[str, Path(pattern=SLUG_PATTERN, description="Unit slug, or `root`")]
Under = Annotated[
    str,
    Query(pattern=SLUG_PATTERN, description="A unit's id: list it and the units below it (default: the whole tree)"),
]
Direct = Annotated[
    bool,
    Query(description="`true`: only the unit's own users, not those of the units below it"),
    _as_written("true|false", "true or false"),
]
TicketIdPath = Annotated[str, Path(pattern=ULID_PATTERN, description="Ticket ULID")]
ImportIdPath = Annotated[str, Path(pattern=ULID_PATTERN, description="User import ULID")]
# The bounds go in a Field of their own: Powertools then validates with the whole annotation (the
# spelling check too) and documents them as before, minimum and maximum.
Limit = Annotated[int, Field(ge=1, le=100), Query(description="Page size"), _as_written("[0-9]+", "in decimal digits")]


def _included_limit(include: str) -> Query:
    """The page size of a ``GET`` whose page comes only with ``include=``: alone, it is refused."""
    return Query(description=f"Size of the `include={include}` page; without `include={include}`, 422")


UsersLimit = Annotated[int, Field(ge=1, le=100), _included_limit("users"), _as_written("[0-9]+", "in decimal digits")]
TicketsLimit = Annotated[
    int, Field(ge=1, le=100), _included_limit("tickets"), _as_written("[0-9]+", "in decimal digits")
]
Cursor = Annotated[str | None, Query(max_length=2048, description="`next_cursor` of the previous page")]
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=255,
        pattern=r"^[\x21-\x7e]+$",
        description="Any unique string (e.g. a UUID): a retry with the same key and body gets the first response",
    ),
]
IncludeUsers = Annotated[
    Literal["users"] | None,
    Query(description="`users`: the org comes with its first `limit` users, and `next_cursor` goes on from there"),
]
IncludeTickets = Annotated[
    Literal["tickets"] | None,
    Query(description="`tickets`: the user comes with their newest `limit` tickets; `next_cursor` goes on"),
]
IfMatch = Annotated[
    str | None,
    Header(
        alias="If-Match", description='The `ETag` you last read, e.g. `"3"`: the change applies only to that version'
    ),
]
