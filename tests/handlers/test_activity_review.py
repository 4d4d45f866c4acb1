"""Review findings on the activity log (DynamoDB Local: its stream is real)."""

import pytest

from controlplane import config
from controlplane.lifecycle import publisher
from tests.api import admin, call, create_org, create_user
from tests.events_support import BUS, RecordingBus, feeder, stream_reader

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)


@pytest.fixture
def bus(table, monkeypatch):
    monkeypatch.setenv("EVENT_BUS_NAME", BUS)
    monkeypatch.setattr(publisher.time, "sleep", lambda _: None)
    recorder = RecordingBus()
    config.use_bus(recorder)
    yield recorder
    config.use_bus(None)


@pytest.fixture
def stream(table):
    return stream_reader(table)


def test_a_new_org_of_a_deleted_orgs_id_never_shows_the_old_orgs_log(bus, stream):
    # Given acme, whose log names its user alice, deleted
    create_org("acme")
    create_user("acme", "alice")
    feeder().feed(stream.read())
    assert call("DELETE", "/orgs/acme").status == 204
    feeder().feed(stream.read())

    # When another tenant gets the id acme, before the events function has written its first entry
    create_org("acme")
    create_user("acme", "newadmin", role="admin")

    # Then its admin reads none of the deleted org's entries
    reply = call("GET", "/orgs/acme/activity", caller=admin("acme", "newadmin"))
    assert reply.status == 200, reply.body
    assert [(e["type"], e["resource"]["id"]) for e in reply.body["items"]] == []
