"""Cascade deletes are complete, survive retries and failures, and finish from the queue when big."""

import json

import boto3
import pytest
from botocore.exceptions import ClientError

from controlplane import config
from controlplane.dal import batches, stamps
from controlplane.dal.codec import to_dynamo
from controlplane.dal.table import Table, api_table
from controlplane.logic import cascade, deletions, tickets
from controlplane.models.resources import TicketCreate
from tests.api import call, create_org, create_ticket, create_user, deliver, member

ORG_USERS = [f"user-{i}" for i in range(10)]


def _items_of(table: str, org_id: str) -> list[dict]:
    """Every item of an org, base table and GSI1 alike (test-only inspection with Scan)."""
    items = boto3.client("dynamodb", endpoint_url=config.dynamodb().meta.endpoint_url).scan(TableName=table)["Items"]
    prefixes = (f"ORG#{org_id}", f"IDEMPOTENCY#{org_id}")
    return [i for i in items if any(i.get(k, {}).get("S", "").startswith(prefixes) for k in ("PK", "GSI1PK"))]


def _bulk_tickets(org_id: str, user_id: str, count: int) -> None:
    items = [tickets.ticket_item(org_id, user_id, TicketCreate(subject=f"t{i}")) for i in range(count)]
    batches.write_all(api_table(), [{"PutRequest": {"Item": to_dynamo(item)}} for item in items])


@pytest.fixture
def acme(table):
    create_org("acme")
    create_org("bolt")
    for user_id in ORG_USERS[:3]:
        create_user("acme", user_id)
        create_ticket("acme", user_id)
    create_user("bolt", "bob")
    create_ticket("bolt", "bob")
    call("POST", "/orgs/acme/users/user-0/tickets", {"subject": "x"}, headers={"Idempotency-Key": ["k1"]})
    return table


@pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)
def test_org_with_10_users_and_10000_tickets_leaves_nothing_behind(table):
    create_org("acme", plan="pro")
    for user_id in ORG_USERS:
        assert create_user("acme", user_id).status == 201
        _bulk_tickets("acme", user_id, 1_000)

    reply = call("DELETE", "/orgs/acme")

    assert reply.status == 204
    assert _items_of(table, "acme") == []


def test_delete_leaves_other_orgs_and_nothing_of_its_own(acme):
    assert call("DELETE", "/orgs/acme").status == 204

    assert _items_of(acme, "acme") == []
    assert len(_items_of(acme, "bolt")) == 4  # the org, its seat counter, a user and a ticket


def test_delete_interrupted_by_a_failure_completes_when_retried(acme, monkeypatch):
    real = batches.delete_all
    calls = []

    def fail_on_the_third_batch(table, items):
        calls.append(1)
        if len(calls) == 3:
            raise ClientError({"Error": {"Code": "InternalServerError", "Message": "injected"}}, "BatchWriteItem")
        return real(table, items)

    with monkeypatch.context() as patch:
        patch.setattr(batches, "delete_all", fail_on_the_third_batch)
        assert call("DELETE", "/orgs/acme").status == 500
    assert _items_of(acme, "acme")  # half done

    assert call("DELETE", "/orgs/acme").status == 204
    assert _items_of(acme, "acme") == []
    assert call("DELETE", "/orgs/acme").status == 404


def test_an_org_delete_reads_the_base_table_strongly_consistent(acme):
    # Given every Query the functions send, recorded
    queries: list[dict] = []
    config.dynamodb().meta.events.register(
        "provide-client-params.dynamodb.Query", lambda params, **_: queries.append(params)
    )

    # When the org is deleted
    assert call("DELETE", "/orgs/acme").status == 204

    # Then each Query of the base table (its users, sweep markers, units, imports, idempotency
    # records) is consistent: an eventually consistent one may miss a user written just before the
    # mark, who would outlive the org with their sign-in and belong to the next org of that id
    base = [q for q in queries if "IndexName" not in q]
    assert len(base) >= 5
    assert [q["KeyConditionExpression"] for q in base if not q.get("ConsistentRead")] == []


def test_no_user_can_join_an_org_being_deleted(acme):
    api_table().mark({"PK": "ORG#acme", "SK": "METADATA#acme"}, stamps.DELETING, "2026-01-01T00:00:00Z")

    assert create_user("acme", "late").status == 404
    assert cascade.deletion_mark("acme") == "2026-01-01T00:00:00Z"  # a GET, with no queue, would run its delete on


@pytest.mark.parametrize(
    "change",
    [{"name": "Renamed"}, {"plan": "pro"}, {"status": "suspended", "suspension_reason": "Legal hold"}],
)
def test_an_org_being_deleted_takes_no_change(acme, change):
    # Given acme's delete under way (its job still to run: the org is still read, with its mark)
    api_table().mark({"PK": "ORG#acme", "SK": "METADATA#acme"}, stamps.DELETING, "2026-01-01T00:00:00Z")
    before = api_table().get({"PK": "ORG#acme", "SK": "METADATA#acme"}, consistent=True)

    # When an operator changes it
    reply = call("PATCH", "/orgs/acme", change)

    # Then it is refused as a user's create in it is (the org is going), and nothing is written: no
    # rename, plan or suspension (nor its event) after the delete began
    assert (reply.status, reply.error_code) == (404, "not_found"), reply.body
    assert api_table().get({"PK": "ORG#acme", "SK": "METADATA#acme"}, consistent=True) == before


