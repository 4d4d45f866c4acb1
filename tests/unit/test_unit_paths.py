"""The materialized paths of org units (issue 27): sort order and prefixes, no AWS."""

import pytest
from pydantic import ValidationError

from controlplane.dal import keys
from controlplane.logic.tree_reads import overlaps
from controlplane.models.units import UnitCreate, join, split

# Ids chosen to trip a separator that sorts after "-" or a digit: "eng-x" and "eng0" must not fall
# between "eng" and its children.
TREE = [("eng",), ("eng", "platform"), ("eng", "platform", "db"), ("eng", "web"), ("eng-x",), ("eng0",), ("ops",)]


def test_unit_sort_keys_order_the_tree_depth_first():
    shuffled = sorted(TREE, key=lambda path: path[::-1])

    ordered = sorted(shuffled, key=lambda path: keys.unit_keys("acme", path)["GSI1SK"])

    assert ordered == TREE


@pytest.mark.parametrize("unit", [("eng",), ("eng", "platform")])
def test_a_units_prefix_matches_exactly_its_subtree(unit):
    prefix = keys.units_prefix(unit)

    inside = [path for path in TREE if keys.unit_keys("acme", path)["GSI1SK"].startswith(prefix)]

    assert inside == [path for path in TREE if path[: len(unit)] == unit]


def test_a_units_direct_prefix_matches_its_own_users_only():
    own = keys.member_keys("acme", "bob", ("eng",))["GSI2SK"]
    below = keys.member_keys("acme", "carl", ("eng", "platform"))["GSI2SK"]
    beside = keys.member_keys("acme", "dan", ("eng-x",))["GSI2SK"]

    assert own.startswith(keys.members_prefix(("eng",), direct=True))
    assert not below.startswith(keys.members_prefix(("eng",), direct=True))
    assert below.startswith(keys.members_prefix(("eng",)))
    assert not beside.startswith(keys.members_prefix(("eng",)))
    assert own < below  # a unit's own users come before its children's


def test_each_orgs_units_and_members_have_partitions_of_their_own():
    assert keys.units_partition("a") != keys.units_partition("b")
    assert keys.members_partition("a") != keys.members_partition("b")
    assert keys.members_partition("a") != keys.units_partition("a")


def test_paths_round_trip():
    assert split("/") == ()
    assert split(join(("eng", "platform"))) == ("eng", "platform")


def test_root_cannot_be_created():
    with pytest.raises(ValidationError, match="implicit root"):
        UnitCreate(unit_id="root", name="Root")


@pytest.mark.parametrize(
    ("listed", "expected"),
    [("/", True), ("/eng", True), ("/eng/web", True), ("/ops", True), ("/ops/new", False), ("/sales", False)],
)
def test_a_move_overlaps_the_listings_of_its_ancestors_and_of_its_subtree(listed, expected):
    move = {"from": "/eng/web", "to": "/ops/web"}

    assert overlaps(split(listed), move) is expected
