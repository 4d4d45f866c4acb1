"""GET /orgs/{org_id}/activity: what the events function wrote from the table's real stream.

The stream is read as Lambda reads it (DynamoDB Local: moto keeps no readable stream) and fed to
``events.handler.lambda_handler`` through the event source mapping's filter, as in the cloud.
"""

from datetime import datetime

import pytest

from controlplane import config
from controlplane.dal.schema import TTL_ATTRIBUTE
from controlplane.lifecycle import activity, publisher
from controlplane.models.errors import ServiceUnavailable
from local.apigw import LambdaContext
from tests.api import OPERATOR, admin, call, create_org, create_ticket, create_user, member
from tests.events_support import feeder, handler

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)

DAY = 24 * 60 * 60


def _publish(stream) -> None:
    feeder().feed(stream.read())


def _activity(org_id: str = "acme", caller: dict = OPERATOR, **query) -> list[dict]:
    reply = call("GET", f"/orgs/{org_id}/activity", query={"limit": "100", **query}, caller=caller)
    assert reply.status == 200, reply.body
    assert reply.body["next_cursor"] is None
    return reply.body["items"]


def _stored_activity(table: str) -> list[dict]:
    items = config.dynamodb().scan(TableName=table)["Items"]
    return [item for item in items if item.get("entity", {}).get("S") == "activity"]


def test_every_write_route_yields_its_entries_newest_first(bus, stream):
    # Given every write route of one org, called by the callers the API expects
    create_org("acme")
    create_org("bolt")
    call("PATCH", "/orgs/acme", {"name": "Acme Inc."}, caller=admin())
    call("PATCH", "/orgs/acme", {"plan": "pro"})
    create_user("acme", "alice")
    create_user("acme", "bob")
    call("PATCH", "/orgs/acme/users/alice", {"role": "admin"})
    ticket = create_ticket("acme", "alice", caller=member("acme", "alice")).body["ticket_id"]
    call("PATCH", f"/orgs/acme/tickets/{ticket}", {"status": "solved"}, caller=member("acme", "alice"))
    call("DELETE", f"/orgs/acme/tickets/{ticket}")
    assert call("DELETE", "/orgs/acme/users/bob").status == 204

    # When the stream goes through the events function
    _publish(stream)

    # Then acme's log holds one entry per change the bus was told of for acme, newest first, each
    # named by the change's most telling event
    entries = _activity("acme", caller=admin())
    published = [(t, d["event_id"]) for t, d in bus.events() if d["org_id"] == "acme"]
    changes = list(dict.fromkeys(event_id for _, event_id in published))
    assert [e["event_id"] for e in reversed(entries)] == changes
    assert set((e["type"], e["event_id"]) for e in entries) <= set(published)
    assert [e["type"] for e in entries] == [
        "User Deleted",
        "Ticket Deleted",
        "Ticket Status Changed",
        "Ticket Opened",
        "User Role Changed",
        "User Created",
        "User Created",
        "Organization Plan Changed",
        "Organization Updated",
        "Organization Created",
    ]
    assert [(e["type"], e["resource"]) for e in entries][:3] == [
        ("User Deleted", {"kind": "user", "id": "bob", "subject": None}),
        ("Ticket Deleted", {"kind": "ticket", "id": ticket, "subject": "It broke"}),
        ("Ticket Status Changed", {"kind": "ticket", "id": ticket, "subject": "It broke"}),
    ]
    assert entries[2]["changes"] == {"status": {"old": "open", "new": "solved"}}
    times = [e["occurred_at"] for e in entries]
    assert times == sorted(times, reverse=True)
    renamed = [e for e in entries if e["type"] == "Organization Updated"][-1]  # the older one
    assert renamed["actor"] == admin()["sub"]
    assert renamed["changes"] == {"name": {"old": "Acme", "new": "Acme Inc."}}
    promoted = next(e for e in entries if e["type"] == "User Role Changed")
    assert promoted["changes"] == {"role": {"old": "member", "new": "admin"}}
    assert promoted["actor"] == OPERATOR["sub"]
    assert next(e for e in entries if e["type"] == "User Created")["changes"] is None
    # and another org's log holds only its own
    assert [e["type"] for e in _activity("bolt")] == ["Organization Created"]


