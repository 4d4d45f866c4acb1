"""The one-off migration counts the users of orgs stored before seats were counted, once."""

import pytest

from controlplane import config
from controlplane.dal.table import Table, api_table
from ops import migrate_user_counts
from tests.api import call, create_org, create_user


def _as_before_seats(table: str, org_id: str) -> None:
    """The org as the code before seats stored it: no user_count, no user_limit, no seat counter."""
    config.dynamodb().delete_item(
        TableName=table, Key={"PK": {"S": f"ORG#{org_id}"}, "SK": {"S": f"METADATA#{org_id}#SEATS"}}
    )
    config.dynamodb().update_item(
        TableName=table,
        Key={"PK": {"S": f"ORG#{org_id}"}, "SK": {"S": f"METADATA#{org_id}"}},
        UpdateExpression="REMOVE user_count, user_limit",
    )


@pytest.fixture
def legacy(table):
    """acme (enterprise, 7 users) and bolt (free, no users) stored before seats; core (pro, 2 users) counted."""
    create_org("acme", plan="pro")
    for i in range(7):
        create_user("acme", f"user-{i}")
    call("PATCH", "/orgs/acme", {"plan": "enterprise"})
    create_org("bolt")
    create_org("core", plan="pro")
    create_user("core", "carol")
    create_user("core", "dave")
    _as_before_seats(table, "acme")
    _as_before_seats(table, "bolt")
    return table


def test_migration_counts_each_org_not_counted_and_leaves_the_rest(legacy):
    report = migrate_user_counts.migrate(api_table(), echo=lambda _: None)

    assert report.counted == {"acme": 7, "bolt": 0}
    assert report.already == ["core"]
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 7}
    assert call("GET", "/orgs/acme").body["limits"] == {"users": 1000}
    assert call("GET", "/orgs/bolt").body["usage"] == {"users": 0}
    assert call("GET", "/orgs/core").body["usage"] == {"users": 2}


def test_after_the_migration_seats_are_enforced_and_given_back(legacy):
    migrate_user_counts.migrate(api_table(), echo=lambda _: None)

    assert create_user("bolt", "erin").status == 201
    assert call("DELETE", "/orgs/acme/users/user-0").status == 204
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 6}
    assert call("GET", "/orgs/bolt").body["usage"] == {"users": 1}


def test_running_it_again_changes_nothing(legacy):
    migrate_user_counts.migrate(api_table(), echo=lambda _: None)
    create_user("bolt", "erin")

    again = migrate_user_counts.migrate(api_table(), echo=lambda _: None)

    assert again.counted == {}
    assert sorted(again.already) == ["acme", "bolt", "core"]
    assert call("GET", "/orgs/bolt").body["usage"] == {"users": 1}


def test_an_org_over_its_plans_limit_is_counted_as_it_is_and_reported(legacy, table):
    # acme's 7 users on free, as the code before seats allowed
    config.dynamodb().update_item(
        TableName=table,
        Key={"PK": {"S": "ORG#acme"}, "SK": {"S": "METADATA#acme"}},
        UpdateExpression="SET #plan = :free",
        ExpressionAttributeNames={"#plan": "plan"},
        ExpressionAttributeValues={":free": {"S": "free"}},
    )

    report = migrate_user_counts.migrate(api_table(), echo=lambda _: None)

    assert report.over_limit == {"acme": (7, 5)}
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 7}
    assert create_user("acme", "eighth").error_code == "quota_exceeded"
    assert call("DELETE", "/orgs/acme/users/user-0").status == 204


def test_an_org_whose_plan_changed_before_it_was_counted_keeps_the_new_limit(legacy):
    call("PATCH", "/orgs/bolt", {"plan": "pro"})  # sets user_limit on an org not counted yet

    migrate_user_counts.migrate(api_table(), echo=lambda _: None)

    assert call("GET", "/orgs/bolt").body["limits"] == {"users": 50}


class LaggingReplica(Table):
    """A table whose eventually consistent reads of bolt's seat counter have not seen it yet (a
    GetItem within about a second of the write that created it)."""

    def get(self, key, consistent=False):
        if not consistent and key["SK"] == "METADATA#bolt#SEATS":
            return None
        return super().get(key, consistent)


def test_a_second_run_right_after_the_counter_moved_leaves_the_org_alone(legacy):
    # Given bolt counted by a first run, then moved to its counter item by its first seat write
    migrate_user_counts.migrate(api_table(), echo=lambda _: None)
    assert create_user("bolt", "erin").status == 201

    # When the migration runs again a moment later, its eventually consistent reads not caught up
    again = migrate_user_counts.migrate(LaggingReplica(config.dynamodb(), legacy), echo=lambda _: None)

    # Then bolt is left alone: no second, stale count on its org item beside the counter
    assert again.counted == {}
    org = config.dynamodb().get_item(TableName=legacy, Key={"PK": {"S": "ORG#bolt"}, "SK": {"S": "METADATA#bolt"}})
    assert "user_count" not in org["Item"]
    assert call("PATCH", "/orgs/bolt", {"name": "Bolt"}).body["usage"] == {"users": 1}


def test_the_command_line_migrates_the_named_table(legacy, capsys):
    assert migrate_user_counts.main(["--table", legacy]) == 0

    assert "acme: 7 of 1000 seats" in capsys.readouterr().out
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 7}


def test_counting_reads_every_page(legacy, monkeypatch):
    table = api_table()
    real = table.client.query
    pages = []

    def one_user_a_page(**request):
        pages.append(1)
        return real(**request, Limit=1)

    monkeypatch.setattr(table.client, "query", one_user_a_page)

    assert migrate_user_counts.count(table, "ORG#acme", "USER#") == 7
    assert len(pages) >= 7


class LaggingIndex(Table):
    """GSI1's ORGS listing a moment behind: bolt's ``user_count``, written by a first run a moment
    ago, not shown yet (a GSI is eventually consistent)."""

    def query_all(self, partition, **options):
        for page in super().query_all(partition, **options):
            yield [
                {k: v for k, v in org.items() if not (org["org_id"] == "bolt" and k == "user_count")} for org in page
            ]


def test_a_second_run_beside_the_orgs_first_seat_write_leaves_no_stale_count(legacy, monkeypatch):
    # Given bolt counted by a first run a moment ago (the listing does not show it yet), and bolt's
    # first seat write (erin's create, which moves the count to its counter item) landing after the
    # second run's read of the counter, while it counts bolt's users
    migrate_user_counts.migrate(api_table(), echo=lambda _: None)
    count, raced = migrate_user_counts.count, []

    def count_then_create(table, partition, prefix):
        found = count(table, partition, prefix)
        if partition == "ORG#bolt" and not raced:
            raced.append(create_user("bolt", "erin").status)
        return found

    monkeypatch.setattr(migrate_user_counts, "count", count_then_create)

    # When the second run goes through bolt
    again = migrate_user_counts.migrate(LaggingIndex(config.dynamodb(), legacy), echo=lambda _: None)

    # Then bolt is left alone: no stale count on its org item beside the counter
    assert raced == [201]
    assert "bolt" not in again.counted and "bolt" in again.already
    org = config.dynamodb().get_item(TableName=legacy, Key={"PK": {"S": "ORG#bolt"}, "SK": {"S": "METADATA#bolt"}})
    assert "user_count" not in org["Item"]
    assert call("PATCH", "/orgs/bolt", {"name": "Bolt"}).body["usage"] == {"users": 1}
