"""The isolation matrix's time column over HTTP (local.isolation.REVOCATIONS): against a deployment,
a token used just before a user's deletion, an admin's demotion or a suspension is refused within
REVOCATION_SECONDS after it, not the authorizer cache's TTL (functions/revocations flushes it), and
a reactivated org's token is served again within the same bound. In an org of this test's own."""

import os
import time
from collections.abc import Callable

import pytest

from cpctl.client import Client
from cpctl.errors import ApiError
from e2e import waits
from e2e.conftest import delete_org, limits_ready, new_id
from local import isolation

POLL_SECONDS = 0.25
# 5 s, then the second flush 9 s after the first (functions/revocations AGAIN_AFTER_SECONDS), and cold starts.
DEPLOYED_REVOCATION_SECONDS = 20.0


def _answer(call: Callable[[], object]) -> tuple[int, str | None]:
    """The status and error code of ``call``'s answer (200 and None when it is served)."""
    try:
        call()
    except ApiError as error:
        return error.status, error.code
    return 200, None


def _refused(case: str) -> tuple[int, str]:
    """The status and code local.isolation.REVOCATIONS gives ``case``."""
    _, _, status, code = isolation.REVOCATIONS[case]
    return status, code


def _bound() -> float:
    """REVOCATION_SECONDS locally. On a deployment, SECURITY.md's AWS bound: the flush comes through
    the stream, the events function, EventBridge, SQS and the revocations function (on a fresh stack,
    cold starts among them), and a decision made across the first flush lasts until the second,
    AGAIN_AFTER_SECONDS later. E2E_REVOCATION_SECONDS overrides it."""
    if override := os.environ.get("E2E_REVOCATION_SECONDS"):
        return float(override)
    return DEPLOYED_REVOCATION_SECONDS if waits.on_deployment() else isolation.REVOCATION_SECONDS


def _within_bound(call: Callable[[], object], wanted: tuple[int, str | None], what: str) -> None:
    """Until ``call`` is answered ``wanted``; past the bound, the failure shows the last answer: still
    served is a flush that did not come, another refusal is not."""
    started, bound = time.monotonic(), _bound()
    while (answer := _answer(call)) != wanted:
        waited = time.monotonic() - started
        assert waited < bound, f"not {what} {wanted} within {bound:g} s; last answer: {answer}"
        time.sleep(POLL_SECONDS)


@pytest.fixture
def org_r(target, operator):
    """An org of this test's own, admin root and member alice, and a client for each."""
    if target.no_user_tokens:  # before any user: each is an invitation e-mail, of Cognito's 50 a day
        pytest.skip(target.no_user_tokens)
    org_id = new_id()
    operator.create_org(org_id, name="E2E revocation", plan="enterprise")
    try:
        for user_id, role in (("root", "admin"), ("alice", "member")):
            operator.create_user(org_id, user_id, name=user_id.title(), email=f"{user_id}@{org_id}.example", role=role)
        tokens = {role: target.token_for(org_id, user, role) for user, role in (("root", "admin"), ("alice", "member"))}
        if None in tokens.values():
            pytest.skip(target.no_user_tokens)
        callers = {role: target.client(token) for role, token in tokens.items()}
        limits_ready(callers["admin"], org_id)
        yield org_id, callers
    finally:
        try:
            if operator.get_org(org_id).status == "suspended":
                operator.activate_org(org_id)
        finally:  # the org goes even if that read fails (an expired token, a 503): none left behind
            delete_org(operator, org_id)


def test_a_deleted_users_token_is_refused_within_the_bound(operator, org_r):
    org_id, callers = org_r
    member: Client = callers["member"]
    assert _answer(lambda: member.list_users(org_id)) == (200, None)

    operator.delete_user(org_id, "alice")

    _within_bound(lambda: member.list_users(org_id), _refused("user deleted"), "refused")


def test_a_demoted_admins_token_loses_the_admins_routes_within_the_bound(operator, org_r):
    org_id, callers = org_r
    admin: Client = callers["admin"]
    assert _answer(lambda: admin.list_activity(org_id)) == (200, None)

    operator.update_user(org_id, "root", role="member")

    _within_bound(lambda: admin.list_activity(org_id), _refused("admin demoted"), "refused")


def test_suspension_and_reactivation_take_effect_within_the_bound(operator, org_r):
    org_id, callers = org_r
    member: Client = callers["member"]
    assert _answer(lambda: member.get_org(org_id)) == (200, None)

    operator.suspend_org(org_id, "e2e: unpaid")
    _within_bound(lambda: member.get_org(org_id), _refused("org suspended"), "refused")

    operator.activate_org(org_id)
    _within_bound(lambda: member.get_org(org_id), (200, None), "served again")
