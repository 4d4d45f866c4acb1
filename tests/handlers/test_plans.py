"""Plans and seats: the catalogue, usage on the org, quota_exceeded on the one write that takes a seat."""

import pytest
from botocore.exceptions import ClientError

from controlplane import config
from controlplane.dal import keys, seats
from controlplane.dal.conditions import ConditionFailed
from controlplane.dal.table import api_table
from controlplane.models import plans
from tests.api import OPERATOR, admin, call, create_org, create_user, member

FULL = {"quota": "users", "limit": 5, "used": 5, "plan": "free"}
# Issue 20's table, written out: the test fails if the catalogue drifts from what was promised.
FREE_REQUESTS = {"per_second": 10, "burst": 20, "per_day": 10_000}
PRO_REQUESTS = {"per_second": 100, "burst": 200, "per_day": 1_000_000}
ENTERPRISE_REQUESTS = {"per_second": 1_000, "burst": 2_000, "per_day": None}


def _users(org_id: str = "acme") -> list[str]:
    return [u["user_id"] for u in call("GET", f"/orgs/{org_id}/users").body["items"]]


@pytest.fixture
def full_free_org(table):
    create_org("acme")
    for i in range(5):
        assert create_user("acme", f"user-{i}").status == 201
    return table


def test_plans_lists_the_catalogue_to_any_signed_in_caller(table):
    for caller in (admin("acme"), member("bolt", "bob"), OPERATOR):
        reply = call("GET", "/plans", caller=caller)

        assert reply.status == 200
        assert reply.body == {
            "items": [
                {"plan": "free", "limits": {"users": 5}, "requests": FREE_REQUESTS},
                {"plan": "pro", "limits": {"users": 50}, "requests": PRO_REQUESTS},
                {"plan": "enterprise", "limits": {"users": 1000}, "requests": ENTERPRISE_REQUESTS},
            ]
        }


def test_a_caller_that_is_neither_an_operator_nor_an_org_user_is_refused_even_the_plans(table):
    reply = call("GET", "/plans", caller={"sub": "no-org"})

    assert reply.status == 403
    assert reply.body["error"]["message"] == "Your sign-in names no organization, user and role"


def test_every_plan_and_the_operators_have_request_limits():
    assert set(plans.REQUEST_LIMITS) == set(plans.CATALOGUE)
    assert plans.usage_plans()[plans.OPERATORS]._asdict() == {"per_second": 200, "burst": 400, "per_day": None}
    assert plans.OPERATORS not in plans.CATALOGUE  # no org can be put on the operators' plan


def test_plans_needs_a_token(table):
    assert call("GET", "/plans", caller=None).status == 401


def test_the_plan_field_accepts_exactly_the_catalogues_plans(table):
    assert create_org("gold", plan="gold").status == 422
    for plan in plans.CATALOGUE:
        assert create_org(f"org-{plan}", plan=plan).status == 201


def test_a_new_org_shows_its_usage_and_its_plans_limits(table):
    reply = create_org("acme", plan="pro")

    assert (reply.body["usage"], reply.body["limits"]) == ({"users": 0}, {"users": 50})
    assert "user_count" not in reply.body and "user_limit" not in reply.body


def test_usage_counts_users_on_get_and_include_and_the_list_shows_limits_only(table):
    create_org("acme")
    create_user("acme", "alice")
    create_user("acme", "bob")

    assert call("GET", "/orgs/acme").body["usage"] == {"users": 2}
    assert call("GET", "/orgs/acme", query={"include": "users"}).body["org"]["usage"] == {"users": 2}
    # The listing is one index partition a user create no longer writes: no seats used there.
    listed = call("GET", "/orgs").body["items"][0]
    assert "usage" not in listed and listed["limits"] == {"users": 5}


