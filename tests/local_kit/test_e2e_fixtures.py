"""The e2e suite's own orgs, against a deployment without USER_POOL_ID: each user it creates there
is an invitation e-mail (Cognito's own sends 50 a day for the account), so a test that will skip
for want of user tokens creates none first."""

from types import SimpleNamespace
from unittest.mock import MagicMock

import pytest

from e2e import test_e2e_revocation, test_e2e_suspension

NO_TOKENS = "needs USER_POOL_ID and USER_POOL_CLIENT_ID (and AWS credentials) to sign in org users"


def _operator() -> MagicMock:
    operator = MagicMock()
    operator.get_user_import.return_value.status = "done"
    operator.delete_org.return_value = None  # 204: gone at once
    return operator


@pytest.mark.parametrize(
    "fixture", [test_e2e_revocation.org_r, test_e2e_suspension.org_c], ids=["revocation", "suspension"]
)
def test_a_test_without_user_tokens_skips_before_it_creates_an_org_or_a_user(fixture):
    # Given a deployment the suite cannot sign org users in to
    target = SimpleNamespace(no_user_tokens=NO_TOKENS, token_for=lambda *_: None, client=MagicMock())
    operator = _operator()

    # When the test's org fixture sets up; Then it skips, saying why, and nothing was created
    with pytest.raises(pytest.skip.Exception, match="USER_POOL_ID"):
        next(fixture.__wrapped__(target, operator))
    assert (operator.create_org.call_count, operator.create_user.call_count) == (0, 0)
    assert operator.import_users.call_count == 0


@pytest.mark.parametrize(
    ("fixture", "before_delete"),
    [(test_e2e_revocation.org_r, "get_org"), (test_e2e_suspension.org_c, "update_org")],
    ids=["revocation", "suspension"],
)
def test_a_fixture_whose_cleanup_read_fails_still_deletes_its_org(fixture, before_delete):
    # Given a deployment that signs org users in, and an operator whose call before the org's delete
    # fails at cleanup (an expired token, a 503)
    target = SimpleNamespace(no_user_tokens=None, token_for=lambda *_: "t", client=lambda _: MagicMock())
    operator = _operator()
    getattr(operator, before_delete).side_effect = RuntimeError("503")
    setup = fixture.__wrapped__(target, operator)
    next(setup)

    # When the test ends and the fixture cleans up; Then the failure is raised, but the org was deleted
    with pytest.raises(RuntimeError, match="503"):
        setup.close()
    assert operator.delete_org.call_count == 1