def test_unprocessed_items_are_retried_until_written(acme, monkeypatch):
    client = config.dynamodb()
    real = client.batch_write_item
    throttled = []

    def leave_half_unprocessed(RequestItems):
        if not throttled:
            throttled.append(1)
            ((name, requests),) = RequestItems.items()
            half = len(requests) // 2
            if half:
                real(RequestItems={name: requests[half:]})
                return {"UnprocessedItems": {name: requests[:half]}}
            return {"UnprocessedItems": {name: requests}}
        return real(RequestItems=RequestItems)

    monkeypatch.setattr(client, "batch_write_item", leave_half_unprocessed)

    assert call("DELETE", "/orgs/acme").status == 204
    assert throttled
    assert _items_of(acme, "acme") == []


def _gsi1_lags_once(monkeypatch) -> list[str]:
    """GSI1 leaves one of acme's tickets out of one page, as it may for a moment after the ticket is
    written; the ticket it hid is in the list returned."""
    real, hidden = Table.query, []

    def gsi1_lags_once(self, partition, **options):
        items, last = real(self, partition, **options)
        if options.get("on_index") and partition.startswith("ORG#acme#USER#") and items and not hidden:
            hidden.append(items[0]["ticket_id"])
            return items[1:], last
        return items, last

    monkeypatch.setattr(Table, "query", gsi1_lags_once)
    return hidden


def test_tickets_gsi1_shows_late_are_swept_before_the_org_goes(acme, monkeypatch):
    hidden = _gsi1_lags_once(monkeypatch)

    assert call("DELETE", "/orgs/acme").status == 204
    assert hidden
    assert _items_of(acme, "acme") == []


def test_a_users_ticket_gsi1_shows_late_is_swept_after_the_user_goes(acme, monkeypatch):
    hidden = _gsi1_lags_once(monkeypatch)

    assert call("DELETE", "/orgs/acme/users/user-1").status == 204

    # Then nothing of the user is left: no ticket, and no sweep marker
    assert hidden
    assert [i for i in _items_of(acme, "acme") if "user-1" in json.dumps(i)] == []


