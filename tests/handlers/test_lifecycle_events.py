"""Lifecycle events from the table's real stream (DynamoDB Local), through the events function.

API calls go through tests/api.py's ``call``; the stream is read the way Lambda does and fed to
``events.handler.lambda_handler``, whose bus is a recorder (EventBridge itself: the moto test at the end).
"""

import json
from datetime import UTC, datetime

import boto3
import jsonschema_rs
import pytest
from moto import mock_aws

from controlplane import config
from controlplane.lifecycle import contract, publisher
from local import event_docs
from local.apigw import LambdaContext
from local.stream import Feeder
from tests.api import OPERATOR, admin, call, create_org, create_ticket, create_user, member
from tests.events_support import BUS, PUT_EVENTS_MAX_BYTES, RecordingBus, entry_size, feeder, stream_reader

on_dynamodb_local = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)  # its real stream

INTERNAL = {"PK", "SK", "GSI1PK", "GSI1SK", "entity", "created_by", "updated_by", "deleted_by", "expires_at"}
SCHEMAS = {detail_type: jsonschema_rs.validator_for(schema) for detail_type, schema in event_docs.documented().items()}


def _publish(stream, **options) -> Feeder:
    found = feeder(**options)
    found.feed(stream.read())
    return found


def _summary(bus: RecordingBus) -> list[tuple]:
    """(detail-type, the resource's id, actor) of each published event, in order."""
    found = []
    for detail_type, detail in bus.events():
        resource = detail["resource"]
        found.append((detail_type, resource.get("ticket_id") or resource.get("user_id") or resource["org_id"]))
    return found


def _assert_valid(bus: RecordingBus) -> None:
    for entry in bus.accepted:
        detail = json.loads(entry["Detail"])
        SCHEMAS[entry["DetailType"]].validate(detail)
        assert entry["Source"] == "controlplane"
        assert entry["EventBusName"] == BUS
        assert entry["Time"].isoformat(timespec="milliseconds").replace("+00:00", "Z") == detail["occurred_at"]
        assert not INTERNAL & (set(detail) | set(detail["resource"])), detail


def test_docs_show_the_schemas_of_the_contract():
    assert event_docs.expected(event_docs.DOC.read_text()) == event_docs.DOC.read_text(), "run make event-docs"
    assert set(event_docs.documented()) == set(contract.DETAILS) and len(contract.DETAILS) == 21


@on_dynamodb_local
def test_every_route_that_writes_sends_exactly_its_documented_events_in_order(bus, stream):
    # Given every write route, called by the callers the API expects
    create_org("acme")
    call("PATCH", "/orgs/acme", {"name": "Acme Inc."}, caller=admin())
    call("PATCH", "/orgs/acme", {"plan": "pro", "name": "Acme Pro"})
    create_user("acme", "alice")
    create_user("acme", "bob")
    call("PATCH", "/orgs/acme/users/alice", {"name": "Alice A."}, caller=member("acme", "alice"))
    call("PATCH", "/orgs/acme/users/alice", {"role": "admin"})
    ticket = create_ticket("acme", "alice", caller=member("acme", "alice")).body["ticket_id"]
    call("PATCH", f"/orgs/acme/tickets/{ticket}", {"priority": "high"})
    call("PATCH", f"/orgs/acme/tickets/{ticket}", {"status": "solved"}, caller=member("acme", "alice"))
    call("DELETE", f"/orgs/acme/tickets/{ticket}")
    doomed = create_ticket("acme", "bob").body["ticket_id"]
    assert call("DELETE", "/orgs/acme/users/bob").status == 204
    # and the reads, which send nothing
    for path in ("/orgs", "/orgs/acme", "/orgs/acme/users", "/orgs/acme/users/alice/tickets"):
        assert call("GET", path).status == 200

    # When the stream goes through the events function
    _publish(stream)

    # Then each change sent its events, in the order of the writes, each valid against its schema
    assert _summary(bus) == [
        ("Organization Created", "acme"),
        ("Organization Updated", "acme"),
        ("Organization Updated", "acme"),
        ("Organization Plan Changed", "acme"),
        ("User Created", "alice"),
        ("User Created", "bob"),
        ("User Updated", "alice"),
        ("User Updated", "alice"),
        ("User Role Changed", "alice"),
        ("Ticket Opened", ticket),
        ("Ticket Updated", ticket),
        ("Ticket Updated", ticket),
        ("Ticket Status Changed", ticket),
        ("Ticket Deleted", ticket),
        ("Ticket Opened", doomed),
        ("User Deleted", "bob"),  # the user's item goes first: no ticket can be opened for them then
        ("Ticket Deleted", doomed),
    ]
    _assert_valid(bus)
    details = [detail for _, detail in bus.events()]
    assert details[1]["changes"] == {"name": {"old": "Acme", "new": "Acme Inc."}}
    assert details[1]["actor"] == admin()["sub"]
    assert details[2]["changes"] == {
        "name": {"old": "Acme Inc.", "new": "Acme Pro"},
        "plan": {"old": "free", "new": "pro"},
    }
    assert details[3]["changes"] == {"plan": {"old": "free", "new": "pro"}}
    assert details[3]["resource"]["plan"] == "pro" and details[3]["actor"] == OPERATOR["sub"]
    assert details[6]["actor"] == member("acme", "alice")["sub"]
    assert details[9]["actor"] == member("acme", "alice")["sub"]  # who opened the ticket
    assert details[13]["resource"]["status"] == "solved"  # a Deleted event shows the resource before
    assert (details[13]["actor"], details[13]["cause"]) == (None, None)
    assert details[15]["cause"] is None  # the user, deleted on their own
    # one record, two events: (event_id, detail-type) is what identifies an event
    assert details[2]["event_id"] == details[3]["event_id"]
    keys = [(t, d["event_id"]) for t, d in bus.events()]
    assert len(set(keys)) == len(keys)


