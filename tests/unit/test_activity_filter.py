"""The event source mapping's filter (``activity.FILTERS``): activity items never reach the events
function, every resource's record does. Checked with moto's EventBridge pattern matcher, an
implementation of the same filter-rule syntax that is not ours, and against ours (``accepts``),
which the local stream poller applies."""

import json

import pytest
from moto.events.models import EventPattern

from controlplane.dal import keys
from controlplane.lifecycle import activity, contract


def _record(name: str, old: dict | None, new: dict | None) -> dict:
    change = {"Keys": {"PK": {"S": "ORG#acme"}, "SK": {"S": "X"}}, "SequenceNumber": "1", "SizeBytes": 1}
    if old is not None:
        change["OldImage"] = old
    if new is not None:
        change["NewImage"] = new
    return {"eventID": "1", "eventName": name, "eventSource": "aws:dynamodb", "dynamodb": change}


def _item(entity: str | None) -> dict:
    return {"org_id": {"S": "acme"}, **({"entity": {"S": entity}} if entity else {})}


def _delivered_by_lambda(record: dict) -> bool:
    patterns = [EventPattern.load(f["pattern"]) for f in activity.filter_criteria()]
    return any(pattern.matches_event(record) for pattern in patterns)


RESOURCE_RECORDS = [
    _record(name, old, new)
    for entity in ("org", "user", "ticket")
    for name, old, new in (
        ("INSERT", None, _item(entity)),
        ("MODIFY", _item(entity), _item(entity)),
        ("REMOVE", _item(entity), None),
    )
]
ACTIVITY_RECORDS = [
    _record("INSERT", None, _item("activity")),
    _record("MODIFY", _item("activity"), _item("activity")),
    _record("REMOVE", _item("activity"), None),  # its TTL ran out
]
OTHER_RECORDS = [_record("INSERT", None, _item(None)), _record("INSERT", None, _item("sweep"))]


@pytest.mark.parametrize("record", RESOURCE_RECORDS, ids=lambda r: f"{r['eventName']}")
def test_every_record_of_a_resource_passes_the_filter(record):
    assert _delivered_by_lambda(record)
    assert activity.accepts(record)


@pytest.mark.parametrize("record", ACTIVITY_RECORDS + OTHER_RECORDS, ids=lambda r: f"{r['eventName']}")
def test_activity_items_and_bookkeeping_items_are_filtered_out(record):
    assert not _delivered_by_lambda(record)
    assert not activity.accepts(record)


def test_the_filter_is_lambdas_json_and_names_every_kind_of_the_contract():
    patterns = [json.loads(f["pattern"]) for f in activity.filter_criteria()]

    assert [list(p["dynamodb"]) for p in patterns] == [["NewImage"], ["OldImage"]]
    for pattern in patterns:
        assert set(pattern) == {"dynamodb"}  # a DynamoDB event source filters on this key only
        for image in pattern["dynamodb"].values():
            assert image["entity"]["S"] == [kind.entity for kind in contract.KINDS]


def test_every_detail_type_names_the_kind_of_its_resource():
    assert set(activity._MODELS) == set(contract.DETAILS)


def test_the_org_item_sorts_between_its_activity_and_its_users():
    low, high = keys.activity_range("acme")
    position = keys.activity_position("2026-01-01T00:00:00.000Z", "123", 1)
    entry = keys.activity_key("acme", position)["SK"]
    org = keys.org_key("acme")["SK"]

    assert low <= entry < org == high
    assert keys.users_range("acme")[0] == org
    assert keys.users_range("acme")[0] < keys.sweep_key("acme", "zed")["SK"] < keys.user_key("acme", "zzz")["SK"]
    assert keys.user_key("acme", "zzz")["SK"] < keys.users_range("acme")[1]
    assert position.split("#")[1] == "0" * 37 + "123"  # numbers of every length sort in order


def test_the_activity_list_names_the_contracts_org_created_and_cascaded_detail_types():
    # logic.activity keeps the string rather than import the contract at a cold start
    from controlplane.dal import keys
    from controlplane.lifecycle.contract import KINDS
    from controlplane.logic import activity as activity_list

    assert next(kind.created for kind in KINDS if kind.entity == keys.ORG) == activity_list._ORG_CREATED
    assert {kind.deleted for kind in KINDS if kind.cascaded} == set(activity_list._CASCADED)