def test_a_users_delete_waits_for_nothing_where_gsi1_is_synchronous(acme, monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr(cascade.time, "sleep", slept.append)

    assert call("DELETE", "/orgs/acme/users/user-1").status == 204

    assert slept and max(slept) < 0.01  # the sweep ran, with no wait (settle time 0 here)


def test_a_user_delete_an_outage_stops_after_the_user_went_with_no_queue_is_swept_when_asked_again(acme, monkeypatch):
    # Given no queue (make run), and DynamoDB failing (500, after botocore's retries) as the delete
    # goes on to user-0's tickets, once their item is gone
    with monkeypatch.context() as outage:
        outage.setattr(cascade, "delete_tickets_of", _failing_500)
        reply = call("DELETE", "/orgs/acme/users/user-0")
    assert (reply.status, reply.error_code) == (503, "service_unavailable"), reply.body

    # When the delete is asked again, as a 503 says
    again = call("DELETE", "/orgs/acme/users/user-0")

    # Then it is 404, as in the cloud, and it swept the tickets first, as the cloud's queued sweep
    # does: a user created again with that id does not find the deleted user's tickets
    assert again.status == 404, again.body
    assert create_user("acme", "user-0").status == 201
    assert call("GET", "/orgs/acme/users/user-0/tickets").body["items"] == []
    assert [i for i in _items_of(acme, "acme") if i["SK"]["S"].startswith("SWEEP#")] == []


def test_no_ticket_can_be_opened_once_the_users_item_is_gone(acme, monkeypatch):
    # Given a user's delete that has removed their item but not yet their tickets
    opened = []
    real = cascade.delete_tickets_of

    def open_one_first(table, org_id, user_id, *args, **kwargs):
        opened.append(create_ticket("acme", "user-1").status)
        return real(table, org_id, user_id, *args, **kwargs)

    monkeypatch.setattr(cascade, "delete_tickets_of", open_one_first)

    assert call("DELETE", "/orgs/acme/users/user-1").status == 204

    # Then a ticket opened for them meanwhile was refused, and none of theirs is left
    assert opened and set(opened) == {404}
    assert [i for i in _items_of(acme, "acme") if "user-1" in json.dumps(i)] == []


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # SQS exists on moto only
def test_the_queued_sweep_spares_the_tickets_of_a_user_created_again_with_that_id(acme, monkeypatch, deletions_queue):
    hidden = _gsi1_lags_once(monkeypatch)
    # Given a user's delete whose sweep is queued, with one ticket GSI1 did not show yet
    assert call("DELETE", "/orgs/acme/users/user-1").status == 204
    assert hidden
    # When a user of that id is created again and opens a ticket before the sweep runs
    assert create_user("acme", "user-1").status == 201
    new = create_ticket("acme", "user-1").body["ticket_id"]
    _drain(deletions_queue, {"kind": "ticket-sweep", "org_id": "acme", "user_id": "user-1"})

    # Then the old ticket is gone, the new user's stays, and the sweep's marker is gone
    assert call("GET", f"/orgs/acme/tickets/{hidden[0]}").status == 404
    assert [t["ticket_id"] for t in call("GET", "/orgs/acme/users/user-1/tickets").body["items"]] == [new]
    assert [i for i in _items_of(acme, "acme") if i["SK"]["S"].startswith("SWEEP#")] == []


def _every_ticket(org_id: str, user_id: str, caller: dict) -> list[str]:
    """The ids of a user's whole ticket list, a page of one at a time, as that caller reads it."""
    ids, cursor = [], ""
    while True:
        query = {"limit": 1, "cursor": cursor}
        page = call("GET", f"/orgs/{org_id}/users/{user_id}/tickets", query=query, caller=caller)
        assert page.status == 200, page.body
        ids += [t["ticket_id"] for t in page.body["items"]]
        if not (cursor := page.body["next_cursor"]):
            return ids


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # SQS exists on moto only
def test_a_user_created_again_before_the_sweep_never_sees_the_deleted_users_late_ticket(
    acme, monkeypatch, deletions_queue
):
    hidden = _gsi1_lags_once(monkeypatch)
    # Given a user's delete whose sweep is queued, with one ticket GSI1 did not show it yet
    assert call("DELETE", "/orgs/acme/users/user-1").status == 204
    assert hidden
    # When, before the sweep runs, another person is made user-1 and opens a ticket
    assert create_user("acme", "user-1").status == 201
    new = create_ticket("acme", "user-1").body["ticket_id"]
    newcomer = member("acme", "user-1")

    # Then neither their list, on any page, nor their user with its tickets shows the deleted user's
    assert _every_ticket("acme", "user-1", newcomer) == [new]
    with_tickets = call("GET", "/orgs/acme/users/user-1", query={"include": "tickets"}, caller=newcomer)
    assert [t["ticket_id"] for t in with_tickets.body["tickets"]] == [new]
    assert with_tickets.body["next_cursor"] is None
    # And the sweep still takes the old ticket, and only it
    _drain(deletions_queue, {"kind": "ticket-sweep", "org_id": "acme", "user_id": "user-1"})
    assert call("GET", f"/orgs/acme/tickets/{hidden[0]}").status == 404
    assert _every_ticket("acme", "user-1", newcomer) == [new]


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # SQS exists on moto only
def test_an_older_sweep_leaves_the_marker_of_a_newer_delete_of_that_user_id(acme, monkeypatch, deletions_queue):
    # Given a user's delete whose sweep job is queued
    assert call("DELETE", "/orgs/acme/users/user-1").status == 204
    first_job = _receive(deletions_queue)
    real, late = cascade.delete_tickets_of, []

    def newer_delete_meanwhile(table, org_id, user_id, *args, **kwargs):
        if late:
            return True  # the newer delete's own pass: GSI1 does not show the ticket just opened yet
        done = real(table, org_id, user_id, *args, **kwargs)
        assert create_user("acme", "user-1").status == 201
        late.append(create_ticket("acme", "user-1").body["ticket_id"])
        assert call("DELETE", "/orgs/acme/users/user-1").status == 204
        return done

    # When, while that job sweeps, the id is created again, opens a ticket and is deleted again
    monkeypatch.setattr(cascade, "delete_tickets_of", newer_delete_meanwhile)
    assert deliver(first_job) == {"batchItemFailures": []}
    monkeypatch.setattr(cascade, "delete_tickets_of", real)
    assert deliver(_receive(deletions_queue)) == {"batchItemFailures": []}

    # Then the newer delete's sweep found its marker and took the late ticket: the next user of that
    # id does not inherit it, and no marker is left
    assert call("GET", f"/orgs/acme/tickets/{late[0]}").status == 404
    assert create_user("acme", "user-1").status == 201
    assert call("GET", "/orgs/acme/users/user-1/tickets").body["items"] == []
    assert [i for i in _items_of(acme, "acme") if i["SK"]["S"].startswith("SWEEP#")] == []


def _receive(queue_url: str) -> list[dict]:
    """The one message on the queue, taken off it."""
    sqs = boto3.client("sqs")
    messages = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", [])
    assert len(messages) == 1, messages
    sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=messages[0]["ReceiptHandle"])
    return messages


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # SQS exists on moto only
def test_a_delete_too_big_for_one_request_answers_202_and_finishes_from_the_queue(acme, monkeypatch, deletions_queue):
    monkeypatch.setattr(cascade, "DELETE_STEP_SECONDS", 10_000)  # the request has no time for a step

    reply = call("DELETE", "/orgs/acme")

    assert reply.status == 202
    assert reply.body["status"] == "deleting"
    mark = call("GET", "/orgs/acme").body["deleting_since"]
    assert mark
    monkeypatch.setattr(cascade, "DELETE_STEP_SECONDS", 0)
    _drain(deletions_queue, {"org_id": "acme", "deleting_since": mark})  # the job is that delete's
    assert call("GET", "/orgs/acme").status == 404
    assert _items_of(acme, "acme") == []