def test_the_suspension_reason_changes_only_in_operators_entries(bus, stream):
    # Given an org suspended with a reason, then reactivated
    create_org("acme")
    call("PATCH", "/orgs/acme", {"status": "suspended", "suspension_reason": "Invoice unpaid"})
    call("PATCH", "/orgs/acme", {"status": "active"})
    _publish(stream)

    # When its admin and an operator read its log
    seen_by_admin = _activity("acme", caller=admin())
    seen_by_operator = _activity("acme")

    # Then each change is one entry; the operator sees the reason come and go, the admin sees the
    # same entries without it
    assert [e["type"] for e in seen_by_operator] == [
        "Organization Reactivated",
        "Organization Suspended",
        "Organization Created",
    ]
    assert [e["changes"]["suspension_reason"] for e in seen_by_operator[:2]] == [
        {"old": "Invoice unpaid", "new": None},
        {"old": None, "new": "Invoice unpaid"},
    ]
    assert [e["event_id"] + e["type"] for e in seen_by_admin] == [e["event_id"] + e["type"] for e in seen_by_operator]
    assert "Invoice unpaid" not in str(seen_by_admin)
    assert [e["changes"]["status"]["new"] for e in seen_by_admin[:2]] == ["active", "suspended"]
    assert all(e["changes"]["suspended_at"] for e in seen_by_admin[:2])


def test_a_new_suspension_reason_alone_is_an_operators_only_entry(bus, stream):
    # Given an org suspended, suspended again with a new reason (its only change), then reactivated
    create_org("acme")
    call("PATCH", "/orgs/acme", {"status": "suspended", "suspension_reason": "Invoice unpaid"})
    call("PATCH", "/orgs/acme", {"status": "suspended", "suspension_reason": "Invoice 2 unpaid"})
    call("PATCH", "/orgs/acme", {"status": "active"})
    _publish(stream)

    # When an operator and its admin read its log
    seen_by_operator = _activity("acme")
    seen_by_admin = _activity("acme", caller=admin())

    # Then the operator sees the new reason; the admin, who may not see reasons, gets no entry for
    # it (not an "Organization Updated" that changed nothing they may see)
    assert [e["type"] for e in seen_by_operator] == [
        "Organization Reactivated",
        "Organization Updated",
        "Organization Suspended",
        "Organization Created",
    ]
    assert list(seen_by_operator[1]["changes"]) == ["suspension_reason"]
    assert [e["type"] for e in seen_by_admin] == [
        "Organization Reactivated",
        "Organization Suspended",
        "Organization Created",
    ]


def test_a_ticket_change_is_one_entry_with_every_field_it_changed_and_the_subject(bus, stream):
    # Given a ticket whose one PATCH changes its status, its priority and its subject
    create_org("acme")
    create_user("acme", "alice")
    ticket = create_ticket(subject="Printer on fire").body["ticket_id"]
    patch = {"status": "pending", "priority": "high", "subject": "Printer still on fire"}
    assert call("PATCH", f"/orgs/acme/tickets/{ticket}", patch).status == 200
    _publish(stream)

    # When its admin reads the log
    entries = _activity("acme", caller=admin())

    # Then the PATCH is one entry (the bus had two events for it), with all three changes
    assert [e["type"] for e in entries[:2]] == ["Ticket Status Changed", "Ticket Opened"]
    assert [t for t, d in bus.events() if d["event_id"] == entries[0]["event_id"]] == [
        "Ticket Updated",
        "Ticket Status Changed",
    ]
    assert entries[0]["changes"] == {
        "status": {"old": "open", "new": "pending"},
        "priority": {"old": "normal", "new": "high"},
        "subject": {"old": "Printer on fire", "new": "Printer still on fire"},
    }
    assert [e["resource"]["subject"] for e in entries[:2]] == ["Printer still on fire", "Printer on fire"]


