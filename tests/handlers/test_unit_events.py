"""Lifecycle events and activity entries of org units (issue 27), from DynamoDB Local's real stream."""

import json

import jsonschema_rs
import pytest

from local import event_docs
from tests.api import admin, call, create_org, create_user
from tests.events_support import feeder, stream_reader
from tests.handlers.test_org_units import create_unit

SCHEMAS = {detail_type: jsonschema_rs.validator_for(schema) for detail_type, schema in event_docs.documented().items()}


@pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)  # its real stream
def test_unit_writes_send_their_events_and_one_activity_entry_each(bus, table):
    stream = stream_reader(table)
    create_org("acme")
    create_user("acme", "root", role="admin")
    for unit_id, parent in [("eng", None), ("platform", "eng"), ("db", "platform"), ("ops", None)]:
        create_unit(unit_id, parent)
    create_user("acme", "cid", unit="db")
    feeder().feed(stream.read())
    bus.accepted.clear()

    call("PATCH", "/orgs/acme/units/ops", {"name": "Operations"}, caller=admin())
    call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops"}, caller=admin())
    call("PATCH", "/orgs/acme/users/cid", {"unit": "eng"}, caller=admin())
    call("DELETE", "/orgs/acme/units/db", caller=admin())
    feeder().feed(stream.read())

    sent = [(e["DetailType"], json.loads(e["Detail"])) for e in bus.accepted]
    for detail_type, detail in sent:
        SCHEMAS[detail_type].validate(detail)
    assert [(t, d["resource"].get("unit_id") or d["resource"]["user_id"]) for t, d in sent] == [
        ("Unit Updated", "ops"),
        ("Unit Renamed", "ops"),
        ("Unit Updated", "platform"),  # db's path changed too: bookkeeping, no event
        ("Unit Moved", "platform"),
        ("User Updated", "cid"),
        ("User Moved", "cid"),
        ("Unit Deleted", "db"),
    ]
    moved = dict(sent)["Unit Moved"]
    assert moved["changes"] == {"parent_id": {"old": "eng", "new": "ops"}}
    assert moved["resource"]["path"] == "/ops/platform"
    assert moved["actor"]
    entries = call("GET", "/orgs/acme/activity", query={"limit": "5"}).body["items"]
    assert [(e["type"], e["resource"]) for e in entries[:4]] == [
        ("Unit Deleted", {"kind": "unit", "id": "db", "subject": None}),
        ("User Moved", {"kind": "user", "id": "cid", "subject": None}),
        ("Unit Moved", {"kind": "unit", "id": "platform", "subject": None}),
        ("Unit Renamed", {"kind": "unit", "id": "ops", "subject": None}),
    ]


@pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)  # its real stream
def test_a_move_with_a_rename_is_one_write_that_sends_both_events(bus, table):
    stream = stream_reader(table)
    create_org("acme")
    create_user("acme", "root", role="admin")
    for unit_id, parent in [("eng", None), ("platform", "eng"), ("ops", None)]:
        create_unit(unit_id, parent)
    feeder().feed(stream.read())
    bus.accepted.clear()

    call("PATCH", "/orgs/acme/units/platform", {"parent_id": "ops", "name": "Core"}, caller=admin())
    feeder().feed(stream.read())

    sent = [(e["DetailType"], json.loads(e["Detail"])) for e in bus.accepted]
    assert [t for t, _ in sent] == ["Unit Updated", "Unit Moved", "Unit Renamed"]
    updated = dict(sent)["Unit Updated"]
    assert updated["changes"]["parent_id"] == {"old": "eng", "new": "ops"}
    assert updated["changes"]["name"] == {"old": "Platform", "new": "Core"}
    assert dict(sent)["Unit Renamed"]["resource"]["path"] == "/ops/platform"