def test_a_rename_answers_the_seats_as_they_are_not_as_a_lagging_read_shows_them(table, monkeypatch):
    # Given an org whose second user was created a moment ago, which a read that has not seen that
    # write yet (DynamoDB's default, eventually consistent, for up to about a second) still misses
    create_org("acme")
    create_user("acme", "alice")
    _, stale = seats.read(api_table(), "acme", consistent=True)
    create_user("acme", "bob")
    reads = seats.read
    monkeypatch.setattr(
        seats,
        "read",
        lambda table, org_id, consistent=False: (
            reads(table, org_id, True) if consistent else (reads(table, org_id, True)[0], stale)
        ),
    )

    # When the org is renamed
    reply = call("PATCH", "/orgs/acme", {"name": "Acme Two"})

    # Then the write's answer, the new state a client keeps, counts both users
    assert reply.status == 200, reply.body
    assert reply.body["usage"] == {"users": 2}


def test_creating_a_user_past_the_limit_is_409_quota_exceeded_and_writes_nothing(full_free_org):
    reply = create_user("acme", "sixth")

    assert reply.status == 409
    assert reply.error_code == "quota_exceeded"
    assert reply.body["error"]["details"] == FULL
    assert "sixth" not in _users()
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 5}


def test_a_full_org_refuses_a_user_with_its_one_transaction(full_free_org, dynamodb_calls):
    # a counter that holds no seat is not one still on the org item: nothing to move, nothing to retry
    dynamodb_calls.clear()

    reply = create_user("acme", "sixth")

    assert reply.error_code == "quota_exceeded"
    assert dynamodb_calls == ["TransactWriteItems", "GetItem"]  # and the org's plan, for the refusal's details


def test_a_bulk_take_of_one_user_more_than_the_seats_left_takes_none(table):
    # Given a free org (5 seats) with 3 users, and an import's part that read the limit
    create_org("acme")
    for i in range(3):
        create_user("acme", f"user-{i}")
    rows = [
        {**keys.user_keys("acme", f"row-{i}"), "entity": keys.USER, "org_id": "acme", "user_id": f"row-{i}"}
        for i in range(3)
    ]

    # When it takes 3 seats, then the counter refuses them all; 2 fit exactly
    with pytest.raises(ConditionFailed) as refused:
        seats.take(api_table(), "acme", rows, limit=5)
    assert refused.value.action == len(rows) + 1
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 3}
    seats.take(api_table(), "acme", rows[:2], limit=5)
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 5}


def test_an_existing_user_in_a_full_org_is_409_already_exists(full_free_org):
    reply = create_user("acme", "user-0")

    assert reply.error_code == "already_exists"


def test_deleting_a_user_gives_the_seat_back(full_free_org):
    assert call("DELETE", "/orgs/acme/users/user-0").status == 204

    assert call("GET", "/orgs/acme").body["usage"] == {"users": 4}
    assert create_user("acme", "sixth").status == 201


def test_a_stale_if_match_on_a_user_delete_keeps_user_and_seat(full_free_org):
    call("PATCH", "/orgs/acme/users/user-0", {"name": "Renamed"})

    reply = call("DELETE", "/orgs/acme/users/user-0", headers={"If-Match": ['"1"']})

    assert reply.status == 412
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 5}


def test_deleting_a_missing_user_is_404_and_counts_nothing(full_free_org):
    assert call("DELETE", "/orgs/acme/users/ghost").status == 404

    assert call("GET", "/orgs/acme").body["usage"] == {"users": 5}


def test_upgrading_sets_the_new_limit_and_makes_room(full_free_org):
    reply = call("PATCH", "/orgs/acme", {"plan": "pro"})

    assert reply.status == 200
    assert reply.body["limits"] == {"users": 50}
    assert create_user("acme", "sixth").status == 201


def test_downgrading_below_current_use_is_409_quota_exceeded_and_changes_nothing(table):
    create_org("acme", plan="pro")
    for i in range(6):
        create_user("acme", f"user-{i}")
    before = call("GET", "/orgs/acme").body

    reply = call("PATCH", "/orgs/acme", {"plan": "free", "name": "Cheaper"})

    assert reply.status == 409
    assert reply.error_code == "quota_exceeded"
    assert reply.body["error"]["details"] == {"quota": "users", "limit": 5, "used": 6, "plan": "free"}
    assert call("GET", "/orgs/acme").body == before


