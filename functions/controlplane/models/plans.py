"""The plan catalogue: what each plan allows an organization. The one definition: ``models.Plan``
is derived from it, the org item stores the limit of its plan, and ``GET /plans`` serves it.

A quota is named after what it counts (``users``: seats). The org item keeps, per quota, the count
and the limit side by side (``user_count``, ``user_limit``) so that the write that adds a user can
compare them in its own condition, with no read first.
"""

CATALOGUE: dict[str, dict[str, int]] = {
    "free": {"users": 5},
    "pro": {"users": 50},
    "enterprise": {"users": 1000},
}
DEFAULT_PLAN = "free"

# The org item's attributes for the users quota.
USER_COUNT = "user_count"
USER_LIMIT = "user_limit"


def limit(plan: str, quota: str = "users") -> int:
    return CATALOGUE[plan][quota]