def test_pages_follow_each_other_without_overlap_or_gap(bus, stream):
    create_org("acme", plan="pro")
    for user_id in ("alice", "bob", "carol", "dave", "erin", "fay", "gus"):
        create_user("acme", user_id)
    _publish(stream)
    everything = [e["event_id"] + e["type"] for e in _activity()]

    pages, cursor = [], None
    while True:
        query = {"limit": "3", **({"cursor": cursor} if cursor else {})}
        reply = call("GET", "/orgs/acme/activity", query=query)
        assert reply.status == 200, reply.body
        pages.append([e["event_id"] + e["type"] for e in reply.body["items"]])
        cursor = reply.body["next_cursor"]
        if not cursor:
            break

    assert len(everything) == 8
    assert [entry for page in pages for entry in page] == everything
    assert [len(page) for page in pages] == [3, 3, 2]


def test_a_cursor_of_another_org_is_refused(bus, stream):
    create_org("acme")
    create_org("bolt")
    for user_id in ("alice", "bob"):
        create_user("acme", user_id)
    _publish(stream)
    cursor = call("GET", "/orgs/acme/activity", query={"limit": "1"}).body["next_cursor"]

    reply = call("GET", "/orgs/bolt/activity", query={"cursor": cursor})

    assert reply.status == 400 and reply.body["error"]["code"] == "invalid_cursor"


def test_each_page_is_one_query_and_a_missing_org_is_404_in_it(bus, stream, dynamodb_calls):
    create_org("acme")
    for user_id in ("alice", "bob"):
        create_user("acme", user_id)
    _publish(stream)
    dynamodb_calls.clear()

    first = call("GET", "/orgs/acme/activity", query={"limit": "2"})
    second = call("GET", "/orgs/acme/activity", query={"limit": "2", "cursor": first.body["next_cursor"]})
    missing = call("GET", "/orgs/ghost/activity")

    assert (first.status, second.status, missing.status) == (200, 200, 404)
    assert missing.body["error"]["code"] == "not_found"
    assert dynamodb_calls == ["Query", "Query", "Query"]


def test_entries_carry_the_ttl_of_the_configured_retention(bus, stream, table, monkeypatch):
    monkeypatch.setenv("ACTIVITY_RETENTION_DAYS", "7")
    create_org("acme")

    _publish(stream)

    (entry,) = _stored_activity(table)
    occurred_at = datetime.fromisoformat(_activity()[0]["occurred_at"].replace("Z", "+00:00"))
    assert int(entry[TTL_ATTRIBUTE]["N"]) == int(occurred_at.timestamp()) + 7 * DAY


def test_a_replayed_batch_adds_nothing_and_activity_items_send_no_events(bus, stream, table):
    create_org("acme")
    create_user("acme", "alice")
    records = stream.read()
    feeder().feed(records)
    stored = _stored_activity(table)
    published = len(bus.accepted)

    # When Lambda delivers the same batch again
    feeder().feed(records)

    # Then the same items were rewritten, none added
    assert _stored_activity(table) == stored and len(stored) == 2
    # and the activity items' own stream records pass no filter, nor would they send an event
    later = stream.read()
    assert later and all(r["dynamodb"]["NewImage"]["entity"]["S"] == "activity" for r in later)
    assert not any(activity.accepts(record) for record in later)
    handler()({"Records": later}, LambdaContext("events"))
    assert len(bus.accepted) == 2 * published  # the replay's events (at least once), nothing more


def test_entries_are_written_in_batches_with_unprocessed_items_sent_again(bus, stream, table, monkeypatch):
    create_org("acme", plan="enterprise")
    for n in range(30):
        create_user("acme", f"user-{n}")
    records = stream.read()
    client = config.dynamodb()
    real, calls = client.batch_write_item, []

    def leave_the_last_unprocessed_once(RequestItems):
        calls.append(len(RequestItems[table]))
        if len(calls) == 1:
            real(RequestItems={table: RequestItems[table][:-1]})
            return {"UnprocessedItems": {table: RequestItems[table][-1:]}}
        return real(RequestItems=RequestItems)

    monkeypatch.setattr(client, "batch_write_item", leave_the_last_unprocessed_once)
    sent = []
    client.meta.events.register("before-send.dynamodb", lambda event_name, **_: sent.append(event_name))

    feeder().feed(records)

    assert calls == [25, 1, 6]  # 31 entries: a batch, its unprocessed item again, the rest
    assert len(_stored_activity(table)) == 31
    assert not [name for name in sent if name.endswith(("PutItem", "UpdateItem"))]