def test_downgrading_to_exactly_the_users_there_are_is_allowed(full_free_org):
    call("PATCH", "/orgs/acme", {"plan": "pro"})

    reply = call("PATCH", "/orgs/acme", {"plan": "free"})

    assert reply.status == 200
    assert (reply.body["plan"], reply.body["limits"]) == ("free", {"users": 5})


def test_a_refusal_just_after_a_downgrade_names_the_new_plan_not_the_one_a_lagging_read_shows(
    full_free_org, monkeypatch
):
    # Given a full org downgraded a moment ago, which a read that has not seen that write yet
    # (DynamoDB's default, eventually consistent, for up to about a second) still shows on pro
    call("PATCH", "/orgs/acme", {"plan": "pro"})
    stale = api_table().get(keys.org_key("acme"), consistent=True)
    assert call("PATCH", "/orgs/acme", {"plan": "free"}).status == 200
    table = api_table()
    gets = type(table).get
    monkeypatch.setattr(
        type(table), "get", lambda self, key, consistent=False: gets(self, key, True) if consistent else stale
    )

    # When one more user is asked for
    reply = create_user("acme", "sixth")

    # Then the refusal names the plan whose limit it gives
    assert reply.error_code == "quota_exceeded"
    assert reply.body["error"]["details"] == FULL


def test_a_stale_if_match_on_a_downgrade_is_412_first(table):
    create_org("acme", plan="pro")
    for i in range(6):
        create_user("acme", f"user-{i}")
    call("PATCH", "/orgs/acme", {"name": "Renamed"})

    reply = call("PATCH", "/orgs/acme", {"plan": "free"}, headers={"If-Match": ['"1"']})

    assert reply.status == 412


def test_a_replayed_create_takes_no_second_seat(table):
    create_org("acme")
    body = {"user_id": "alice", "name": "Alice", "email": "alice@example.com"}
    first = call("POST", "/orgs/acme/users", body, headers={"Idempotency-Key": ["k"]})

    replay = call("POST", "/orgs/acme/users", body, headers={"Idempotency-Key": ["k"]})

    assert (first.status, replay.body) == (201, first.body)
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 1}


def test_a_transaction_conflict_is_retried_and_counts_once(table, monkeypatch):
    # DynamoDB Local never cancels for a conflict; the cloud does when two writes touch the org at once.
    create_org("acme")
    client = config.dynamodb()
    real = client.transact_write_items
    conflicts = []

    def conflict_once(**request):
        if not conflicts:
            conflicts.append(1)
            reasons = [{"Code": "None"}, {"Code": "TransactionConflict", "Message": "Transaction is ongoing"}]
            error = {"Error": {"Code": "TransactionCanceledException", "Message": "injected"}}
            raise ClientError({**error, "CancellationReasons": reasons}, "TransactWriteItems")
        return real(**request)

    monkeypatch.setattr(client, "transact_write_items", conflict_once)

    reply = create_user("acme", "alice")

    assert reply.status == 201
    assert conflicts == [1]
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 1}
    assert _users() == ["alice"]


def test_conflicts_that_never_end_are_503_and_write_nothing(table, monkeypatch):
    create_org("acme")
    client = config.dynamodb()

    def always_conflict(**_):
        reasons = [{"Code": "TransactionConflict"}, {"Code": "None"}]
        error = {"Error": {"Code": "TransactionCanceledException", "Message": "injected"}}
        raise ClientError({**error, "CancellationReasons": reasons}, "TransactWriteItems")

    monkeypatch.setattr(client, "transact_write_items", always_conflict)

    reply = create_user("acme", "alice")

    assert reply.status == 503
    assert "Retry-After" in reply.headers
    monkeypatch.undo()
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 0}