@on_dynamodb_local
def test_suspending_and_reactivating_send_their_events_beside_updated(bus, stream):
    # Given an org suspended, suspended again with another reason, then reactivated
    create_org("acme")
    call("PATCH", "/orgs/acme", {"status": "suspended", "suspension_reason": "Unpaid"})
    call("PATCH", "/orgs/acme", {"status": "suspended", "suspension_reason": "Legal hold"})
    call("PATCH", "/orgs/acme", {"status": "active"})

    # When the stream goes through the events function
    _publish(stream)

    # Then the status changes send Suspended and Reactivated, as plan changes send Plan Changed
    assert [t for t, _ in bus.events()] == [
        "Organization Created",
        "Organization Updated",
        "Organization Suspended",
        "Organization Updated",  # only the reason changed: no second Suspended
        "Organization Updated",
        "Organization Reactivated",
    ]
    _assert_valid(bus)
    details = [detail for _, detail in bus.events()]
    assert details[2]["changes"] == {"status": {"old": "active", "new": "suspended"}}
    assert details[2]["resource"]["suspension_reason"] == "Unpaid" and details[2]["actor"] == OPERATOR["sub"]
    assert details[3]["changes"] == {"suspension_reason": {"old": "Unpaid", "new": "Legal hold"}}
    assert details[5]["changes"] == {"status": {"old": "suspended", "new": "active"}}
    assert details[5]["resource"]["suspended_at"] is None
    assert details[2]["event_id"] == details[1]["event_id"]


@on_dynamodb_local
def test_an_org_delete_sends_deletion_started_then_its_users_and_tickets_with_their_cause_then_deleted(bus, stream):
    create_org("acme")
    create_org("bolt")
    for user_id in ("alice", "bob"):
        create_user("acme", user_id)
        create_ticket("acme", user_id)
    create_user("bolt", "carol")
    _publish(stream)
    bus.accepted.clear()

    assert call("DELETE", "/orgs/acme").status == 204
    call("DELETE", "/orgs/bolt/users/carol")
    _publish(stream)

    summary = _summary(bus)
    assert summary[0] == ("Organization Deletion Started", "acme")
    assert summary[-1] == ("User Deleted", "carol")
    assert summary[-2] == ("Organization Deleted", "acme")
    assert sorted(t for t, _ in summary[1:-2]) == ["Ticket Deleted"] * 2 + ["User Deleted"] * 2
    details = [d for _, d in bus.events()]
    assert details[0]["actor"] == details[-2]["actor"] == OPERATOR["sub"]
    assert details[0]["resource"]["deleting_since"]
    assert {d["cause"] for d in details[1:-2]} == {"organization_deleted"}
    assert details[-1]["cause"] is None  # another org's user, deleted on its own
    _assert_valid(bus)


@on_dynamodb_local
def test_bookkeeping_writes_idempotency_records_and_sweep_markers_send_nothing(bus, stream, table):
    # Given a create with an Idempotency-Key (its record is written, then completed) and its replay
    body = {"org_id": "acme", "name": "Acme"}
    for _ in range(2):
        assert call("POST", "/orgs", body, headers={"Idempotency-Key": ["k1"]}).status == 201
    # and a write of the org's seat usage and limit only
    config.dynamodb().update_item(
        TableName=table,
        Key={"PK": {"S": "ORG#acme"}, "SK": {"S": "METADATA#acme"}},
        UpdateExpression="SET user_count = :n, user_limit = :l",
        ExpressionAttributeValues={":n": {"N": "3"}, ":l": {"N": "10"}},
    )

    _publish(stream)

    assert _summary(bus) == [("Organization Created", "acme")]


