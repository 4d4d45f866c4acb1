"""No partition shared between tenants on the tenant write path (issue 26): every write that creating,
updating and deleting users and tickets makes, read back from the table's stream, lands in
partitions, of the table and of every index, that belong to one org only.

The index partitions are derived from each written item's attributes per the table's own schema
(``TABLE_SCHEMA``): an index entry is written where the new image has the index's key, and removed
where the old image had it. Activity entries (written from the stream by the events function) and
idempotency records are writes of the tenant path too, so the stream is run through the events
function and read again.
"""

import pytest

from controlplane.dal.schema import PARTITION_KEY, TABLE_SCHEMA
from tests.api import call, create_org, create_ticket, create_user
from tests.events_support import feeder, stream_reader

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)  # moto keeps no stream here

ORGS = ("acme", "bolt", "cedar")
INDEX_KEYS = {
    index["IndexName"]: next(key["AttributeName"] for key in index["KeySchema"] if key["KeyType"] == "HASH")
    for index in TABLE_SCHEMA["GlobalSecondaryIndexes"]
}


def written_partitions(records: list[dict]) -> set[str]:
    """(table or index name, partition key) of every partition the records wrote."""
    found = set()
    for record in records:
        change = record["dynamodb"]
        found.add(f"table:{change['Keys'][PARTITION_KEY]['S']}")
        for image in (change.get("NewImage"), change.get("OldImage")):
            for index, attribute in INDEX_KEYS.items():
                if image and attribute in image:
                    found.add(f"{index}:{image[attribute]['S']}")
    return found


def _tenant_writes(org_id: str) -> None:
    """Everything a tenant does to its users and tickets, with an Idempotency-Key on the creates."""
    once = {"Idempotency-Key": [f"{org_id}-k1"]}
    for user_id in ("alice", "bob"):
        assert create_user(org_id, user_id).status == 201
    body = {"user_id": "carol", "name": "Carol", "email": "carol@example.com"}
    assert call("POST", f"/orgs/{org_id}/users", body, headers=once).status == 201
    assert call("PATCH", f"/orgs/{org_id}/users/bob", {"role": "admin"}).status == 200
    ticket = create_ticket(org_id, "alice").body["ticket_id"]
    again = call("POST", f"/orgs/{org_id}/users/bob/tickets", {"subject": "x"}, headers=once)
    assert again.status == 201
    assert call("PATCH", f"/orgs/{org_id}/tickets/{ticket}", {"status": "solved"}).status == 200
    assert call("DELETE", f"/orgs/{org_id}/tickets/{ticket}").status == 204
    assert call("DELETE", f"/orgs/{org_id}/users/bob").status == 204


def test_users_and_tickets_of_different_orgs_write_no_common_partition(table, bus):
    for org_id in ORGS:
        assert create_org(org_id).status == 201
    stream = stream_reader(table)
    feeder().feed(stream.read())  # the org-level writes (which may write the listing) are not counted
    stream.read()

    written = {}
    for org_id in ORGS:
        _tenant_writes(org_id)
        records = stream.read()
        feeder().feed(records)  # the org's activity entries
        written[org_id] = written_partitions(records + stream.read())

    for org_id in ORGS:
        others = set().union(*(written[other] for other in ORGS if other != org_id))
        assert written[org_id] & others == set(), org_id
    # Each org's writes reached its users, its tickets, its activity and its idempotency records.
    assert {"table:ORG#acme", "table:IDEMPOTENCY#acme", "GSI1:ORG#acme#USER#alice"} <= written["acme"]
    assert any(partition.startswith("table:ORG#acme#TICKET#") for partition in written["acme"])


def test_a_user_create_writes_the_org_listing_no_more(table):
    create_org("acme")
    stream = stream_reader(table)
    stream.read()

    assert create_user("acme", "alice").status == 201

    assert "GSI1:ORGS" not in written_partitions(stream.read())