def _forget_the_count(table: str, org_id: str) -> None:
    """Make an org as it was stored before seats were counted: no counter item, no count on the org."""
    config.dynamodb().delete_item(
        TableName=table, Key={"PK": {"S": f"ORG#{org_id}"}, "SK": {"S": f"METADATA#{org_id}#SEATS"}}
    )
    config.dynamodb().update_item(
        TableName=table,
        Key={"PK": {"S": f"ORG#{org_id}"}, "SK": {"S": f"METADATA#{org_id}"}},
        UpdateExpression="REMOVE user_count, user_limit",
    )


def test_an_org_not_counted_yet_refuses_new_users_with_503_and_shows_null_usage(table):
    create_org("acme")
    _forget_the_count(table, "acme")

    reply = create_user("acme", "alice")

    assert reply.status == 503
    assert reply.headers["Retry-After"] == "30"
    assert _users() == []
    assert call("GET", "/orgs/acme").body["usage"] == {"users": None}
    assert call("GET", "/orgs/acme").body["limits"] == {"users": 5}


def test_an_org_not_counted_yet_keeps_its_users_until_counted(table):
    create_org("acme")
    create_user("acme", "alice")
    _forget_the_count(table, "acme")

    assert call("DELETE", "/orgs/acme/users/alice").status == 503
    assert _users() == ["alice"]


def test_an_org_not_counted_yet_may_change_plan(table):
    create_org("acme")
    _forget_the_count(table, "acme")

    reply = call("PATCH", "/orgs/acme", {"plan": "pro"})

    assert reply.status == 200
    assert reply.body["limits"] == {"users": 50}


def test_the_openapi_document_names_quota_exceeded_on_the_writes_that_take_seats():
    from organizations.handler import app as organizations_app
    from users.handler import app as users_app

    for app, path, method in (
        (users_app, "/orgs/{org_id}/users", "post"),
        (organizations_app, "/orgs/{org_id}", "patch"),
    ):
        schema = app.get_openapi_schema().model_dump(mode="json", by_alias=True, exclude_none=True)
        conflict = schema["paths"][path][method]["responses"]["409"]["content"]["application/json"]

        example = conflict["examples"]["quota_exceeded"]["value"]["error"]
        assert example["code"] == "quota_exceeded"
        assert example["details"] == FULL


def test_a_plan_change_of_an_org_counted_between_its_read_and_its_write_goes_on_its_counter(table, monkeypatch):
    from controlplane.dal import seats
    from controlplane.dal.table import api_table
    from ops import migrate_user_counts

    # Given an org not counted yet, which the migrations count (and move its count to a counter item)
    # after the change found no counter
    create_org("acme")
    create_user("acme", "alice")
    _forget_the_count(table, "acme")
    set_uncounted, counted = seats.set_uncounted, []

    def counted_meanwhile(*args, **kwargs):
        if not counted:
            counted.append(migrate_user_counts.migrate(api_table(), echo=lambda _: None).counted)
            counted.append(seats.move(api_table(), "acme"))
        return set_uncounted(*args, **kwargs)

    monkeypatch.setattr(seats, "set_uncounted", counted_meanwhile)

    # When its plan changes
    reply = call("PATCH", "/orgs/acme", {"plan": "pro"})

    # Then the change is made as a counted org's: the new limit is the counter's, which seats follow
    assert counted == [{"acme": 1}, True]
    assert reply.status == 200, reply.body
    assert (reply.body["plan"], reply.body["limits"], reply.body["usage"]) == ("pro", {"users": 50}, {"users": 1})
    org, counter = seats.read(api_table(), "acme", consistent=True)
    assert counter is not None and counter[plans.USER_LIMIT] == 50 and plans.USER_LIMIT not in org