@on_dynamodb_local
def test_a_record_that_fails_is_reported_with_every_later_one_and_the_earlier_ones_are_not_sent_again(
    bus, stream, monkeypatch
):
    # Given five changes (each user also counts a seat on the org: a record with no event), and
    # bob's record failing once
    create_org("acme")
    for user_id in ("alice", "bob", "carol", "dave"):
        create_user("acme", user_id)
    records = stream.read()
    bob = next(i for i, r in enumerate(records) if r["dynamodb"]["Keys"]["SK"]["S"] == "USER#bob")
    real = contract.events_for
    failures = []

    def fail_once_on_bob(record, org_being_deleted, earlier=None):
        if record["dynamodb"]["Keys"]["SK"]["S"] == "USER#bob" and not failures:
            failures.append(record["eventID"])
            raise RuntimeError("injected")
        return real(record, org_being_deleted, earlier)

    monkeypatch.setattr(publisher, "events_for", fail_once_on_bob)
    handler = feeder().handler

    # When Lambda delivers the batch
    response = handler({"Records": records}, LambdaContext("events"))

    # Then the failed record and every later one are batch item failures; the ones before were published
    failed = [f["itemIdentifier"] for f in response["batchItemFailures"]]
    assert failed == [r["dynamodb"]["SequenceNumber"] for r in records[bob:]]
    assert _summary(bus) == [("Organization Created", "acme"), ("User Created", "alice")]

    # When Lambda retries from the first failed record
    response = handler({"Records": records[bob:]}, LambdaContext("events"))

    # Then everything is published once, in order
    assert response == {"batchItemFailures": []}
    assert _summary(bus) == [("Organization Created", "acme")] + [
        ("User Created", u) for u in ("alice", "bob", "carol", "dave")
    ]


@on_dynamodb_local
def test_entries_putevents_refuses_are_retried_and_sent_once(bus, stream):
    create_org("acme")
    for user_id in ("alice", "bob"):
        create_user("acme", user_id)
    bus.refuse = lambda entry, call: "ThrottlingException" if call == 1 and '"bob"' in entry["Detail"] else None

    _publish(stream)

    assert [len(entries) for entries in bus.calls] == [3, 1]  # the refused entry alone, again
    assert _summary(bus) == [("Organization Created", "acme"), ("User Created", "alice"), ("User Created", "bob")]


@on_dynamodb_local
def test_the_events_of_one_change_are_put_in_order_even_when_the_first_is_refused_once(bus, stream):
    # Given a change that sends two events (a rename and a new plan: Updated, then Plan Changed), and
    # a bus that refuses the first of them in its first call
    create_org("acme")
    _publish(stream)
    assert call("PATCH", "/orgs/acme", {"name": "Acme Inc", "plan": "pro"}).status == 200
    refused = []

    def refuse_once(entry, _):
        if entry["DetailType"] == "Organization Updated" and not refused:
            refused.append(entry)
            return "ThrottlingException"
        return None

    bus.refuse = refuse_once

    # When the stream goes through the events function
    _publish(stream)

    # Then both are put, each once, in the change's order: Plan Changed waited for Updated
    assert refused
    assert [t for t, _ in _summary(bus)][-2:] == ["Organization Updated", "Organization Plan Changed"]


@on_dynamodb_local
def test_putevents_is_called_with_at_most_ten_entries_and_never_two_records_of_one_item(bus, stream):
    create_org("acme", plan="pro")
    for i in range(12):
        create_user("acme", f"user-{i}")
    for _ in range(3):
        call("PATCH", "/orgs/acme", {"name": "Renamed"})
        call("PATCH", "/orgs/acme", {"name": "Acme"})

    _publish(stream)

    assert len(bus.accepted) == 19
    assert max(len(entries) for entries in bus.calls) == 10
    for entries in bus.calls:
        orgs = [e for e in entries if e["DetailType"].startswith("Organization")]
        assert len(orgs) <= 1


@on_dynamodb_local
def test_putevents_calls_stay_under_eventbridges_256_kb_so_large_tickets_are_not_lost(bus, stream):
    # Given ten tickets with the longest description, published
    create_org("acme")
    create_user("acme", "alice")
    tickets = [create_ticket("acme", "alice", description="a" * 10_000).body["ticket_id"] for _ in range(10)]
    _publish(stream)
    # and each description rewritten: a Ticket Updated holds it three times (resource, old, new), ~30 KB
    for ticket in tickets:
        assert call("PATCH", f"/orgs/acme/tickets/{ticket}", {"description": "b" * 10_000}).status == 200

    # When the stream goes through the events function (the bus refuses a call of 256 KB or more)
    _publish(stream)

    # Then every update reached the bus, in calls EventBridge takes
    assert [t for t, _ in _summary(bus)].count("Ticket Updated") == 10
    assert all(sum(entry_size(entry) for entry in entries) < PUT_EVENTS_MAX_BYTES for entries in bus.calls)


