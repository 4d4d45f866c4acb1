"""The events of one change go out in the order docs/EVENTS.md's table lists them (its *Delivery*
section promises it): a consumer may rely on the document's order, so the two must agree."""

import re

import pytest

from controlplane.lifecycle.contract import events_for
from local import event_docs

STAMP, LATER = "2026-11-23T12:44:31.207Z", "2026-11-23T12:45:02.511Z"
UNIT = {"PK": "ORG#acme#UNITS", "SK": "UNIT#platform", "entity": "unit", "org_id": "acme", "unit_id": "platform"}


def _documented_order() -> list[str]:
    """The detail-types in the order of the table's rows."""
    return re.findall(r"^\| `([A-Z][A-Za-z ]+)` \|", event_docs.DOC.read_text(), flags=re.MULTILINE)


def _image(attributes: dict) -> dict:
    return {name: {"N": str(value)} if isinstance(value, int) else {"S": value} for name, value in attributes.items()}


def _record(old: dict, new: dict) -> dict:
    change = {"Keys": _image({"PK": old["PK"], "SK": old["SK"]}), "SequenceNumber": "100"}
    change |= {"ApproximateCreationDateTime": 1795955100, "OldImage": _image(old), "NewImage": _image(new)}
    return {"eventID": "e1", "dynamodb": change}


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (  # PATCH /orgs/{org_id}/units/{unit_id} with a new parent_id and a new name
            UNIT | {"name": "Platform", "parent_id": "eng", "path": "/eng/platform", "depth": 2},
            UNIT | {"name": "Core", "parent_id": "ops", "path": "/ops/platform", "depth": 2},
            {"Unit Updated", "Unit Moved", "Unit Renamed"},
        ),
    ],
    ids=["unit-moved-and-renamed"],
)
def test_a_change_that_sends_several_events_sends_them_in_the_documented_order(old, new, expected):
    # Given the stream record of one write that changed two fields that each send an event
    old = old | {"created_at": STAMP, "updated_at": STAMP, "version": 1}
    new = new | {"created_at": STAMP, "updated_at": LATER, "version": 2}

    # When it is turned into events
    sent = [event.detail_type for event in events_for(_record(old, new), lambda _: False)]

    # Then they are the ones the table names, in the table's order
    assert set(sent) == expected and len(sent) == len(expected)
    assert sent == sorted(sent, key=_documented_order().index)
