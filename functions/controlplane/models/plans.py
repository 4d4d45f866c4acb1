"""The plan catalogue: what each plan allows an organization. The one definition: ``models.Plan``
is derived from it, the org item stores the limit of its plan, ``GET /plans`` serves it, the stack
builds one API Gateway usage plan per plan from it, and the local gateway enforces the same limits.

A quota is named after what it counts (``users``: seats). The org item keeps, per quota, the count
and the limit side by side (``user_count``, ``user_limit``) so that the write that adds a user can
compare them in its own condition, with no read first.

Request limits are per tenant, not per plan: each org has its own API key in its plan's usage plan,
so one tenant's burst never spends another's. Kept import-light: infra/ and the local gateway read it.
"""

from typing import NamedTuple

CATALOGUE: dict[str, dict[str, int]] = {
    "free": {"users": 5},
    "pro": {"users": 50},
    "enterprise": {"users": 1000},
}
DEFAULT_PLAN = "free"

# The org item's attributes for the users quota.
USER_COUNT = "user_count"
USER_LIMIT = "user_limit"


class RequestLimits(NamedTuple):
    """API Gateway's usage plan terms: a token bucket (``per_second`` refill, ``burst`` capacity)
    and a daily quota (None: none)."""

    per_second: int
    burst: int
    per_day: int | None


REQUEST_LIMITS: dict[str, RequestLimits] = {
    "free": RequestLimits(per_second=10, burst=20, per_day=10_000),
    "pro": RequestLimits(per_second=100, burst=200, per_day=1_000_000),
    "enterprise": RequestLimits(per_second=1_000, burst=2_000, per_day=None),
}
# The operators' own usage plan: not a plan an org can be on, so not in CATALOGUE.
OPERATORS = "operators"
OPERATOR_LIMITS = RequestLimits(per_second=200, burst=400, per_day=None)


def limit(plan: str, quota: str = "users") -> int:
    return CATALOGUE[plan][quota]


def request_limits(plan: str) -> RequestLimits:
    """The request limits of a plan, or of the operators' usage plan (``OPERATORS``)."""
    return OPERATOR_LIMITS if plan == OPERATORS else REQUEST_LIMITS[plan]


def usage_plans() -> dict[str, RequestLimits]:
    """Every usage plan the stack creates: one per plan, and the operators'."""
    return {**REQUEST_LIMITS, OPERATORS: OPERATOR_LIMITS}


# What a caller past a limit reads: the same words from API Gateway's THROTTLED and QUOTA_EXCEEDED
# gateway responses (which cannot know the plan, so they name the limit, not its number) and from
# the local gateway.
THROTTLED_MESSAGE = (
    "Too many requests: this organization's rate limit (requests per second, with its burst) is used up; "
    "retry after Retry-After seconds"
)
QUOTA_EXCEEDED_MESSAGE = (
    "Too many requests: this organization's daily quota (requests per day) is used up; it resets at 00:00 UTC"
)
KEY_PENDING_MESSAGE = "Limits for this organization are being set up; retry in a few seconds"