def test_when_the_log_cannot_be_written_nothing_is_published_and_every_record_is_retried(bus, stream, monkeypatch):
    create_org("acme")
    create_user("acme", "alice")
    records = stream.read()

    def throttled(_converted):
        raise ServiceUnavailable()

    monkeypatch.setattr(publisher, "_record_activity", throttled)
    response = handler()({"Records": records}, LambdaContext("events"))

    assert bus.accepted == []
    assert {f["itemIdentifier"] for f in response["batchItemFailures"]} == {
        r["dynamodb"]["SequenceNumber"] for r in records
    }


def test_a_cursor_taken_in_a_deleted_org_does_not_page_its_log_for_the_next_org_of_that_id(bus, stream):
    # Given a cursor an admin of acme took in its log
    create_org("acme", plan="pro")
    for user_id in ("root", "alice", "bob", "carol"):
        create_user("acme", user_id, role="admin" if user_id == "root" else "member")
    _publish(stream)
    old = call("GET", "/orgs/acme/activity", query={"limit": "2"}, caller=admin("acme", "root"))
    assert old.body["next_cursor"]
    # When acme is deleted and created again, with an admin of its own
    assert call("DELETE", "/orgs/acme").status == 204
    create_org("acme")
    create_user("acme", "newadmin", role="admin")
    _publish(stream)

    # Then the old cursor is refused, not a page of the deleted org's log
    reply = call(
        "GET", "/orgs/acme/activity", query={"cursor": old.body["next_cursor"]}, caller=admin("acme", "newadmin")
    )
    assert reply.status == 400 and reply.body["error"]["code"] == "invalid_cursor"
    # And the new admin's own pages are the new org's only
    assert [e["type"] for e in _activity("acme", caller=admin("acme", "newadmin"))] == [
        "User Created",
        "Organization Created",
    ]


def test_a_deleted_orgs_log_stays_for_operators_and_a_new_org_of_that_id_starts_afresh(bus, stream):
    create_org("acme")
    create_user("acme", "alice")
    _publish(stream)
    assert call("DELETE", "/orgs/acme").status == 204
    _publish(stream)

    # Then operators can still tell who deleted it; its admin, whose org is gone, cannot
    entries = _activity("acme")
    assert [e["type"] for e in entries[:1]] == ["Organization Deleted"]
    assert entries[0]["actor"] == OPERATOR["sub"]
    assert "Organization Deletion Started" in [e["type"] for e in entries]
    assert call("GET", "/orgs/acme/activity", caller=admin()).status == 404

    # When an org of the same id is created again, its log starts with it
    create_org("acme")
    _publish(stream)
    assert [e["type"] for e in _activity("acme", caller=admin())] == ["Organization Created"]


def test_the_orgs_users_are_listed_without_its_activity(bus, stream):
    create_org("acme")
    create_user("acme", "alice")
    _publish(stream)

    with_users = call("GET", "/orgs/acme", query={"include": "users"})
    users = call("GET", "/orgs/acme/users")

    assert [u["user_id"] for u in with_users.body["users"]] == ["alice"]
    assert [u["user_id"] for u in users.body["items"]] == ["alice"]
    assert users.body["next_cursor"] is None


def test_a_delete_sent_again_in_a_later_batch_rewrites_its_own_entry(bus, stream, table):
    # Given a user renamed, then deleted, the whole batch published once
    create_org("acme")
    create_user("acme", "alice")
    call("PATCH", "/orgs/acme/users/alice", {"name": "Alice A."})
    assert call("DELETE", "/orgs/acme/users/alice").status == 204
    records = stream.read()
    feeder().feed(records)
    keys = sorted(item["SK"]["S"] for item in _stored_activity(table))

    # When Lambda sends the delete's record again, alone (a batch that starts at it)
    deleted = [r for r in records if r["eventName"] == "REMOVE"]
    feeder().feed(deleted)

    # Then its entry is rewritten under the same key, none added, and the log keeps its order
    assert sorted(item["SK"]["S"] for item in _stored_activity(table)) == keys and len(keys) == 4
    entries = _activity()
    assert [e["type"] for e in entries] == ["User Deleted", "User Updated", "User Created", "Organization Created"]
    assert entries[0]["occurred_at"] >= entries[1]["occurred_at"]