@pytest.mark.parametrize("counted", [True, False], ids=["counted", "not-counted-yet"])
def test_a_plan_change_of_an_org_deleted_right_after_it_is_404_not_a_500(table, monkeypatch, counted):
    from controlplane.dal import seats
    from controlplane.logic import cascade

    # Given an org whose delete runs to its end right after its plan's change is written
    create_org("acme")
    if not counted:
        _forget_the_count(table, "acme")
    name = "resize" if counted else "set_uncounted"
    write = getattr(seats, name)

    def deleted_right_after(*args, **kwargs):
        write(*args, **kwargs)
        assert cascade.delete_org("acme") is True

    monkeypatch.setattr(seats, name, deleted_right_after)

    # When its plan changes, the answer is that the org is gone
    reply = call("PATCH", "/orgs/acme", {"plan": "pro"})

    assert (reply.status, reply.error_code) == (404, "not_found"), reply.body


def test_a_stale_if_match_on_a_plan_change_of_an_org_not_counted_yet_is_412_and_changes_nothing(table):
    create_org("acme")
    _forget_the_count(table, "acme")

    reply = call("PATCH", "/orgs/acme", {"plan": "pro"}, headers={"If-Match": '"7"'})

    assert (reply.status, reply.error_code) == (412, "precondition_failed"), reply.body
    assert call("GET", "/orgs/acme").body["plan"] == "free"


def _counted_meanwhile(table, monkeypatch, org_id: str, count: int) -> None:
    """The user-count migration writes ``count`` on the org item after the plan change found no
    count there, before the plan change's own write."""
    set_uncounted = seats.set_uncounted

    def counted_meanwhile(*args, **kwargs):
        config.dynamodb().update_item(
            TableName=table,
            Key={"PK": {"S": f"ORG#{org_id}"}, "SK": {"S": f"METADATA#{org_id}"}},
            UpdateExpression="SET user_count = :n",
            ExpressionAttributeValues={":n": {"N": str(count)}},
        )
        return set_uncounted(*args, **kwargs)

    monkeypatch.setattr(seats, "set_uncounted", counted_meanwhile)


def test_a_downgrade_of_an_org_counted_between_its_read_and_its_write_past_the_new_limit_is_409(table, monkeypatch):
    # Given acme on pro with 6 users, not counted yet, and the user-count migration writing its count
    # (6) on the org item after the plan change found no count, before its write
    create_org("acme", plan="pro")
    for i in range(6):
        create_user("acme", f"user-{i}")
    _forget_the_count(table, "acme")
    version = call("GET", "/orgs/acme").body["version"]
    _counted_meanwhile(table, monkeypatch, "acme", 6)

    # When an operator moves it to free (5 seats), with the If-Match of the version it read
    reply = call("PATCH", "/orgs/acme", {"plan": "free"}, headers={"If-Match": f'"{version}"'})

    # Then the If-Match holds, the 6 users do not fit: 409 quota_exceeded, and the plan stays pro
    assert (reply.status, reply.error_code) == (409, "quota_exceeded"), reply.body
    assert reply.body["error"]["details"] == {"quota": "users", "limit": 5, "used": 6, "plan": "free"}
    assert call("GET", "/orgs/acme").body["plan"] == "pro"


def test_a_downgrade_of_an_org_counted_between_its_read_and_its_write_to_exactly_its_users_applies(table, monkeypatch):
    # Given acme on pro with 5 users, not counted yet, and the user-count migration writing its count
    # (5) on the org item after the plan change found no count, before its write
    create_org("acme", plan="pro")
    for i in range(5):
        create_user("acme", f"user-{i}")
    _forget_the_count(table, "acme")
    _counted_meanwhile(table, monkeypatch, "acme", 5)

    # When an operator moves it to free (5 seats)
    reply = call("PATCH", "/orgs/acme", {"plan": "free"})

    # Then the 5 users fit the 5 seats exactly, as they do on a counted org: the plan is free
    assert reply.status == 200, reply.body
    assert call("GET", "/orgs/acme").body["plan"] == "free"
