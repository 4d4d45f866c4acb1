"""The activity log of an org created again with a deleted org's id, and an events batch that runs
out of time (DynamoDB Local: its stream is real)."""

import json

import pytest

from controlplane.lifecycle import activity
from local.apigw import LambdaContext
from tests.api import admin, call, create_org, create_ticket, create_user
from tests.events_support import feeder
from tests.handlers.test_org_units import create_unit

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)


def _deleted_acme(stream) -> None:
    """acme, with its user alice, deleted; the events function has written all of its log."""
    create_org("acme")
    create_user("acme", "alice")
    feeder().feed(stream.read())
    assert call("DELETE", "/orgs/acme").status == 204
    feeder().feed(stream.read())


def test_a_new_org_of_a_deleted_orgs_id_never_shows_the_old_orgs_log(bus, stream):
    # Given acme, whose log names its user alice, deleted
    _deleted_acme(stream)

    # When another tenant gets the id acme, before the events function has written its first entry
    create_org("acme")
    create_user("acme", "newadmin", role="admin")

    # Then its admin reads none of the deleted org's entries
    reply = call("GET", "/orgs/acme/activity", caller=admin("acme", "newadmin"))
    assert reply.status == 200, reply.body
    assert [(e["type"], e["resource"]["id"]) for e in reply.body["items"]] == []


def test_a_new_orgs_entry_written_before_its_created_entry_does_not_open_the_old_orgs_log(bus, stream):
    # Given acme, whose log names its user alice, deleted
    _deleted_acme(stream)
    # and another tenant's acme, whose ticket's partition (a shard of its own) the events function
    # has read before the org's (its Created entry is not written yet)
    create_org("acme")
    create_user("acme", "newadmin", role="admin")
    create_ticket("acme", "newadmin", caller=admin("acme", "newadmin"))
    records = stream.read()
    feeder().feed([r for r in records if "#TICKET#" in r["dynamodb"]["Keys"]["PK"]["S"]])

    # When its admin reads the log
    reply = call("GET", "/orgs/acme/activity", caller=admin("acme", "newadmin"))

    # Then none of the deleted org's entries is on it
    assert reply.status == 200, reply.body
    assert [(e["type"], e["resource"]["id"]) for e in reply.body["items"] if e["resource"]["kind"] != "ticket"] == []
    assert reply.body["next_cursor"] is None


def test_a_later_page_taken_before_the_new_orgs_created_entry_never_reaches_the_old_orgs_log(bus, stream):
    # Given acme, whose log names its user alice, deleted; and another tenant's acme with three
    # tickets, whose entries the events function has written before the org's Created entry
    _deleted_acme(stream)
    create_org("acme")
    create_user("acme", "newadmin", role="admin")
    newadmin = admin("acme", "newadmin")
    for _ in range(3):
        create_ticket("acme", "newadmin", caller=newadmin)
    records = stream.read()
    feeder().feed([r for r in records if "#TICKET#" in r["dynamodb"]["Keys"]["PK"]["S"]])

    # When its admin reads the log two entries at a time, following the cursor, while the org's
    # Created entry is still not written
    first = call("GET", "/orgs/acme/activity", query={"limit": "2"}, caller=newadmin)
    assert first.status == 200 and first.body["next_cursor"], first.body
    query = {"limit": "2", "cursor": first.body["next_cursor"]}
    later = call("GET", "/orgs/acme/activity", query=query, caller=newadmin)

    # Then the later page holds the third ticket's entry and none of the deleted org's, and ends the log
    assert later.status == 200, later.body
    assert [e["resource"]["kind"] for e in first.body["items"] + later.body["items"]] == ["ticket"] * 3
    assert later.body["next_cursor"] is None


class _Clock(LambdaContext):
    """A Lambda context whose remaining time runs down as EventBridge is slow."""

    def __init__(self, seconds: float) -> None:
        super().__init__("events")
        self.left = seconds

    def get_remaining_time_in_millis(self) -> int:
        return int(self.left * 1000)


