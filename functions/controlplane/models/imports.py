"""Bulk onboarding: the body of ``POST /orgs/{org_id}/user-imports`` and the import resource."""

import functools
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from controlplane.models.errors import OrgSuspended
from controlplane.models.ids import ULID_PATTERN
from controlplane.models.resources import OrgId, Request, Timestamp, UserId

MOST_ROWS = 10_000
ECHOED_CHARS, MESSAGE_CHARS = 64, 300  # what a refused row echoes of its user_id (valid: 63 at most), and why
ImportId = Annotated[str, Field(pattern=ULID_PATTERN, examples=["01JD3Q0Z6V7S3M8E2K9XWQY4PB"])]
ImportStatus = Literal["running", "done"]
# Why a row did not become a user: not a valid user (``validation_error``), the same user_id earlier
# in the file (``duplicate``), a user of that id in the org already (``already_exists``), no seat
# left on the plan (``quota_exceeded``), no such ``unit`` in the org (``not_found``), or the org was
# suspended or deleted while it ran (``org_suspended``, ``not_found``).
RefusalCode = Literal["validation_error", "duplicate", "already_exists", "quota_exceeded", "org_suspended", "not_found"]


def refusal(row: int, user_id: str | None, code: str, message: str) -> dict[str, Any]:
    """A refused row as its part stores it, what it echoes of the row cut short: a refused row's user_id is
    whatever was sent, and a part of 97 must stay far below the item limit (dal.imports, "How big a part
    gets"), and 10,000 refused rows within the 6 MB a Lambda function may answer (``echoed``)."""
    if user_id is not None and echoed(user_id, ECHOED_CHARS) != user_id:
        user_id = echoed(user_id, ECHOED_CHARS - 1) + "…"
    return {"row": row, "user_id": user_id, "code": code, "message": echoed(message, MESSAGE_CHARS)}


def echoed(text: str, room: int) -> str:
    """The longest start of ``text`` that takes at most ``room`` bytes in an answer as Lambda returns it:
    ``room`` characters of plain ASCII, fewer of quotes, backslashes, control characters or any beyond
    ASCII, whose escapes take 4 to 14 bytes there. Cut by characters alone, 10,000 refused rows echoing
    such characters (two bytes each in the request) made an answer over 6 MB: a 502, and the import's
    id lost."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return text[:room]
    taken = 0
    for end, character in enumerate(text):
        taken += _room(character)
        if taken > room:
            return text[:end]
    return text


@functools.lru_cache(maxsize=1024)
def _room(character: str) -> int:
    """The bytes a character takes in an answer as Lambda returns it: the body's JSON (escaped to ASCII,
    as the resolver writes it) is a string in the JSON of the response."""
    return len(json.dumps(json.dumps(character))) - len(json.dumps(json.dumps("")))


def suspended(org_id: str) -> OrgSuspended:
    """A suspended org imports no one (as it takes no new user): reactivate it first."""
    return OrgSuspended(f"Organization {org_id} is suspended; reactivate it before importing users")


class UserImportCreate(Request):
    rows: list[dict[str, Any]] = Field(
        min_length=1,
        max_length=MOST_ROWS,
        description="Up to 10,000 users, each as `POST /orgs/{org_id}/users` takes one. A row that is not "
        "valid is refused on its own, with its reason; the others go in. A row that is not an object refuses "
        "the whole import (422)",
        examples=[[{"user_id": "alice", "name": "Alice", "email": "alice@example.com", "role": "admin"}]],
    )


class RefusedRow(BaseModel):
    row: int = Field(description="Its place in `rows`, from 0", examples=[41])
    user_id: str | None = Field(
        description="The row's user_id, if it had one; one longer than 64 characters is cut to 63 and `…` "
        "(fewer characters where they are escaped in the answer: quotes, control characters, beyond ASCII)",
        examples=["alice"],
    )
    code: RefusalCode
    message: str = Field(
        description="Why, in at most 300 characters (fewer where they are escaped in the answer)",
        examples=["The free plan allows 5 users and the organization has 5"],
    )


class SignInFailure(BaseModel):
    user_id: UserId
    reason: str = Field(description="What Cognito answered, the last time", examples=["The sign-in directory is busy"])
    attempts: int = Field(description="Tries so far; the job tries again until it has tried 3 times", examples=[1])


class SignIns(BaseModel):
    done: int = Field(description="Users whose Cognito sign-in (and invitation e-mail) exists", examples=[990])
    pending: int = Field(description="Users whose sign-in the job has not created yet", examples=[0])
    failed: list[SignInFailure] = Field(description="Users whose sign-in failed, with why; retried by the job")


class UserImport(BaseModel):
    import_id: ImportId
    org_id: OrgId
    status: ImportStatus = Field(
        description="`running` until every row is decided and every sign-in created or tried 3 times"
    )
    total: int = Field(description="Rows sent", examples=[1000])
    created: int = Field(description="Users created so far", examples=[995])
    pending: int = Field(description="Rows not decided yet", examples=[0])
    refused: list[RefusedRow] = Field(description="Every refused row, in row order, with its reason")
    sign_ins: SignIns
    created_at: Timestamp
    updated_at: Timestamp
