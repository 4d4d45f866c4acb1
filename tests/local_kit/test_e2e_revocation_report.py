"""The e2e revocation tests' failure, against a fake deployment that refuses a deleted user's
token, but not as the isolation matrix says: the failure shows the answer it got, so a wrong
refusal is not taken for a flush of the authorizer's cache that never came."""

import httpx
import pytest

from cpctl.errors import ApiError
from e2e import test_e2e_revocation


class RefusedOtherwise:
    """A member served once, then refused ``403 forbidden`` (not ``session_ended``)."""

    def __init__(self) -> None:
        self.calls = 0

    def list_users(self, org_id: str) -> list[object]:
        self.calls += 1
        if self.calls > 1:
            raise ApiError(httpx.Response(403, json={"error": {"code": "forbidden", "message": "No"}}))
        return []

    def delete_user(self, org_id: str, user_id: str) -> None:
        pass


def test_a_refusal_other_than_the_expected_one_is_named_in_the_failure(monkeypatch):
    # Given a deployment whose refusal of a deleted user's token has the wrong code, and a short bound
    monkeypatch.setenv("E2E_REVOCATION_SECONDS", "0.05")
    monkeypatch.setattr(test_e2e_revocation, "POLL_SECONDS", 0.001)
    member = RefusedOtherwise()

    # When the deleted user's test runs; Then it fails showing the answer it last got
    with pytest.raises(AssertionError, match=r"last answer: \(403, 'forbidden'\)"):
        test_e2e_revocation.test_a_deleted_users_token_is_refused_within_the_bound(
            member, ("e2e-1", {"member": member})
        )
