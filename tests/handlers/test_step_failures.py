"""Each multi-step write, failed at each of its DynamoDB requests in turn (an InternalServerError
after botocore's retries): the answer is a 503 or the route's own refusal, never a 500, and what is
stored stays consistent (seats equal the users, no unit left marked, no lock that nothing releases);
asked again, the same request finishes."""

import boto3
import pytest
from botocore.exceptions import ClientError

from controlplane import config
from controlplane.dal import keys, seats, tree
from controlplane.dal.table import api_table
from tests.api import call, create_org, create_ticket, create_user, deliver
from tests.handlers.test_org_units import create_unit


class FailAt:
    """A before-call hook that fails the ``at``-th DynamoDB request the functions send (1-based),
    as DynamoDB does when it answers 500 after botocore's retries; counts them all."""

    def __init__(self) -> None:
        self.at, self.sent = 0, 0

    def arm(self, at: int) -> None:
        self.at, self.sent = at, 0

    def __call__(self, model, **_):
        self.sent += 1
        if self.sent == self.at:
            error = {"Error": {"Code": "InternalServerError", "Message": "injected"}}
            raise ClientError({**error, "ResponseMetadata": {"HTTPStatusCode": 500}}, model.name)


@pytest.fixture
def fail_at(table):
    hook = FailAt()
    config.dynamodb().meta.events.register("before-call.dynamodb", hook)
    yield hook
    config.dynamodb().meta.events.unregister("before-call.dynamodb", hook)


def _sweep(fail_at: FailAt, given, when, then, done_before=(), accepted=False) -> list[str]:
    """``given(org)`` in a new org for each request of ``when(org)`` in turn, that request failed:
    ``when`` answers a 503 (or, if ``accepted``, a 202), ``then(org, reply)`` holds, and ``when``
    asked again succeeds (or, where the failed request had done the work, answers one of
    ``done_before``). The orgs it used."""
    given("dry")
    fail_at.arm(0)
    assert when("dry").status < 300
    requests = fail_at.sent
    assert requests > 1
    for at in range(1, requests + 1):
        org_id = f"o{at}"
        given(org_id)
        fail_at.arm(at)
        reply = when(org_id)
        fail_at.arm(0)
        assert reply.status == 503 or (accepted and reply.status == 202), (at, reply.status, reply.body)
        then(org_id, reply)
        again = when(org_id)
        assert again.status < 300 or again.status in done_before, (at, again.status, again.body)
    return ["dry", *(f"o{at}" for at in range(1, requests + 1))]


def _stored(org_id: str) -> list[dict]:
    """Every item of an org's partitions (test-only inspection with Scan)."""
    items = boto3.client("dynamodb", endpoint_url=config.dynamodb().meta.endpoint_url).scan(TableName=api_table().name)[
        "Items"
    ]
    return [i for i in items if i["PK"]["S"] == f"ORG#{org_id}" or i["PK"]["S"].startswith(f"ORG#{org_id}#")]


def _assert_consistent(org_id: str) -> None:
    """Seats equal the users; the tree item counts the units; no unit marked by a live request."""
    table = api_table()
    _, counter = seats.read(table, org_id, consistent=True)
    users = [i for i in _stored(org_id) if i["PK"]["S"] == f"ORG#{org_id}" and i["SK"]["S"].startswith("USER#")]
    if counter is not None:
        assert int(counter[seats.COUNT]) == len(users), org_id
    units = [i for i in _stored(org_id) if i["SK"]["S"].startswith("UNIT#")]
    tree_item = table.get(keys.tree_key(org_id), consistent=True)
    if tree_item is not None:
        assert int(tree_item.get(tree.UNIT_COUNT, 0)) == len(units), org_id
        assert tree.MOVE not in tree_item, (org_id, tree_item[tree.MOVE])
    for unit in units:
        assert "moving" not in unit and "deleting" not in unit, (org_id, unit)


def _org_with_units(org_id: str) -> None:
    assert create_org(org_id, plan="pro").status == 201
    for unit_id, parent_id in [("eng", None), ("platform", "eng"), ("ops", None)]:
        assert create_unit(unit_id, parent_id, org_id=org_id).status == 201
    assert create_user(org_id, "cid", unit="platform").status == 201