def test_with_no_queue_a_delete_too_big_for_a_request_in_the_cloud_finishes_in_its_request(acme, monkeypatch):
    # Given no queue (make run: LOCAL.md, API.md) and steps that would not fit a cloud request's time
    monkeypatch.setattr(cascade, "DELETE_STEP_SECONDS", 10_000)

    reply = call("DELETE", "/orgs/acme")

    # Then it is done before the answer: 204, not a 202 for a job no queue would run
    assert reply.status == 204, reply.body
    assert call("GET", "/orgs/acme").status == 404
    assert _items_of(acme, "acme") == []
    assert call("GET", "/orgs/bolt/users/bob").status == 200


def _failing_500(*args, **kwargs):
    error = {
        "Error": {"Code": "InternalServerError", "Message": "injected"},
        "ResponseMetadata": {"HTTPStatusCode": 500},
    }
    raise ClientError(error, "BatchWriteItem")


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # SQS exists on moto only
def test_a_delete_an_outage_stops_half_way_answers_202_and_finishes_from_the_queue(acme, monkeypatch, deletions_queue):
    # Given DynamoDB failing (500, after botocore's retries) once the delete has marked acme
    with monkeypatch.context() as outage:
        outage.setattr(batches, "delete_all", _failing_500)
        reply = call("DELETE", "/orgs/acme")

    # Then the delete is accepted and its rest queued: a half-deleted org waits for no one to ask again
    assert (reply.status, reply.body.get("status")) == (202, "deleting"), reply.body
    mark = call("GET", "/orgs/acme").body["deleting_since"]
    _drain(deletions_queue, {"org_id": "acme", "deleting_since": mark})
    assert call("GET", "/orgs/acme").status == 404
    assert _items_of(acme, "acme") == []


@pytest.mark.parametrize("query", [None, {"include": "users"}])
def test_a_delete_an_outage_stops_half_way_with_no_queue_answers_202_and_its_next_get_finishes_it(
    acme, monkeypatch, query
):
    # Given no queue (make run), and DynamoDB failing (500, after botocore's retries) once the delete has marked acme
    with monkeypatch.context() as outage:
        outage.setattr(batches, "delete_all", _failing_500)
        reply = call("DELETE", "/orgs/acme")

    # Then the delete is accepted, as in the cloud: a 503 would have a half-deleted org wait for
    # someone to ask for its delete again
    assert (reply.status, reply.body.get("status")) == (202, "deleting"), reply.body
    assert _items_of(acme, "acme")  # half done

    # And the org's GET, which its 202 asks for, runs the delete on to its end, as the queue's job would
    assert call("GET", "/orgs/acme", query=query).status == 404
    assert _items_of(acme, "acme") == []
    assert len(_items_of(acme, "bolt")) == 4


def test_a_deleting_orgs_get_that_an_outage_stops_again_answers_it_deleting_and_the_next_get_finishes(
    acme, monkeypatch
):
    # Given no queue, a delete an outage stopped half-way, and DynamoDB failing again as a GET runs it on
    with monkeypatch.context() as outage:
        outage.setattr(batches, "delete_all", _failing_500)
        assert call("DELETE", "/orgs/acme").status == 202
        first = call("GET", "/orgs/acme")

    # Then that GET answers the org as being deleted (not a 503), and the next one finishes it
    assert (first.status, first.body["deleting_since"] is not None) == (200, True), first.body
    assert call("GET", "/orgs/acme").status == 404
    assert _items_of(acme, "acme") == []


def test_a_deleting_orgs_get_whose_run_on_meets_a_bug_is_answered_as_the_bug(acme, monkeypatch):
    # Given no queue, a delete an outage stopped half-way, and a bug (no outage) as a GET runs it on
    with monkeypatch.context() as outage:
        outage.setattr(batches, "delete_all", _failing_500)
        assert call("DELETE", "/orgs/acme").status == 202

    def bug(*args, **kwargs):
        raise KeyError("injected")

    with monkeypatch.context() as failing:
        failing.setattr(cascade, "continue_delete", bug)
        read = call("GET", "/orgs/acme")

    # Then that GET is the bug's 500, not the org answered as being deleted; the next GET finishes it
    assert (read.status, read.error_code) == (500, "internal_error"), read.body
    assert call("GET", "/orgs/acme").status == 404


