"""The local gateway's per-org limits (local/limits.py): a token bucket at the plan's rate and burst
and a daily quota, per org. Every test drives a clock of its own: nothing here depends on timing."""

import httpx
import pytest

from controlplane.models import plans
from local import limits, server, tokens
from local.apigw import OPERATOR_CONTEXT, authorizer_context
from local.limits import DAY_SECONDS, Limiter
from tests.api import create_org, create_user

FREE = plans.request_limits("free")
NOON = 20_000 * DAY_SECONDS + DAY_SECONDS / 2  # a day's noon, UTC: the day ends in 43,200 s


class Clock:
    def __init__(self, now: float = NOON):
        self.now = now

    def __call__(self) -> float:
        return self.now


def admitted(limiter: Limiter, who: dict, count: int) -> int:
    return sum(limiter.admit(who) is None for _ in range(count))


def org_admin(org_id: str, plan: str | None = None) -> dict:
    """An org admin as the authorizer hands them on, with the org's plan (none: not in the context)."""
    return authorizer_context("admin", org_id, "root", plan=plan or "")


def test_a_free_org_gets_its_burst_at_once_and_then_429_with_retry_after():
    limiter = Limiter(clock=Clock())

    assert admitted(limiter, org_admin("acme", "free"), 20) == 20
    refused = limiter.admit(org_admin("acme", "free"))

    assert refused == limits.Refusal(plans.THROTTLED_MESSAGE, 1)


def test_the_bucket_refills_at_the_plans_rate():
    clock = Clock()
    limiter = Limiter(clock=clock)
    admitted(limiter, org_admin("acme", "free"), 20)

    clock.now += 1.0

    assert admitted(limiter, org_admin("acme", "free"), 20) == 10  # 10 per second: one second, ten more


def test_a_sustained_sender_gets_exactly_the_rate_over_time():
    clock = Clock()
    limiter = Limiter(clock=clock)
    accepted = 0
    for _ in range(1000):  # 100 requests a second for 10 s
        accepted += limiter.admit(org_admin("acme", "free")) is None
        clock.now += 0.01

    assert accepted == 20 + 10 * 10 - 1  # the burst, then 10 per second (the last refill lands after the end)


def test_a_refused_request_spends_nothing():
    clock = Clock()
    limiter = Limiter(clock=clock)
    admitted(limiter, org_admin("acme", "free"), 20)
    for _ in range(50):
        assert limiter.admit(org_admin("acme", "free")) is not None

    clock.now += 0.1

    assert admitted(limiter, org_admin("acme", "free"), 5) == 1


def test_one_orgs_flood_leaves_another_orgs_bucket_whole():
    limiter = Limiter(clock=Clock())
    admitted(limiter, org_admin("noisy", "free"), 500)

    assert admitted(limiter, org_admin("quiet", "free"), 20) == 20
    assert admitted(limiter, org_admin("big", "enterprise"), 2_000) == 2_000
    assert limiter.admit(org_admin("big", "enterprise")) is not None


def test_every_member_of_an_org_spends_the_orgs_one_bucket():
    limiter = Limiter(clock=Clock())
    admitted(limiter, org_admin("acme", "free"), 15)

    member = authorizer_context("member", "acme", "alice", plan="free")

    assert admitted(limiter, member, 10) == 5


def test_operators_share_their_own_usage_plan():
    limiter = Limiter(clock=Clock())

    assert admitted(limiter, OPERATOR_CONTEXT, 401) == 400
    assert admitted(limiter, org_admin("acme", "free"), 1) == 1


def test_the_daily_quota_refuses_until_midnight_utc_and_names_itself():
    clock = Clock()
    limiter = Limiter(clock=clock)
    for _ in range(FREE.per_day):
        assert limiter.admit(org_admin("acme", "free")) is None
        clock.now += 0.125  # 8 per second, within the rate (and exact in binary)

    refused = limiter.admit(org_admin("acme", "free"))

    assert refused is not None and refused.message == plans.QUOTA_EXCEEDED_MESSAGE
    assert refused.retry_after == DAY_SECONDS // 2 - FREE.per_day // 8
    clock.now += refused.retry_after
    assert limiter.admit(org_admin("acme", "free")) is None


def test_enterprise_has_no_daily_quota():
    clock = Clock()
    limiter = Limiter(clock=clock)
    for _ in range(20):
        assert admitted(limiter, org_admin("big", "enterprise"), 2_000) == 2_000
        clock.now += 2.0

    assert admitted(limiter, org_admin("big", "enterprise"), 1) == 1


def test_without_a_plan_in_the_context_the_stored_plan_is_read_once_per_ttl():
    clock, reads = Clock(), []

    def stored(org_id: str) -> str:
        reads.append(org_id)
        return "pro"

    limiter = Limiter(clock=clock, plan_of_org=stored)

    assert admitted(limiter, org_admin("acme"), 201) == 200  # pro's burst
    assert reads == ["acme"]
    clock.now += limits.PLAN_TTL_SECONDS
    limiter.admit(org_admin("acme"))
    assert reads == ["acme", "acme"]


def test_an_unknown_org_or_plan_gets_the_default_plans_limits():
    limiter = Limiter(clock=Clock(), plan_of_org=lambda _: None)

    assert admitted(limiter, org_admin("ghost"), 21) == 20
    assert admitted(limiter, org_admin("odd", "platinum"), 21) == 20


@pytest.mark.parametrize(("setting", "on"), [("on", True), ("off", False), (" OFF ", False)])
def test_rate_limits_setting(monkeypatch, setting, on):
    monkeypatch.setenv("RATE_LIMITS", setting)

    assert (limits.from_environment() is not None) == on


def test_a_rate_limits_setting_that_is_neither_on_nor_off_fails_loudly(monkeypatch):
    monkeypatch.setenv("RATE_LIMITS", "0")

    with pytest.raises(ValueError, match="RATE_LIMITS"):
        limits.from_environment()


def test_the_tests_run_with_limits_off():
    assert limits.from_environment() is None


def test_the_gateway_answers_429_throttled_in_the_error_contract_and_other_orgs_go_on(table, dynamodb_calls):
    create_org("acme", plan="free")
    create_org("big", plan="enterprise")
    create_user("acme", "root", role="admin")
    create_user("big", "root", role="admin")
    free = {"Authorization": tokens.for_user("acme", "root")}
    big = {"Authorization": tokens.for_user("big", "root")}
    dynamodb_calls.clear()

    with server.in_thread(Limiter(clock=Clock())) as url, httpx.Client(base_url=url) as http:
        statuses = [http.get("/orgs/acme", headers=free).status_code for _ in range(20)]
        refused = http.get("/orgs/acme", headers=free)
        other = http.get("/orgs/big", headers=big)

    assert statuses == [200] * 20
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "1"
    assert refused.json()["error"] == {
        "code": "throttled",
        "message": plans.THROTTLED_MESSAGE,
        "request_id": refused.headers["x-amzn-RequestId"],
    }
    assert other.status_code == 200
    # The handlers' one Query each (the org and its seat counter: 21, the refused one sends none); the plan
    # came in the authorizer's context (its own read, on its own client), so the limiter read none.
    assert dynamodb_calls == ["Query"] * (20 + 1)
