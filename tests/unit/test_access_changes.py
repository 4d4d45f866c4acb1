"""Which events end access (derived from the contract's catalogue), what a well-formed Authorization
header is, and the revocations function's one flush per batch."""

import json

import pytest

from authorizer.token_format import well_formed
from controlplane.dal import keys
from controlplane.lifecycle import access
from controlplane.lifecycle.contract import DETAILS, KINDS
from revocations import handler


def test_the_events_that_change_access_are_these_and_all_in_the_catalogue():
    assert set(access.ACCESS_CHANGES) == {
        "Organization Suspended",
        "Organization Reactivated",
        "Organization Deletion Started",
        "Organization Deleted",
        "User Deleted",
        "User Role Changed",
    }
    assert set(access.ACCESS_CHANGES) <= set(DETAILS)
    [user] = [kind for kind in KINDS if kind.entity == keys.USER]
    assert user.watched == access.ROLE  # "User Role Changed" is the role's change, not another field's


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("Bearer aa.bb.cc", True),
        ("bearer aa.bb.cc", True),
        ("BEARER  aa.bb.cc", True),
        ("aa.bb.cc", True),
        ("Bearer aa.bb.", False),  # alg: none has no signature
        ("Bearer aa.bb", False),
        ("Basic dXNlcjpwYXNz", False),
        ("Bearer aa.bb.cc extra", False),
        ("Bearer aa.b+b.cc", False),  # base64url, not base64
        ("", False),
    ],
)
def test_a_header_is_well_formed_only_as_a_bearer_jwt(header, expected):
    assert well_formed(header) is expected


class FakeApiGateway:
    def __init__(self) -> None:
        self.flushes: list[dict] = []

    def flush_stage_authorizers_cache(self, **request) -> None:
        self.flushes.append(request)


@pytest.fixture
def revocations(monkeypatch):
    gateway, slept = FakeApiGateway(), []
    monkeypatch.setenv("REST_API_ID", "abc123")
    monkeypatch.setenv("STAGE", "prod")
    monkeypatch.setattr(handler, "_apigateway", gateway)
    monkeypatch.setattr(handler.time, "sleep", slept.append)
    return gateway, slept


def _records(*detail_types: str) -> dict:
    return {"Records": [{"body": json.dumps({"detail-type": detail_type})} for detail_type in detail_types]}


def test_a_burst_of_access_changes_is_one_flush_and_at_least_a_second(revocations):
    gateway, slept = revocations

    handler.lambda_handler(_records(*["User Deleted"] * 9, "Organization Deletion Started"), None)

    assert gateway.flushes == [{"restApiId": "abc123", "stageName": "prod"}]
    [pause] = slept
    assert 0 < pause <= handler.MIN_SECONDS_BETWEEN_FLUSHES


def test_a_batch_without_an_access_change_flushes_nothing(revocations):
    gateway, slept = revocations

    assert handler.lambda_handler(_records("Ticket Opened", "Organization Updated"), None) == {"batchItemFailures": []}
    assert gateway.flushes == [] and slept == []