def test_a_delete_an_outage_stops_before_its_mark_with_no_queue_is_503_and_changes_nothing(acme, monkeypatch):
    # Given no queue, and DynamoDB failing on the delete's first write, the org's mark
    with monkeypatch.context() as outage:
        outage.setattr(Table, "mark", _failing_500)
        reply = call("DELETE", "/orgs/acme")

    # Then it is a 503 and the org is as it was: no delete began, and its GET deletes nothing
    assert (reply.status, reply.error_code) == (503, "service_unavailable"), reply.body
    assert call("GET", "/orgs/acme").body["deleting_since"] is None
    assert call("GET", "/orgs/acme/users/user-0").status == 200


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # SQS exists on moto only
def test_a_delete_an_outage_stops_before_its_mark_is_503_and_queues_nothing(acme, monkeypatch, deletions_queue):
    # Given DynamoDB failing on the delete's first write, the org's mark
    with monkeypatch.context() as outage:
        outage.setattr(Table, "mark", _failing_500)
        reply = call("DELETE", "/orgs/acme")

    # Then it is a 503, the org is as it was, and no job was queued for a delete that never began
    assert (reply.status, reply.error_code) == (503, "service_unavailable"), reply.body
    assert call("GET", "/orgs/acme").body["deleting_since"] is None
    assert "Messages" not in boto3.client("sqs").receive_message(QueueUrl=deletions_queue)


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # SQS exists on moto only
def test_a_delete_an_outage_stops_half_way_whose_rest_cannot_be_queued_is_503(acme, monkeypatch, deletions_queue):
    # Given DynamoDB failing once the delete has marked acme, and SQS as the delete hands its rest over
    with monkeypatch.context() as outage:
        outage.setattr(batches, "delete_all", _failing_500)
        outage.setattr(deletions, "_enqueue", _failing_500)
        reply = call("DELETE", "/orgs/acme")

    # Then the outage's 503 stands and nothing is queued; acme stays marked, and the delete sent again
    # finishes it
    assert (reply.status, reply.error_code) == (503, "service_unavailable"), reply.body
    assert call("GET", "/orgs/acme").body["deleting_since"] is not None
    assert "Messages" not in boto3.client("sqs").receive_message(QueueUrl=deletions_queue)
    again = call("DELETE", "/orgs/acme")
    assert again.status in (202, 204), again.body
    if again.status == 202:
        _drain(deletions_queue, {"org_id": "acme", "deleting_since": again.body["deleting_since"]})
    assert call("GET", "/orgs/acme").status == 404
    assert _items_of(acme, "acme") == []


def _drain(queue_url: str, expected: dict) -> None:
    """Play the SQS event source: deliver each message (``expected``) to the organizations function."""
    sqs = boto3.client("sqs")
    while messages := sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=1).get("Messages"):
        result = deliver(messages)
        assert result == {"batchItemFailures": []}
        for m in messages:
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=m["ReceiptHandle"])
        assert json.loads(messages[0]["Body"]) == expected


def test_a_delete_that_runs_out_of_time_inside_a_users_tickets_resumes_where_it_stopped(table):
    create_org("acme")
    create_user("acme", "alice")
    _bulk_tickets("acme", "alice", 2_500)  # three GSI1 pages of tickets
    budget = iter([60.0] * 3)  # time for the user step and one page of tickets, then none

    finished = cascade.delete_org("acme", time_left=lambda: next(budget, 0.0))

    assert finished is False
    left = _items_of(table, "acme")
    assert 0 < len(left) < 2_500
    assert call("GET", "/orgs/acme/users/alice").status == 404  # the user went before the tickets
    assert cascade.delete_org("acme") is True
    assert _items_of(table, "acme") == []


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # the queue is moto's
def test_a_delete_job_of_an_org_deleted_since_spares_the_org_created_again_with_its_id(
    acme, monkeypatch, deletions_queue
):
    # Given a delete too big for its request, asked twice (so two jobs are queued), and the first job
    # finishes it
    monkeypatch.setattr(cascade, "DELETE_STEP_SECONDS", 10_000)
    assert [call("DELETE", "/orgs/acme").status for _ in range(2)] == [202, 202]
    sqs = boto3.client("sqs")
    jobs = [sqs.receive_message(QueueUrl=deletions_queue, MaxNumberOfMessages=1)["Messages"] for _ in range(2)]
    monkeypatch.setattr(cascade, "DELETE_STEP_SECONDS", 0)
    assert deliver(jobs[0]) == {"batchItemFailures": []}
    assert call("GET", "/orgs/acme").status == 404

    # And acme is created again, by another tenant, with a user and a ticket
    create_org("acme")
    create_user("acme", ORG_USERS[0])
    create_ticket("acme", ORG_USERS[0])

    # When the second job runs, and a job of the old kind (no mark) is delivered too
    assert deliver(jobs[1]) == {"batchItemFailures": []}
    deliver([{**jobs[1][0], "Body": json.dumps({"org_id": "acme"})}])

    # Then the new acme is whole: a job continues its own delete, never starts one
    assert call("GET", "/orgs/acme").status == 200
    assert call("GET", "/orgs/acme").body["deleting_since"] is None
    assert len(call("GET", f"/orgs/acme/users/{ORG_USERS[0]}/tickets").body["items"]) == 1


def test_a_delete_run_that_another_finished_stops_at_the_org_created_again(acme):
    # Given a delete of acme that stopped after its first user, which another run then finished
    budget = iter([60.0])
    assert cascade.delete_org("acme", time_left=lambda: next(budget, 0.0)) is False
    mark = cascade.deletion_mark("acme")
    assert cascade.delete_org("acme") is True
    create_org("acme")
    create_user("acme", ORG_USERS[1])

    # When the first run goes on
    finished = cascade.continue_delete("acme", mark)

    # Then it is done, and the new acme and its user are untouched
    assert finished is True
    assert call("GET", f"/orgs/acme/users/{ORG_USERS[1]}").status == 200


