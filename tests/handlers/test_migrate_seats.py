"""The seat counter moves from the org item to an item of its own (ops.migrate_seats, and the API's
own move on an org's first seat write), from data written in the layout before, while the API serves."""

import pytest

from controlplane import config
from controlplane.dal import keys, seats, stamps
from controlplane.dal.table import api_table
from controlplane.models import plans
from ops import migrate_seats
from tests.api import call, create_user


def _as_written_before(org_id: str, users: int, plan: str = "free") -> None:
    """An org and its users as the code before the move wrote them: the count on the org item, which
    GSI1 lists under ORGS."""
    table = api_table()
    seat_fields = {plans.USER_COUNT: users, plans.USER_LIMIT: plans.limit(plan)}
    attributes = {"org_id": org_id, "name": org_id.title(), "plan": plan, "status": "active", **seat_fields}
    table.put(stamps.new_item(keys.org_keys(org_id), keys.ORG, attributes, "operator"))
    for i in range(users):
        user = {"org_id": org_id, "user_id": f"user-{i}", "name": "U", "email": f"u{i}@example.com", "role": "member"}
        table.put(stamps.new_item(keys.user_keys(org_id, f"user-{i}"), keys.USER, user, "operator"))


def _stored(org_id: str) -> tuple[dict, dict | None, int]:
    org, counter = seats.read(api_table(), org_id, consistent=True)
    users, _ = api_table().query(keys.org_partition(org_id), prefix=keys.USER_PREFIX, limit=100, consistent=True)
    assert org is not None
    return org, counter, len(users)


@pytest.fixture
def before(table):
    _as_written_before("acme", 3)
    _as_written_before("bolt", 0, plan="pro")
    _as_written_before("core", 5)  # full
    return table


def test_the_migration_moves_every_count_exactly_and_a_second_run_moves_nothing(before):
    report = migrate_seats.migrate(api_table(), echo=lambda _: None)

    assert sorted(report.moved) == ["acme", "bolt", "core"]
    for org_id, users, limit in (("acme", 3, 5), ("bolt", 0, 50), ("core", 5, 5)):
        org, counter, stored_users = _stored(org_id)
        assert plans.USER_COUNT not in org and plans.USER_LIMIT not in org
        assert counter is not None
        assert (counter[plans.USER_COUNT], counter[plans.USER_LIMIT], stored_users) == (users, limit, users)
        assert call("GET", f"/orgs/{org_id}").body["usage"] == {"users": users}
    again = migrate_seats.migrate(api_table(), echo=lambda _: None)
    assert (again.moved, sorted(again.already)) == ([], ["acme", "bolt", "core"])


def test_before_the_migration_the_api_reads_and_writes_an_org_not_moved_yet(before):
    # Reads: the count where it still is
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 3}
    assert call("GET", "/orgs/acme", query={"include": "users"}).body["org"]["usage"] == {"users": 3}

    # Writes: the first seat write moves the counter, then counts on it
    assert create_user("acme", "alice").status == 201
    assert call("DELETE", "/orgs/acme/users/user-0").status == 204
    org, counter, users = _stored("acme")
    assert plans.USER_COUNT not in org and counter is not None and counter[plans.USER_COUNT] == users == 3
    # A full org not moved yet still refuses the next user, as quota_exceeded
    reply = create_user("core", "sixth")
    assert (reply.status, reply.error_code) == (409, "quota_exceeded")
    assert reply.body["error"]["details"] == {"quota": "users", "limit": 5, "used": 5, "plan": "free"}
    # A plan change moves it too, and a downgrade below the users is refused
    assert call("PATCH", "/orgs/bolt", {"plan": "free"}).body["limits"] == {"users": 5}
    assert call("PATCH", "/orgs/core", {"plan": "pro"}).status == 200
    assert _stored("core")[1][plans.USER_LIMIT] == 50


def test_a_user_delete_as_an_org_not_moved_yets_first_seat_write_moves_the_counter_and_gives_the_seat_back(before):
    # When the first seat write on acme (3 users, counted on its org item) is a user's delete
    reply = call("DELETE", "/orgs/acme/users/user-0")

    # Then it is done, on the counter it moved first: 2 users, counted on the counter alone
    assert reply.status == 204, reply.body
    org, counter, users = _stored("acme")
    assert plans.USER_COUNT not in org and counter is not None and counter[plans.USER_COUNT] == users == 2