def test_a_slow_bus_stops_the_batch_before_the_timeout_instead_of_resending_what_was_published(bus, stream):
    # Given 30 records (three PutEvents calls), each call taking the 3 s the events client allows it
    # (1 s to connect, 2 s to read, no retry), with 8 s of the invocation left
    create_org("acme", plan="pro")
    for number in range(29):
        create_user("acme", f"user{number}")
    records = [record for record in stream.read() if activity.accepts(record)]  # the mapping's filter
    assert len(records) == 30
    clock = _Clock(8)
    accept = bus.put_events

    def slow(Entries):
        clock.left -= 3
        if clock.left <= 0:  # Lambda would have killed the invocation: every record comes back
            raise TimeoutError("Task timed out")
        return accept(Entries)

    bus.put_events = slow
    from events.handler import lambda_handler

    # When the events function runs out of time
    reply = lambda_handler({"Records": records}, clock)

    # Then it reports the records it did not publish, and not those it published
    failed = {f["itemIdentifier"] for f in reply["batchItemFailures"]}
    published = {json.loads(e["Detail"])["event_id"] for e in bus.accepted}
    assert published and failed
    assert not {r["eventID"] for r in records if r["dynamodb"]["SequenceNumber"] in failed} & published


def test_an_entry_stamped_a_moment_before_its_org_by_another_instance_hides_nothing(bus, stream):
    # Given acme and its user alice, both in the log, alice created by an API instance whose clock
    # is 5 ms behind the one that created acme (Lambda hosts' clocks differ by milliseconds)
    from controlplane.dal import keys, stamps
    from controlplane.dal.table import api_table
    from controlplane.lifecycle import timing

    create_org("acme")
    create_user("acme", "alice", role="admin")
    feeder().feed(stream.read())
    table = api_table()
    org = table.get(keys.org_key("acme"), consistent=True)
    found, _ = table.query(keys.org_partition("acme"), limit=10, between=keys.activity_range("acme"))
    [user_entry] = [e for e in found if e.get("type") == "User Created"]
    earlier = stamps.iso(timing.instant(org["created_at"]).timestamp() - 0.005)
    table.put({**user_entry, "occurred_at": earlier})

    # When its admin reads the log
    reply = call("GET", "/orgs/acme/activity", caller=admin("acme", "alice"))

    # Then both entries are there: the org's own Created entry bounds the log, not the clocks
    assert reply.status == 200, reply.body
    assert [e["type"] for e in reply.body["items"]] == ["User Created", "Organization Created"]


def _old_removal_sorted_above_the_new_created(stream) -> None:
    """acme with a unit, deleted, and another tenant's acme (admin newadmin) created in the same
    second, their entries written; the old unit's removal on a shard whose sequence numbers run
    ahead of the org's (the stream orders one second's records by number within a shard only)."""
    create_org("acme")
    create_unit("eng")
    feeder().feed(stream.read())
    assert call("DELETE", "/orgs/acme").status == 204
    create_org("acme")
    create_user("acme", "newadmin", role="admin")
    records = stream.read()
    [removed] = [r for r in records if r["dynamodb"]["Keys"]["SK"]["S"] == "UNIT#eng"]
    last = max(r["dynamodb"]["SequenceNumber"] for r in records)
    removed["dynamodb"]["SequenceNumber"] = str(int(last) + 1).zfill(len(last))
    removed["dynamodb"]["ApproximateCreationDateTime"] = max(
        r["dynamodb"]["ApproximateCreationDateTime"] for r in records
    )
    feeder().feed(records)


def test_a_new_orgs_log_leaves_out_the_old_orgs_removals_that_another_shard_sorts_after_its_created(bus, stream):
    # Given the old acme's Unit Deleted sorted above the new acme's Created (another shard), and the
    # events function has written every entry
    _old_removal_sorted_above_the_new_created(stream)

    # When the new org's admin reads its log
    reply = call("GET", "/orgs/acme/activity", caller=admin("acme", "newadmin"))

    # Then it holds the new org's own entries, not the deleted org's Unit Deleted
    assert reply.status == 200, reply.body
    assert [e["type"] for e in reply.body["items"]] == ["User Created", "Organization Created"]


def test_a_page_that_ends_between_the_old_orgs_removal_and_the_new_created_still_reads_the_new_log(bus, stream):
    # Given the same: the old acme's Unit Deleted sorted above the new acme's Created (another shard)
    _old_removal_sorted_above_the_new_created(stream)

    # When the new org's admin reads its log in pages of 2, the first of which does not reach its
    # Created entry
    items, cursor = [], None
    for _ in range(4):
        query = {"limit": "2", **({"cursor": cursor} if cursor else {})}
        reply = call("GET", "/orgs/acme/activity", caller=admin("acme", "newadmin"), query=query)
        assert reply.status == 200, reply.body
        items += [e["type"] for e in reply.body["items"]]
        if not (cursor := reply.body["next_cursor"]):
            break

    # Then the pages hold what one page of 20 holds: the new org's own entries, not the old org's
    # removal, and not an end of the log at that removal, which hid the new org's entries below it
    assert items == ["User Created", "Organization Created"]