def test_a_user_created_again_while_their_old_self_is_deleted_keeps_their_tickets(table, monkeypatch):
    # Given alice with a ticket, and, while her delete goes through her tickets' pages, alice is
    # created again and opens a ticket
    create_org("acme")
    create_user("acme", "alice")
    create_ticket("acme", "alice")
    delete_tickets_of, new = cascade.delete_tickets_of, []

    def created_again_meanwhile(*args, **kwargs):
        if not new:
            assert create_user("acme", "alice").status == 201
            new.append(create_ticket("acme", "alice").body["ticket_id"])
        return delete_tickets_of(*args, **kwargs)

    monkeypatch.setattr(cascade, "delete_tickets_of", created_again_meanwhile)

    # When the old alice's delete finishes
    assert call("DELETE", "/orgs/acme/users/alice").status == 204

    # Then the new alice keeps her ticket, and only it
    monkeypatch.undo()
    assert [t["ticket_id"] for t in call("GET", "/orgs/acme/users/alice/tickets").body["items"]] == new


def test_a_user_stamped_after_the_delete_stamped_its_mark_but_created_before_it_landed_goes_with_the_org(
    table, monkeypatch
):
    from datetime import datetime, timedelta

    from controlplane.dal import keys

    # Given alice, whose create stamped her a moment after the delete stamped its mark, and committed
    # before the mark landed (its UpdateItem was slower, or retried)
    create_org("acme")
    assert create_user("acme", "alice").status == 201
    created = datetime.fromisoformat(
        api_table().get(keys.user_key("acme", "alice"))["created_at"].replace("Z", "+00:00")
    )
    mark = (created - timedelta(milliseconds=3)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    monkeypatch.setattr(stamps, "now", lambda: mark)

    # When the org is deleted
    assert cascade.delete_org("acme") is True

    # Then she went with it
    assert api_table().get(keys.user_key("acme", "alice"), consistent=True) is None


def test_a_delete_run_behind_another_stops_before_the_next_user_of_its_page(table, monkeypatch):
    # Given a delete of acme (alice, bob) marked, and a run of it going through its page of users
    create_org("acme")
    for user_id in ("alice", "bob"):
        assert create_user("acme", user_id).status == 201
    monkeypatch.setattr(cascade, "_cascade", lambda *args, **kwargs: False)
    cascade.delete_org("acme")
    monkeypatch.undo()
    mark = cascade.deletion_mark("acme")
    remove_sign_in, overtaken = cascade.remove_sign_in, []

    def overtaken_meanwhile(org_id, user_id):
        remove_sign_in(org_id, user_id)
        if not overtaken:  # another run of it finishes the delete, and acme and bob are created again
            overtaken.append("first user")
            overtaken.append(cascade.continue_delete("acme", mark))
            overtaken.extend([create_org("acme").status, create_user("acme", "bob").status])

    monkeypatch.setattr(cascade, "remove_sign_in", overtaken_meanwhile)

    # When the first run goes on
    assert cascade.continue_delete("acme", mark) is True

    # Then the new acme's bob is untouched
    assert overtaken == ["first user", True, 201, 201]
    assert call("GET", "/orgs/acme/users/bob").status == 200


def test_a_delete_out_of_time_for_a_sweeps_wait_stops_before_it_and_finishes_when_continued(table, monkeypatch):
    from controlplane.dal import keys

    # Given a settle time of 1 s, and acme with alice
    monkeypatch.setenv("GSI1_SETTLE_SECONDS", "1")
    config.reset()
    create_org("acme")
    create_user("acme", "alice")

    # When its delete has time for every step but not for the wait before alice's sweep
    finished = cascade.delete_org("acme", time_left=lambda: cascade.DELETE_STEP_SECONDS + 0.5)

    # Then it stops there (to be queued), with alice's marker and the org left for the rest
    assert finished is False
    assert api_table().get(keys.sweep_key("acme", "alice"), consistent=True) is not None
    assert cascade.deletion_mark("acme")  # still there (a GET, with no queue, would run the delete on)
    assert cascade.continue_delete("acme", cascade.deletion_mark("acme")) is True
    assert _items_of(table, "acme") == []


def test_a_delete_out_of_time_inside_a_sweep_keeps_its_marker_and_the_ticket_gsi1_showed_late_goes_later(
    table, monkeypatch
):
    from controlplane.dal import keys

    # Given acme with alice and a ticket of hers that GSI1 does not show at first
    create_org("acme")
    create_user("acme", "alice")
    create_ticket("acme", "alice")
    hidden = _gsi1_lags_once(monkeypatch)

    # When the delete runs out of time as alice's sweep goes through her tickets
    budget = iter([60.0] * 3)  # alice, her tickets' page (the ticket hidden), the sweep's start
    finished = cascade.delete_org("acme", time_left=lambda: next(budget, 0.0))

    # Then it stops with her marker kept, which brings the ticket back to the continued delete
    assert hidden and finished is False
    assert api_table().get(keys.sweep_key("acme", "alice"), consistent=True) is not None
    assert cascade.continue_delete("acme", cascade.deletion_mark("acme")) is True
    assert _items_of(table, "acme") == []


def _new_acme_after(monkeypatch, meanwhile) -> bool:
    """Delete acme (alice), whose run, right after alice's tickets, is overtaken: another run of the
    delete finishes it, acme is created again, and ``meanwhile()`` runs. What the first run returns."""
    delete_tickets_of, overtaken = cascade.delete_tickets_of, []

    def overtaken_after_the_users(*args, **kwargs):
        done = delete_tickets_of(*args, **kwargs)
        if not overtaken:
            overtaken.append(True)
            with monkeypatch.context() as other_run:
                other_run.setattr(cascade, "delete_tickets_of", delete_tickets_of)
                assert cascade.continue_delete("acme", cascade.deletion_mark("acme")) is True
                assert create_org("acme").status == 201
                meanwhile()
        return done

    create_org("acme")
    create_user("acme", "alice")
    monkeypatch.setattr(cascade, "delete_tickets_of", overtaken_after_the_users)
    finished = cascade.delete_org("acme")
    assert overtaken == [True]
    return finished


def test_a_delete_run_another_finished_leaves_the_sweep_of_the_org_created_again_to_it(table, monkeypatch):
    from controlplane.dal import keys

    # Given the new acme's delete of its user bob under way: his sweep marker is written
    def bobs_delete_under_way():
        assert create_user("acme", "bob").status == 201
        cascade.mark_for_sweep(api_table(), "acme", "bob")

    # When the old delete's run goes on to the sweeps
    assert _new_acme_after(monkeypatch, bobs_delete_under_way) is True

    # Then it stops: bob's delete's marker is the new acme's, for its own sweep
    assert api_table().get(keys.sweep_key("acme", "bob"), consistent=True) is not None
    assert call("GET", "/orgs/acme/users/bob").status == 200


def test_a_delete_run_another_finished_leaves_the_units_of_the_org_created_again(table, monkeypatch):
    from tests.handlers.test_org_units import create_unit

    # Given the new acme has a unit
    def a_unit():
        assert create_unit("eng").status == 201

    assert _new_acme_after(monkeypatch, a_unit) is True

    # When the old delete's run went on to the units, it stopped: the new acme keeps its unit
    assert call("GET", "/orgs/acme/units/eng").status == 200
    assert call("GET", "/orgs/acme").body["deleting_since"] is None


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # SQS exists on moto only
def test_a_queued_delete_out_of_time_queues_its_rest_and_the_next_delivery_finishes_it(
    acme, monkeypatch, deletions_queue
):
    # Given a delete too big for its request, queued
    monkeypatch.setattr(cascade, "DELETE_STEP_SECONDS", 10_000)  # no time for a step, in the request or a job
    assert call("DELETE", "/orgs/acme").status == 202
    mark = call("GET", "/orgs/acme").body["deleting_since"]

    # When its job has no time for a step either
    assert deliver(_receive(deletions_queue)) == {"batchItemFailures": []}

    # Then the rest of that delete is queued again, which the next delivery finishes
    [again] = _receive(deletions_queue)
    assert json.loads(again["Body"]) == {"org_id": "acme", "deleting_since": mark}
    monkeypatch.setattr(cascade, "DELETE_STEP_SECONDS", 0)
    assert deliver([again]) == {"batchItemFailures": []}
    assert _items_of(acme, "acme") == []


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # SQS exists on moto only
def test_a_delete_request_whose_delete_another_run_finished_as_it_stopped_queues_nothing(
    acme, monkeypatch, deletions_queue
):
    # Given a delete whose request runs out of time, and another run (a job of an earlier request)
    # that finishes it just as the request stops
    monkeypatch.setattr(cascade, "DELETE_STEP_SECONDS", 10_000)
    deletion_mark, finished = cascade.deletion_mark, []

    def finished_meanwhile(org_id):
        if not finished:
            with monkeypatch.context() as other_run:
                other_run.setattr(cascade, "DELETE_STEP_SECONDS", 0)
                finished.append(cascade.continue_delete(org_id, deletion_mark(org_id)))
        return deletion_mark(org_id)

    monkeypatch.setattr(cascade, "deletion_mark", finished_meanwhile)

    # When the request stops
    reply = call("DELETE", "/orgs/acme")

    # Then it queued no job (for an org that is gone, or another's by now): the org is gone already
    assert (reply.status, finished) == (202, [True])
    assert boto3.client("sqs").receive_message(QueueUrl=deletions_queue).get("Messages", []) == []
    assert _items_of(acme, "acme") == []


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # SQS exists on moto only
def test_a_queued_sweep_out_of_time_queues_itself_again_and_the_next_delivery_sweeps(
    acme, monkeypatch, deletions_queue
):
    from controlplane.dal import keys

    # Given a user's delete whose sweep job is queued
    hidden = _gsi1_lags_once(monkeypatch)
    assert call("DELETE", "/orgs/acme/users/user-1").status == 204
    job = _receive(deletions_queue)

    # When the job has no time for the sweep
    with monkeypatch.context() as short:
        short.setattr(cascade, "DELETE_STEP_SECONDS", 10_000)
        assert deliver(job) == {"batchItemFailures": []}

    # Then it is queued again, and the marker kept: the next delivery takes the ticket GSI1 showed late
    [again] = _receive(deletions_queue)
    assert json.loads(again["Body"]) == {"kind": cascade.SWEEP_KIND, "org_id": "acme", "user_id": "user-1"}
    assert api_table().get(keys.sweep_key("acme", "user-1"), consistent=True) is not None
    assert deliver([again]) == {"batchItemFailures": []}
    assert call("GET", f"/orgs/acme/tickets/{hidden[0]}").status == 404
    assert api_table().get(keys.sweep_key("acme", "user-1"), consistent=True) is None


@pytest.mark.parametrize("overtaker", ["/orgs/acme", "/orgs/acme/users/user-1"])
def test_a_user_delete_overtaken_after_it_found_the_user_leaves_no_sweep_marker_with_no_queue(
    acme, monkeypatch, overtaker
):
    # Given no queue (make run), and user-1's delete, which has found them, overtaken before it marks
    # them for a sweep by the org's delete, or by another delete of user-1
    real, overtaken = cascade.remove_sign_in, []

    def overtaken_first(org_id, user_id):
        if not overtaken:
            overtaken.append("running")
            overtaken[0] = call("DELETE", overtaker).status
        return real(org_id, user_id)

    monkeypatch.setattr(cascade, "remove_sign_in", overtaken_first)

    # When it goes on, and finds the user gone
    assert call("DELETE", "/orgs/acme/users/user-1").status == 404
    assert overtaken == [204]

    # Then it left no sweep marker behind (in an org deleted, for the next org of that id to inherit)
    assert [i for i in _items_of(acme, "acme") if i["SK"]["S"].startswith("SWEEP#")] == []


def test_a_delete_run_overtaken_before_a_users_tickets_spares_the_tickets_of_the_org_created_again(table, monkeypatch):
    # Given acme's delete at alice, her item gone, when another run of the delete finishes it, acme
    # and alice are created again, and the new alice opens a ticket, all before this run reads her
    # tickets on GSI1
    delete_tickets_of, new_ticket = cascade.delete_tickets_of, []

    def overtaken_before_the_tickets(*args, **kwargs):
        if not new_ticket:
            with monkeypatch.context() as other_run:
                other_run.setattr(cascade, "delete_tickets_of", delete_tickets_of)
                assert cascade.continue_delete("acme", cascade.deletion_mark("acme")) is True
            assert create_org("acme").status == 201
            assert create_user("acme", "alice").status == 201
            new_ticket.append(create_ticket("acme", "alice").body["ticket_id"])
        return delete_tickets_of(*args, **kwargs)

    create_org("acme")
    create_user("acme", "alice")
    create_ticket("acme", "alice")
    monkeypatch.setattr(cascade, "delete_tickets_of", overtaken_before_the_tickets)

    # When this run goes on with alice's tickets
    cascade.delete_org("acme")

    # Then it deletes only tickets opened before its mark: the new alice's ticket stays
    assert call("GET", f"/orgs/acme/tickets/{new_ticket[0]}").status == 200


def test_a_delete_run_overtaken_before_its_last_write_leaves_the_org_created_again(table, monkeypatch):
    from controlplane.dal import keys, transactions

    # Given acme's delete about to delete the org item, when another run deletes it first and acme
    # is created again
    delete_with, overtaken = transactions.delete_with, []

    def overtaken_at_the_org(table_, key, expects, beside):
        if key == keys.org_key("acme") and not overtaken:
            overtaken.append(True)
            delete_with(table_, key, expects, beside)
            assert create_org("acme").status == 201
        delete_with(table_, key, expects, beside)

    create_org("acme")
    create_user("acme", "alice")
    monkeypatch.setattr(transactions, "delete_with", overtaken_at_the_org)

    # When this run writes its last delete
    assert cascade.delete_org("acme") is True

    # Then it deletes only the org it marked: the new acme and its seats stay
    assert overtaken == [True]
    org = call("GET", "/orgs/acme")
    assert org.status == 200, org.body
    assert org.body["usage"] == {"users": 0}


def test_a_sweep_marker_written_before_sweep_ids_is_swept_and_deleted(table):
    from controlplane.dal import keys

    # Given alice deleted, a ticket of hers GSI1 showed late, and her sweep marker as the code before
    # sweep_id wrote it (named by its settle time alone)
    create_org("acme")
    create_user("acme", "alice")
    assert call("DELETE", "/orgs/acme/users/alice").status == 204
    _bulk_tickets("acme", "alice", 1)
    marker = cascade.mark_for_sweep(api_table(), "acme", "alice")
    api_table().put({name: value for name, value in marker.items() if name != "sweep_id"})

    # When its sweep runs
    assert cascade.sweep_user("acme", "alice") is True

    # Then it took her ticket, and the marker is gone
    assert [i for i in _items_of(table, "acme") if i["SK"]["S"].startswith("TICKET#")] == []
    assert api_table().get(keys.sweep_key("acme", "alice"), consistent=True) is None


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # SQS exists on moto only
def test_a_sweep_is_queued_for_at_most_the_15_minutes_sqs_can_delay_a_message(deletions_queue, monkeypatch):
    # Given a GSI1 settle time longer than SQS can delay a message (900 s)
    monkeypatch.setenv("GSI1_SETTLE_SECONDS", "1200")
    config.reset()

    # When a deleted user's sweep is queued
    queued = cascade.schedule_sweep("acme", "alice")

    # Then it is, delayed as long as SQS allows, not refused by SQS
    assert queued is True
    attributes = boto3.client("sqs").get_queue_attributes(
        QueueUrl=deletions_queue, AttributeNames=["ApproximateNumberOfMessagesDelayed"]
    )["Attributes"]
    assert attributes["ApproximateNumberOfMessagesDelayed"] == "1"