def test_a_unit_delete_failed_at_any_request_leaves_no_mark_and_goes_when_asked_again(fail_at):
    _sweep(
        fail_at,
        _org_with_units,
        lambda org_id: call("DELETE", f"/orgs/{org_id}/units/ops"),
        lambda org_id, _: _assert_consistent(org_id),
    )


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # the queue is moto's
def test_a_move_failed_at_any_request_leaves_no_lock_once_its_queued_rest_has_run(deletions_queue, fail_at):
    sqs = boto3.client("sqs")

    def then(org_id: str, reply) -> None:
        # a 503 left no lock; a 202 queued the rest, which leaves none once it has run
        messages = sqs.receive_message(QueueUrl=deletions_queue, MaxNumberOfMessages=10).get("Messages", [])
        assert len(messages) == (reply.status == 202), (org_id, reply.status, reply.body)
        if messages:
            assert deliver(messages) == {"batchItemFailures": []}
            sqs.delete_message(QueueUrl=deletions_queue, ReceiptHandle=messages[0]["ReceiptHandle"])
        _assert_consistent(org_id)

    _sweep(
        fail_at,
        _org_with_units,
        lambda org_id: call("PATCH", f"/orgs/{org_id}/units/platform", {"parent_id": "ops"}),
        then,
        accepted=True,
    )


def test_a_move_failed_at_any_request_with_no_queue_leaves_no_lock_once_its_unit_is_read(fail_at):
    def then(org_id: str, reply) -> None:
        # make run's: a 503 left no lock; a 202 left the rest to the next request on the org's units,
        # here the GET its answer asks for, which finishes it
        if reply.status == 202:
            read = call("GET", f"/orgs/{org_id}/units/platform")
            assert (read.status, read.body["moving"]) == (200, False), (org_id, read.body)
        _assert_consistent(org_id)

    _sweep(
        fail_at,
        _org_with_units,
        lambda org_id: call("PATCH", f"/orgs/{org_id}/units/platform", {"parent_id": "ops"}),
        then,
        accepted=True,
    )


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # the queue is moto's
def test_a_queued_move_whose_job_fails_at_any_request_finishes_when_delivered_again(
    deletions_queue, fail_at, monkeypatch
):
    from controlplane.logic import moves

    monkeypatch.setattr(moves, "MOVE_IN_REQUEST", 1)  # every move goes to the queue
    sqs = boto3.client("sqs")

    def job(org_id: str):
        """The move's job, as the queue delivers it: its answer, as the event source's batch result."""
        assert call("PATCH", f"/orgs/{org_id}/units/platform", {"parent_id": "ops"}).status == 202
        [message] = sqs.receive_message(QueueUrl=deletions_queue, MaxNumberOfMessages=10)["Messages"]
        sqs.delete_message(QueueUrl=deletions_queue, ReceiptHandle=message["ReceiptHandle"])
        return message

    messages = {}

    def given(org_id: str) -> None:
        _org_with_units(org_id)
        messages[org_id] = job(org_id)

    def when(org_id: str):
        """The job delivered: 200 if it ended its message, 503 if it failed it (SQS delivers it again)."""
        from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError

        try:
            failed = deliver([messages[org_id]])["batchItemFailures"]
        except BatchProcessingError as every_record_failed:  # Lambda's whole batch comes again
            failed = str(every_record_failed)
        return type("Delivered", (), {"status": 503 if failed else 200, "body": failed})()

    def then(org_id: str, _) -> None:
        assert not sqs.receive_message(QueueUrl=deletions_queue).get("Messages")  # SQS delivers it again

    orgs = _sweep(fail_at, given, when, then)

    for org_id in orgs:
        _assert_consistent(org_id)
        assert call("GET", f"/orgs/{org_id}/units/platform").body["path"] == "/ops/platform"
        assert call("GET", f"/orgs/{org_id}/users/cid").body["unit"] == "platform"
        assert [u["user_id"] for u in call("GET", f"/orgs/{org_id}/units/ops/users").body["items"]] == ["cid"]


def test_a_unit_create_failed_at_any_request_counts_only_what_is_stored(fail_at):
    _sweep(
        fail_at,
        _org_with_units,
        lambda org_id: create_unit("db", "platform", org_id=org_id),
        lambda org_id, _: _assert_consistent(org_id),
    )