def test_an_org_counted_before_without_a_limit_of_its_own_moves_with_its_plans_limit(before):
    # Given acme as the code before left an org whose plan it never changed: a count, no limit
    config.dynamodb().update_item(
        TableName=config.settings().table_name,
        Key={"PK": {"S": "ORG#acme"}, "SK": {"S": "METADATA#acme"}},
        UpdateExpression="REMOVE user_limit",
    )

    # When its first seat write moves the count
    assert create_user("acme", "alice").status == 201

    # Then the counter holds the count and its plan's limit (free: 5), and the org item neither
    org, counter, users = _stored("acme")
    assert plans.USER_COUNT not in org and plans.USER_LIMIT not in org
    assert counter is not None and (counter[plans.USER_COUNT], counter[plans.USER_LIMIT], users) == (4, 5, 4)


def test_an_org_counted_before_with_a_limit_of_its_own_moves_with_that_limit_not_its_plans(before):
    # Given acme (free: 5 today, 3 users) as the code before left it with a limit of 4 on its item
    config.dynamodb().update_item(
        TableName=config.settings().table_name,
        Key={"PK": {"S": "ORG#acme"}, "SK": {"S": "METADATA#acme"}},
        UpdateExpression="SET user_limit = :limit",
        ExpressionAttributeValues={":limit": {"N": "4"}},
    )

    # When its first seat write moves the count, then the counter keeps the limit it had: one seat left, taken
    assert create_user("acme", "alice").status == 201
    _, counter, users = _stored("acme")
    assert counter is not None and (counter[plans.USER_COUNT], counter[plans.USER_LIMIT], users) == (4, 4, 4)
    assert create_user("acme", "bob").error_code == "quota_exceeded"


def test_a_user_created_by_the_code_before_while_the_migration_copies_the_count_is_not_lost(before, monkeypatch):
    # Given a Lambda still running the code before, which adds a user and its seat on the org item
    # right after the move has read acme's count (the migration's own read of it is the first)
    read = seats.read
    reads, raced = [], []

    def read_then_race(table, org_id, consistent=False):
        found = read(table, org_id, consistent)
        reads.append(org_id)
        if reads.count("acme") == 2 and not raced:
            raced.append(org_id)
            user = {"org_id": "acme", "user_id": "late", "name": "L", "email": "l@example.com", "role": "member"}
            table.put(stamps.new_item(keys.user_keys("acme", "late"), keys.USER, user, "operator"))
            table.client.update_item(
                TableName=table.name,
                Key={"PK": {"S": "ORG#acme"}, "SK": {"S": "METADATA#acme"}},
                UpdateExpression="ADD user_count :one",
                ExpressionAttributeValues={":one": {"N": "1"}},
            )
        return found

    monkeypatch.setattr(seats, "read", read_then_race)

    # When the migration moves acme's counter
    migrate_seats.migrate(api_table(), echo=lambda _: None)

    # Then the count moved is the one after the late user: the move read it again
    _, counter, users = _stored("acme")
    assert raced and counter is not None and counter[plans.USER_COUNT] == users == 4


def test_an_org_never_counted_is_reported_and_left_alone(before):
    api_table().client.update_item(
        TableName=api_table().name,
        Key={"PK": {"S": "ORG#bolt"}, "SK": {"S": "METADATA#bolt"}},
        UpdateExpression="REMOVE user_count, user_limit",
    )

    report = migrate_seats.migrate(api_table(), echo=lambda _: None)

    assert report.not_counted == ["bolt"]
    assert _stored("bolt")[1] is None
    assert migrate_seats.main(["--table", api_table().name]) == 1


def test_a_plan_change_by_the_code_before_while_the_migration_copies_the_count_is_not_lost(before, monkeypatch):
    # Given a Lambda still running the code before, which downgrades bolt (no users) from pro to free,
    # writing the plan and its limit on the org item, right after the move has read bolt (the
    # migration's own read of it is the first)
    read = seats.read
    reads, raced = [], []

    def read_then_downgrade(table, org_id, consistent=False):
        found = read(table, org_id, consistent)
        reads.append(org_id)
        if reads.count("bolt") == 2 and not raced:
            raced.append(org_id)
            table.client.update_item(
                TableName=table.name,
                Key={"PK": {"S": "ORG#bolt"}, "SK": {"S": "METADATA#bolt"}},
                UpdateExpression="SET #plan = :free, user_limit = :five",
                ExpressionAttributeNames={"#plan": "plan"},
                ExpressionAttributeValues={":free": {"S": "free"}, ":five": {"N": "5"}},
            )
        return found

    monkeypatch.setattr(seats, "read", read_then_downgrade)

    # When the migration moves bolt's counter
    migrate_seats.migrate(api_table(), echo=lambda _: None)

    # Then the counter has the free plan's limit, not the pro one the migration read first
    org, counter, _ = _stored("bolt")
    assert raced and org["plan"] == "free"
    assert counter is not None and counter[plans.USER_LIMIT] == 5
    assert call("GET", "/orgs/bolt").body["limits"] == {"users": 5}


