"""The one shape of every error on the wire, as the OpenAPI document shows it (``http.errors`` builds
the bodies)."""

from pydantic import BaseModel, Field


class Problem(BaseModel):
    """One thing that failed validation."""

    loc: list[str | int] = Field(
        description="Where: `body`, `query`, `path` or `header`, then the field", examples=[["body", "name"]]
    )
    message: str = Field(examples=["Field required"])
    type: str = Field(description="pydantic's error type", examples=["missing"])


class QuotaDetails(BaseModel):
    quota: str = Field(description="What ran out", examples=["users"])
    limit: int
    used: int
    plan: str


class ErrorBody(BaseModel):
    code: str = Field(examples=["not_found"])
    message: str
    request_id: str
    details: list[Problem] | QuotaDetails | None = Field(
        None, description="What failed validation (for validation_error), or the quota (for quota_exceeded)"
    )


class ErrorResponse(BaseModel):
    """The one shape of every error: the handlers', the local gateway's and API Gateway's own."""

    error: ErrorBody