def test_a_user_delete_failed_at_any_request_keeps_seats_exact_and_goes_when_asked_again(fail_at):
    def given(org_id: str) -> None:
        _org_with_units(org_id)
        assert create_ticket(org_id, "cid").status == 201

    _sweep(
        fail_at,
        given,
        lambda org_id: call("DELETE", f"/orgs/{org_id}/users/cid"),
        lambda org_id, _: _assert_consistent(org_id),
        done_before=(404,),  # failed after the user went (their tickets' sweep is the marker's)
    )


def test_an_org_delete_failed_at_any_request_with_no_queue_is_finished_by_its_next_get_once_it_began(fail_at):
    def given(org_id: str) -> None:
        _org_with_units(org_id)
        assert create_ticket(org_id, "cid").status == 201

    def then(org_id: str, reply) -> None:
        # make run's: a 503 only before the delete began; a 202 (half deleted, and marked: its counter
        # goes with it, not user by user) left the rest to the org's next GET, which its answer asks for
        if reply.status == 503:
            assert call("GET", f"/orgs/{org_id}").body["deleting_since"] is None, org_id
            return
        assert call("GET", f"/orgs/{org_id}").status == 404, org_id
        assert _stored(org_id) == []

    orgs = _sweep(
        fail_at, given, lambda org_id: call("DELETE", f"/orgs/{org_id}"), then, done_before=(404,), accepted=True
    )

    assert {org_id: _stored(org_id) for org_id in orgs} == {org_id: [] for org_id in orgs}


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # the queue is moto's
def test_an_org_delete_failed_at_any_request_in_the_cloud_is_finished_by_the_queue_once_it_began(
    deletions_queue, fail_at
):
    sqs = boto3.client("sqs")

    def given(org_id: str) -> None:
        _org_with_units(org_id)
        assert create_ticket(org_id, "cid").status == 201

    def then(org_id: str, reply) -> None:
        # a 503 only before the delete began (a marked org is never left for no job to finish); a 202
        # queued the rest, which leaves nothing of the org once it has run
        if reply.status == 503:
            assert call("GET", f"/orgs/{org_id}").body["deleting_since"] is None, org_id
        messages = sqs.receive_message(QueueUrl=deletions_queue, MaxNumberOfMessages=10).get("Messages", [])
        assert len(messages) == (reply.status == 202), (org_id, reply.status, reply.body)
        if messages:
            assert deliver(messages) == {"batchItemFailures": []}
            sqs.delete_message(QueueUrl=deletions_queue, ReceiptHandle=messages[0]["ReceiptHandle"])
            assert _stored(org_id) == []

    orgs = _sweep(
        fail_at, given, lambda org_id: call("DELETE", f"/orgs/{org_id}"), then, done_before=(404,), accepted=True
    )

    assert {org_id: _stored(org_id) for org_id in orgs} == {org_id: [] for org_id in orgs}


def test_an_import_failed_at_any_request_keeps_seats_exact_and_one_accepted_ends_on_its_next_get(fail_at):
    rows = [{"user_id": f"u{i}", "name": "U", "email": f"u{i}@example.com", "unit": "eng"} for i in range(3)]

    def then(org_id: str, reply) -> None:
        _assert_consistent(org_id)
        if reply.status == 202:  # stored, and stopped in line: its next GET runs it on (make run's way)
            done = call("GET", f"/orgs/{org_id}/user-imports/{reply.body['import_id']}")
            assert (done.status, done.body["status"], done.body["created"]) == (200, "done", 3), done.body
            _assert_consistent(org_id)

    _sweep(
        fail_at,
        _org_with_units,
        lambda org_id: call("POST", f"/orgs/{org_id}/user-imports", {"rows": rows}),
        then,
        accepted=True,
    )


def test_a_plan_change_failed_at_any_request_keeps_the_limit_on_one_item(fail_at):
    _sweep(
        fail_at,
        _org_with_units,
        lambda org_id: call("PATCH", f"/orgs/{org_id}", {"plan": "enterprise"}),
        lambda org_id, _: _assert_consistent(org_id),
    )
