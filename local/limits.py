"""The local gateway's usage plans: per org, a token bucket at its plan's rate and burst and a
daily counter, as API Gateway applies a usage plan to each API key (one key per org, and one the
operators share). ``RATE_LIMITS=off make run`` turns them off; the tests run with them off, except
the tests of this module, which inject a clock.

The plan comes from the authorizer's answer (its context's ``plan``). Until the gateway has one, a
plan missing from the authorizer's context is read from the org item (one GetItem, projection ``plan``) and kept
for PLAN_TTL_SECONDS, as the authorizer's decision would be cached: a plan change reaches the
bucket within that time, as it reaches the usage plan within minutes on AWS.
"""

import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controlplane.http import auth
from controlplane.models import plans
from controlplane.models.plans import RequestLimits

DAY_SECONDS = 86_400
PLAN_TTL_SECONDS = 60.0
Clock = Callable[[], float]
# An epoch timestamp's float has ~0.2 us of resolution: ten 0.1 s refills may add up to 0.999999 tokens.
_EPSILON = 1e-5


@dataclass(frozen=True)
class Refusal:
    """A request over a limit: 429 ``throttled`` with this message and Retry-After (seconds)."""

    message: str
    retry_after: int


@dataclass
class _Usage:
    tokens: float
    refilled_at: float
    day: int
    today: int = 0


@dataclass
class Limiter:
    """Admits or refuses each request of a usage key (an org id, or the operators'). ``clock`` is
    seconds since the epoch: its UTC day is the daily quota's day, as API Gateway's."""

    clock: Clock = time.time
    plan_of_org: Callable[[str], str | None] | None = None
    _usage: dict[str, _Usage] = field(default_factory=dict)
    _plans: dict[str, tuple[str, float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def admit(self, context: dict[str, Any]) -> Refusal | None:
        key, plan = self.usage_key(context)
        return self.take(key, plans.request_limits(plan))

    def usage_key(self, context: dict[str, Any]) -> tuple[str, str]:
        """Whose bucket a request spends, and its plan: the org's, or the operators' one. ``context``
        is the authorizer's, which carries the org's plan."""
        caller = auth.caller_from(context)
        if caller.operator:
            return plans.OPERATORS, plans.OPERATORS
        key = caller.org_id or caller.subject  # a token without an org is refused later; it still counts
        plan = context.get("plan") or (self._plan(caller.org_id) if caller.org_id else None)
        return key, plan if plan in plans.REQUEST_LIMITS else plans.DEFAULT_PLAN

    def take(self, key: str, limits: RequestLimits) -> Refusal | None:
        """Spend one request of ``key``'s bucket and day; nothing is spent by a refused request."""
        now = self.clock()
        day = int(now // DAY_SECONDS)
        with self._lock:
            usage = self._usage.setdefault(key, _Usage(tokens=limits.burst, refilled_at=now, day=day))
            usage.tokens = min(limits.burst, usage.tokens + (now - usage.refilled_at) * limits.per_second)
            usage.refilled_at = now
            if usage.day != day:
                usage.day, usage.today = day, 0
            if limits.per_day is not None and usage.today >= limits.per_day:
                return Refusal(plans.QUOTA_EXCEEDED_MESSAGE, math.ceil((day + 1) * DAY_SECONDS - now))
            if usage.tokens < 1 - _EPSILON:
                return Refusal(plans.THROTTLED_MESSAGE, max(1, math.ceil((1 - usage.tokens) / limits.per_second)))
            usage.tokens -= 1
            usage.today += 1
        return None

    def _plan(self, org_id: str) -> str | None:
        cached = self._plans.get(org_id)
        if cached and self.clock() - cached[1] < PLAN_TTL_SECONDS:
            return cached[0]
        plan = (self.plan_of_org or _stored_plan)(org_id)
        if plan is not None:
            self._plans[org_id] = (plan, self.clock())
        return plan


def _stored_plan(org_id: str) -> str | None:
    """The seam until the authorizer's context carries the plan: the org item's, with one GetItem."""
    from controlplane import config
    from controlplane.dal import keys

    item = (
        config.dynamodb()
        .get_item(
            TableName=config.settings().table_name,
            Key={name: {"S": value} for name, value in keys.org_key(org_id).items()},
            ProjectionExpression="#plan",
            ExpressionAttributeNames={"#plan": "plan"},
        )
        .get("Item")
    )
    return item["plan"]["S"] if item else None


def from_environment() -> Limiter | None:
    """The gateway's limiter, or None when RATE_LIMITS=off."""
    setting = os.environ.get("RATE_LIMITS", "on").strip().lower()
    if setting not in ("on", "off"):
        raise ValueError(f"RATE_LIMITS must be on or off, not {setting!r}")
    return Limiter() if setting == "on" else None