@on_dynamodb_local
def test_an_entry_refused_after_every_attempt_fails_its_record_and_later_ones_only(bus, stream):
    create_org("acme")
    create_user("acme", "alice")
    call("PATCH", "/orgs/acme", {"plan": "pro"})  # a record of the org again: a chunk of its own
    records = stream.read()
    bus.refuse = lambda entry, _: "InternalFailure" if entry["DetailType"] == "User Created" else None

    response = feeder().handler({"Records": records}, LambdaContext("events"))

    assert len(bus.calls) == 1 + publisher.PUT_ATTEMPTS - 1  # the first call, then the retries of one entry
    failed = [f["itemIdentifier"] for f in response["batchItemFailures"]]
    # From alice's record on (the org's seat counter, which sends no event, may come before it).
    alice = next(i for i, r in enumerate(records) if r["dynamodb"]["NewImage"]["entity"]["S"] == "user")
    assert failed == [r["dynamodb"]["SequenceNumber"] for r in records[alice:]]
    assert _summary(bus) == [("Organization Created", "acme")]  # the org's later change was never sent


@on_dynamodb_local
def test_published_events_reach_a_consumer_through_a_rule_on_the_bus(table, monkeypatch):
    # Given changes on DynamoDB Local's stream
    monkeypatch.setenv("EVENT_BUS_NAME", BUS)
    stream = stream_reader(table)
    create_org("acme")
    create_user("acme", "alice")
    call("PATCH", "/orgs/acme/users/alice", {"role": "admin"})
    records = stream.read()

    with mock_aws():
        # and, on moto, the bus, a rule on it for the control plane's events, and a queue as its target
        config.reset()
        eventbridge, sqs = boto3.client("events"), boto3.client("sqs")
        eventbridge.create_event_bus(Name=BUS)
        queue_url = sqs.create_queue(QueueName="application-plane")["QueueUrl"]
        attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]
        eventbridge.put_rule(Name="tenants", EventBusName=BUS, EventPattern=json.dumps({"source": ["controlplane"]}))
        eventbridge.put_targets(
            Rule="tenants", EventBusName=BUS, Targets=[{"Id": "queue", "Arn": attributes["QueueArn"]}]
        )

        # When the events function publishes the records to EventBridge
        response = feeder().handler({"Records": records}, LambdaContext("events"))

        # Then the consumer receives every event, with its detail
        received = []
        while messages := sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages"):
            received += [json.loads(m["Body"]) for m in messages]
            sqs.delete_message_batch(
                QueueUrl=queue_url,
                Entries=[{"Id": m["MessageId"], "ReceiptHandle": m["ReceiptHandle"]} for m in messages],
            )
    config.reset()
    assert response == {"batchItemFailures": []}
    assert [(e["source"], e["detail-type"]) for e in received] == [
        ("controlplane", "Organization Created"),
        ("controlplane", "User Created"),
        ("controlplane", "User Updated"),
        ("controlplane", "User Role Changed"),
    ]
    assert received[3]["detail"]["changes"] == {"role": {"old": "member", "new": "admin"}}


@on_dynamodb_local
def test_occurred_at_is_the_items_own_stamp_to_the_millisecond_and_a_delete_follows_what_preceded_it(bus, stream):
    # Given a create, an update, an org's deletion and its cascade, on a stream whose record times
    # DynamoDB Local rounds to the minute
    create_org("acme")
    create_user("acme", "alice")
    call("PATCH", "/orgs/acme/users/alice", {"name": "Alice A."})
    records = stream.read()
    assert call("DELETE", "/orgs/acme").status == 204
    records += stream.read()

    # When the stream goes through the events function
    feeder().feed(records)

    # Then each stamped write's occurred_at is its own stamp, exact, where the record's time is not
    details = {detail_type: detail for detail_type, detail in bus.events()}
    assert details["Organization Created"]["occurred_at"] == details["Organization Created"]["resource"]["created_at"]
    assert details["User Created"]["occurred_at"] == details["User Created"]["resource"]["created_at"]
    assert details["User Updated"]["occurred_at"] == details["User Updated"]["resource"]["updated_at"]
    started = details["Organization Deletion Started"]
    assert started["occurred_at"] == started["resource"]["deleting_since"]
    recorded = {datetime.fromtimestamp(r["dynamodb"]["ApproximateCreationDateTime"], UTC) for r in records}
    assert {t.second for t in recorded} == {0}  # the record's own time: to the minute
    # and the deletes, which stamp nothing, read no earlier than the deletion that started them
    assert details["User Deleted"]["occurred_at"] >= started["occurred_at"]
    assert details["Organization Deleted"]["occurred_at"] >= details["User Deleted"]["occurred_at"]
    times = [detail["occurred_at"] for _, detail in bus.events()]
    assert times == sorted(times)
    _assert_valid(bus)
