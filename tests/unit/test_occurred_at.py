"""``occurred_at`` of a stream record's events: the write's own stamp; a delete's earliest possible time."""

from datetime import UTC, datetime

from controlplane.lifecycle.contract import events_for

ROUNDED = datetime(2026, 11, 23, 12, 44, tzinfo=UTC)  # DynamoDB Local rounds the record's time to the minute


def _user(**stamps: str) -> dict:
    attributes = {"PK": "ORG#acme", "SK": "USER#alice", "entity": "user", "org_id": "acme", "user_id": "alice"}
    attributes |= {"email": "alice@example.com", "name": "Alice", "role": "member", "version": 1} | stamps
    return {name: {"N": str(value)} if name == "version" else {"S": value} for name, value in attributes.items()}


def _record(old: dict | None, new: dict | None) -> dict:
    change = {"Keys": {"PK": {"S": "ORG#acme"}, "SK": {"S": "USER#alice"}}, "SequenceNumber": "100"}
    change["ApproximateCreationDateTime"] = ROUNDED.timestamp()
    images = ({"OldImage": old} if old else {}) | ({"NewImage": new} if new else {})
    return {"eventID": "e1", "dynamodb": change | images}


def _occurred_at(record: dict, earlier: dict | None = None) -> list[str]:
    return [event.detail.model_dump()["occurred_at"] for event in events_for(record, lambda _: False, earlier)]


def test_a_create_and_an_update_occur_at_their_own_stamp_to_the_millisecond_not_the_rounded_time():
    created = _user(created_at="2026-11-23T12:44:31.207Z", updated_at="2026-11-23T12:44:31.207Z")
    renamed = _user(created_at="2026-11-23T12:44:31.207Z", updated_at="2026-11-23T12:44:52.918Z") | {
        "name": {"S": "Alice A."}
    }

    assert _occurred_at(_record(None, created)) == ["2026-11-23T12:44:31.207Z"]
    assert _occurred_at(_record(created, renamed)) == ["2026-11-23T12:44:52.918Z"]


def test_a_delete_occurs_no_earlier_than_the_items_last_stamp_nor_the_records_time():
    recent = _user(created_at="2026-11-23T12:44:31.207Z", updated_at="2026-11-23T12:44:52.918Z")
    old = _user(created_at="2026-11-20T08:00:00.000Z", updated_at="2026-11-20T08:00:00.000Z")

    assert _occurred_at(_record(recent, None)) == ["2026-11-23T12:44:52.918Z"]
    assert _occurred_at(_record(old, None)) == ["2026-11-23T12:44:00.000Z"]


def test_a_delete_occurs_no_earlier_than_its_orgs_changes_earlier_in_the_batch_and_an_update_keeps_its_stamp():
    old = _user(created_at="2026-11-20T08:00:00.000Z", updated_at="2026-11-20T08:00:00.000Z")
    renamed = old | {"name": {"S": "Alice A."}, "updated_at": {"S": "2026-11-23T12:44:10.000Z"}}
    earlier = {"acme": datetime(2026, 11, 23, 12, 44, 30, 500000, tzinfo=UTC), "bolt": datetime.max.replace(tzinfo=UTC)}

    assert _occurred_at(_record(old, None), earlier) == ["2026-11-23T12:44:30.500Z"]
    assert _occurred_at(_record(old, renamed), earlier) == ["2026-11-23T12:44:10.000Z"]