def test_a_plan_change_whose_every_move_the_code_before_overtakes_goes_on_the_org_item(before, monkeypatch):
    # Given acme (3 users, free) not moved yet, and a Lambda still running the code before, which adds
    # a user on the org item just before each of the move's transactions
    moves, transact = [], seats.transact

    def a_user_added_first(table, request):
        if "Put" in request[0] and request[0]["Put"]["Item"]["SK"]["S"].endswith("#SEATS"):  # a move's
            moves.append(1)
            table.client.update_item(
                TableName=table.name,
                Key={"PK": {"S": "ORG#acme"}, "SK": {"S": "METADATA#acme"}},
                UpdateExpression="ADD user_count :one",
                ExpressionAttributeValues={":one": {"N": "1"}},
            )
        return transact(table, request)

    monkeypatch.setattr(seats, "transact", a_user_added_first)

    # When an operator moves acme to pro
    reply = call("PATCH", "/orgs/acme", {"plan": "pro"})

    # Then after its attempts the move gives up, and the plan and its limit go on the org item, with
    # the count where the code before keeps it: nothing lost, no counter beside it
    assert len(moves) == seats._MOVE_ATTEMPTS
    assert reply.status == 200, reply.body
    assert (reply.body["plan"], reply.body["usage"], reply.body["limits"]) == ("pro", {"users": 7}, {"users": 50})
    org, counter, _ = _stored("acme")
    assert counter is None and (org[plans.USER_COUNT], org[plans.USER_LIMIT]) == (7, 50)


def _plan_changed_by_the_code_before(org_id: str, plan: str) -> None:
    """A plan change by a Lambda still running the code before: the plan and its limit on the org
    item, on condition that a count there fits it, which holds where there is none (a moved org)."""
    table, limit = api_table(), plans.limit(plan)
    table.client.update_item(
        TableName=table.name,
        Key={"PK": {"S": f"ORG#{org_id}"}, "SK": {"S": f"METADATA#{org_id}"}},
        UpdateExpression="SET #plan = :plan, user_limit = :limit",
        ConditionExpression="attribute_exists(PK) AND (attribute_not_exists(user_count) OR user_count <= :limit)",
        ExpressionAttributeNames={"#plan": "plan"},
        ExpressionAttributeValues={":plan": {"S": plan}, ":limit": {"N": str(limit)}},
    )


def test_a_plan_change_by_the_code_before_after_the_move_reaches_the_counter_on_a_run_again(before):
    # Given bolt (pro, no users) moved, then downgraded to free by a Lambda still on the code before
    migrate_seats.migrate(api_table(), echo=lambda _: None)
    _plan_changed_by_the_code_before("bolt", "free")

    # When the migration runs again, once the deploy is done
    migrate_seats.migrate(api_table(), echo=lambda _: None)

    # Then bolt's seats follow its plan: the counter has free's limit, and the org item none
    org, counter, _ = _stored("bolt")
    assert counter is not None and counter[plans.USER_LIMIT] == 5
    assert plans.USER_LIMIT not in org
    assert call("GET", "/orgs/bolt").body["limits"] == {"users": 5}


def test_a_limit_left_by_the_code_before_and_changed_since_by_this_code_just_goes(before):
    # Given bolt moved, downgraded to free by the code before, then upgraded to enterprise by this code
    migrate_seats.migrate(api_table(), echo=lambda _: None)
    _plan_changed_by_the_code_before("bolt", "free")
    assert call("PATCH", "/orgs/bolt", {"plan": "enterprise"}).status == 200

    # When the migration runs again
    migrate_seats.migrate(api_table(), echo=lambda _: None)

    # Then the counter keeps the enterprise limit, and the free one left on the org item is gone
    org, counter, _ = _stored("bolt")
    assert counter is not None and counter[plans.USER_LIMIT] == 1000
    assert plans.USER_LIMIT not in org
