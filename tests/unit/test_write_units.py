"""The partition heat's accounting (bench.capacity, bench.heat): item sizes per DynamoDB's documented
rules, write units, and which index partitions a change writes. Hand-made stream records, no AWS."""

import pytest

from bench import capacity, heat, imports
from bench.capacity import Write, item_size, value_size, write_units, writes
from controlplane.dal import keys

# A schema with one index of each projection: ALL, INCLUDE (status) and KEYS_ONLY.
SCHEMA = {
    "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
    "GlobalSecondaryIndexes": [
        {
            "IndexName": "everything",
            "KeySchema": [{"AttributeName": "A", "KeyType": "HASH"}, {"AttributeName": "AS", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"},
        },
        {
            "IndexName": "status",
            "KeySchema": [{"AttributeName": "B", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["status"]},
        },
        {
            "IndexName": "keys",
            "KeySchema": [{"AttributeName": "C", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
        },
    ],
}


def s(text: str) -> dict:
    return {"S": text}


ITEM = {"PK": s("p"), "SK": s("s"), "A": s("a1"), "AS": s("x"), "B": s("b1"), "status": s("open"), "name": s("n")}


def record(old: dict | None, new: dict | None) -> dict:
    change = {"Keys": {"PK": s("p"), "SK": s("s")}}
    change |= {"OldImage": old} if old else {}
    change |= {"NewImage": new} if new else {}
    name = "MODIFY" if old and new else "INSERT" if new else "REMOVE"
    return {"eventName": name, "dynamodb": change}


@pytest.mark.parametrize(
    ("value", "size"),
    [
        (s("abc"), 3),
        (s("é"), 2),  # UTF-8 bytes, not characters
        ({"N": "123.45"}, 4),  # 5 significant digits: 3 bytes, plus 1
        ({"N": "1000"}, 2),  # trailing zeros trimmed: one digit
        ({"N": "-0.0012"}, 2),  # leading zeros and the sign are not digits
        ({"B": b"\x00\x01\x02"}, 3),  # the raw bytes, not their base64
        ({"BOOL": True}, 1),
        ({"NULL": True}, 1),
        ({"L": [s("ab"), {"N": "1"}]}, 3 + (2 + 1) + (2 + 1)),  # 3 bytes, and 1 per element
        ({"M": {"k": s("v")}}, 3 + (1 + 1 + 1)),  # an element counts its name
        ({"M": {}}, 3),
        ({"SS": ["a", "bc"]}, 3),
        ({"NS": ["1", "22"]}, 4),
    ],
)
def test_attribute_values_have_their_documented_sizes(value, size):
    assert value_size(value) == size


def test_an_item_counts_its_attribute_names_too():
    assert item_size({"name": s("abc"), "n": {"N": "7"}}) == 4 + 3 + 1 + 2


@pytest.mark.parametrize(("size", "units"), [(0, 1), (1, 1), (1024, 1), (1025, 2), (3000, 3)])
def test_a_write_unit_is_a_started_kilobyte_at_least_one(size, units):
    assert write_units(size) == units


def test_a_new_item_writes_the_table_and_each_index_whose_keys_it_has():
    found = writes(record(None, ITEM), SCHEMA)

    assert found == [Write("table", "p", 1), Write("everything", "a1", 1), Write("status", "b1", 1)]


def test_an_update_of_an_unprojected_attribute_skips_include_and_keys_only_indexes():
    found = writes(record(ITEM, {**ITEM, "name": s("renamed")}), SCHEMA)

    assert [write.index for write in found] == ["table", "everything"]


def test_an_update_of_an_included_attribute_rewrites_that_index_entry():
    found = writes(record(ITEM, {**ITEM, "status": s("solved")}), SCHEMA)

    assert [write.index for write in found] == ["table", "everything", "status"]


def test_an_index_key_change_is_a_delete_and_a_put_on_both_partitions():
    found = writes(record(ITEM, {**ITEM, "A": s("a2")}), SCHEMA)

    assert [write for write in found if write.index == "everything"] == [
        Write("everything", "a1", 1),
        Write("everything", "a2", 1),
    ]


def test_an_item_that_loses_an_index_key_leaves_that_index_with_one_write():
    without_b = {name: value for name, value in ITEM.items() if name != "B"}

    found = writes(record(ITEM, without_b), SCHEMA)

    assert [write for write in found if write.index == "status"] == [Write("status", "b1", 1)]


def test_a_delete_writes_the_table_and_every_index_the_item_was_in():
    found = writes(record({**ITEM, "C": s("c1")}, None), SCHEMA)

    assert [(write.index, write.partition) for write in found] == [
        ("table", "p"),
        ("everything", "a1"),
        ("status", "b1"),
        ("keys", "c1"),
    ]


def test_units_follow_the_larger_image_and_each_index_entry_its_own_size():
    big = {**ITEM, "C": s("c1"), "body": s("x" * 1500)}

    grown = writes(record({**ITEM, "C": s("c1")}, big), SCHEMA)

    # The table and the ALL index hold the 1.5 KB; KEYS_ONLY holds the keys alone, and did not change.
    assert grown == [Write("table", "p", 2), Write("everything", "a1", 2)]
    assert writes(record(None, big), SCHEMA)[-1] == Write("keys", "c1", 1)


def test_the_indexes_come_from_the_one_table_schema():
    table, gsi1 = capacity.indexes()

    assert table == capacity.Index("table", "PK", "SK", "ALL")
    assert gsi1 == capacity.Index("GSI1", "GSI1PK", "GSI1SK", "ALL")


def test_a_user_of_todays_layout_writes_its_org_partition_and_its_own_collection():
    user = {name: s(value) for name, value in keys.user_keys("acme", "alice").items()}

    found = writes(record(None, {**user, "name": s("Alice")}))

    assert [(write.index, write.partition) for write in found] == [
        ("table", "ORG#acme"),
        ("GSI1", "ORG#acme#USER#alice"),
    ]


@pytest.mark.parametrize(
    ("partition", "org"),
    [
        ("ORG#acme", "acme"),
        ("ORG#acme#TICKET#01T", "acme"),
        ("ORG#acme#USER#alice", "acme"),
        ("ORG#acme-2", "acme-2"),  # not acme's: a prefix must end at a separator
        ("IDEMPOTENCY#acme", "acme"),
        ("ORGS", None),
        ("ORGS#3", None),
    ],
)
def test_a_partition_belongs_to_one_org_or_is_shared(partition, org):
    assert heat.owner(partition, ["acme", "acme-2"]) == org


def test_shares_and_the_ceiling_come_from_the_hottest_partitions():
    measured = heat.Heat(["a", "b"], requests=50)
    measured.units.update({("table", "ORG#a"): 40, ("table", "ORG#b"): 30, ("GSI1", "ORGS"): 10, ("GSI1", "X"): 20})

    assert measured.hottest() == (("table", "ORG#a"), 40)
    assert measured.share() == 0.4
    assert measured.hottest(shared=True) == (("GSI1", "X"), 20)
    assert measured.ceiling == 1_000 * 50 / 40  # 40 units per 50 requests reach 1,000 a second at 1,250


def test_the_import_report_says_not_yet_measured_without_the_route(monkeypatch):
    monkeypatch.setattr(imports, "ROUTES", ())

    assert "Not yet measured" in imports.run()


def test_an_import_counts_the_users_it_wrote_and_the_orgs_other_writes():
    org, user = keys.org_key("acme"), keys.user_key("acme", "i00001")
    changes = [
        ("INSERT", user),
        ("INSERT", keys.user_key("other", "i00002")),
        ("MODIFY", org),
        ("MODIFY", org),
        ("INSERT", keys.activity_key("acme", "1")),
    ]
    records = [{"eventName": name, "dynamodb": {"Keys": {n: s(v) for n, v in key.items()}}} for name, key in changes]

    assert imports.users_arrived(records, "acme") == 1
    assert imports.org_writes(records, "acme") == {org["SK"]: 2}
