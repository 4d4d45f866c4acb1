"""Which events end access (derived from the contract's catalogue), what a well-formed Authorization
header is, and the revocations function's one flush per batch, and its second one, later."""

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


QUEUE_URL = "https://sqs.us-east-1.amazonaws.com/123456789012/revocations"


class FakeApiGateway:
    def __init__(self) -> None:
        self.flushes: list[dict] = []
        self.sent: list[dict] = []  # what it queued for itself (SQS SendMessage)

    def flush_stage_authorizers_cache(self, **request) -> None:
        self.flushes.append(request)

    def send_message(self, **request) -> None:
        self.sent.append(request)


@pytest.fixture
def revocations(monkeypatch):
    gateway, slept = FakeApiGateway(), []
    monkeypatch.setenv("REST_API_ID", "abc123")
    monkeypatch.setenv("STAGE", "prod")
    monkeypatch.setenv("QUEUE_URL", QUEUE_URL)
    monkeypatch.setattr(handler, "_apigateway", gateway)
    monkeypatch.setattr(handler, "_sqs", gateway)
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
    assert gateway.flushes == [] and slept == [] and gateway.sent == []


def test_a_flushed_change_queues_one_second_flush_for_after_any_decision_begun_before_it(revocations):
    # Given a batch of changes (a decision that read before them may answer after this flush, and be cached)
    gateway, _ = revocations

    # When it is flushed
    handler.lambda_handler(_records("Organization Suspended", "User Deleted"), None)

    # Then one message to its own queue brings a second flush, once the authorizer's timeout is over
    body = json.dumps({"detail-type": handler.FLUSH_AGAIN})
    assert gateway.sent == [{"QueueUrl": QUEUE_URL, "MessageBody": body, "DelaySeconds": handler.AGAIN_AFTER_SECONDS}]
    assert handler.FLUSH_AGAIN not in DETAILS  # no lifecycle event's detail-type


def test_the_second_flush_flushes_once_and_queues_nothing(revocations):
    gateway, slept = revocations

    handler.lambda_handler(_records(handler.FLUSH_AGAIN, handler.FLUSH_AGAIN, "Ticket Opened"), None)

    assert gateway.flushes == [{"restApiId": "abc123", "stageName": "prod"}]
    assert gateway.sent == [] and len(slept) == 1
