"""The org-units migration: users stored before units land in the root, listed by unit."""

import pytest

from controlplane.dal import keys
from controlplane.dal.schema import GSI2_PARTITION_KEY, GSI2_SORT_KEY
from controlplane.dal.table import api_table
from ops import migrate_user_units
from tests.api import call, create_org, create_user
from tests.handlers.test_org_units import create_unit, ids


def _as_before_units(org_id: str, user_id: str) -> None:
    """Strip what units added to a stored user: as the API stored them before issue 27."""
    table = api_table()
    table.client.update_item(
        TableName=table.name,
        Key={k: {"S": v} for k, v in keys.user_key(org_id, user_id).items()},
        UpdateExpression="REMOVE #gpk, #gsk, #unit, #path",
        ExpressionAttributeNames={
            "#gpk": GSI2_PARTITION_KEY,
            "#gsk": GSI2_SORT_KEY,
            "#unit": "unit",
            "#path": "unit_path",
        },
    )


@pytest.fixture
def legacy(table):
    create_org("acme")
    create_unit("eng")
    for user_id in ("ann", "bob"):
        create_user("acme", user_id)
        _as_before_units("acme", user_id)
    create_user("acme", "cid", unit="eng")  # created since: left alone


def test_old_users_read_as_in_the_root_but_are_not_listed_until_migrated(legacy):
    assert call("GET", "/orgs/acme/users/ann").body["unit"] == "root"
    assert ids(call("GET", "/orgs/acme/units/root/users")) == ["cid"]


def test_the_migration_lists_them_in_the_root_and_runs_again_harmlessly(legacy):
    assert migrate_user_units.migrate(api_table(), echo=lambda _: None) == 2
    assert migrate_user_units.migrate(api_table(), echo=lambda _: None) == 0

    assert ids(call("GET", "/orgs/acme/units/root/users", query={"direct": "true"})) == ["ann", "bob"]
    assert ids(call("GET", "/orgs/acme/units/eng/users")) == ["cid"]
