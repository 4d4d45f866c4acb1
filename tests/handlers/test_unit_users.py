"""Users belong to a unit (issue 27): created in one, moved between them, listed by subtree."""

import pytest

from tests.api import admin, call, create_org, create_user, member
from tests.handlers.test_org_units import create_unit, ids


@pytest.fixture
def acme(table):
    """eng (platform, web) and ops; ann in the root, bea in eng, cid in platform, dee in web, eve in ops."""
    create_org("acme", plan="pro")
    for unit_id, parent_id in [("eng", None), ("platform", "eng"), ("web", "eng"), ("ops", None)]:
        create_unit(unit_id, parent_id)
    for user_id, unit in [("ann", None), ("bea", "eng"), ("cid", "platform"), ("dee", "web"), ("eve", "ops")]:
        assert create_user("acme", user_id, **({"unit": unit} if unit else {})).status == 201


def test_a_user_is_in_the_root_unless_created_in_a_unit(acme):
    assert call("GET", "/orgs/acme/users/ann").body["unit"] == "root"
    assert call("GET", "/orgs/acme/users/cid").body["unit"] == "platform"


def test_a_unit_lists_its_users_and_those_below_it_in_one_query(acme, dynamodb_calls):
    dynamodb_calls.clear()

    reply = call("GET", "/orgs/acme/units/eng/users", caller=member("acme", "eve"))

    assert sorted(ids(reply)) == ["bea", "cid", "dee"]
    assert dynamodb_calls == ["BatchGetItem", "Query"]


def test_direct_lists_the_units_own_users(acme):
    assert ids(call("GET", "/orgs/acme/units/eng/users", query={"direct": "true"})) == ["bea"]
    assert ids(call("GET", "/orgs/acme/units/root/users", query={"direct": "true"})) == ["ann"]


def test_the_root_lists_everyone(acme):
    assert sorted(ids(call("GET", "/orgs/acme/units/root/users"))) == ["ann", "bea", "cid", "dee", "eve"]


def test_pages_read_what_they_return(acme, dynamodb_calls):
    seen = []
    cursor = None
    while True:
        dynamodb_calls.clear()
        query = {"limit": "2", **({"cursor": cursor} if cursor else {})}
        reply = call("GET", "/orgs/acme/units/eng/users", query=query)
        seen += ids(reply)
        assert dynamodb_calls == ["BatchGetItem", "Query"]
        cursor = reply.body["next_cursor"]
        if cursor is None:
            break

    assert sorted(seen) == ["bea", "cid", "dee"]


def test_a_user_in_a_missing_unit_is_404_and_takes_no_seat(acme):
    before = call("GET", "/orgs/acme").body["usage"]["users"]

    reply = create_user("acme", "zed", unit="nope")

    assert reply.status == 404
    assert call("GET", "/orgs/acme/users/zed").status == 404
    assert call("GET", "/orgs/acme").body["usage"]["users"] == before


def test_an_admin_moves_a_user(acme):
    reply = call("PATCH", "/orgs/acme/users/dee", {"unit": "ops"}, caller=admin("acme", "ann"))

    assert reply.status == 200, reply.body
    assert reply.body["unit"] == "ops"
    assert sorted(ids(call("GET", "/orgs/acme/units/ops/users"))) == ["dee", "eve"]
    assert sorted(ids(call("GET", "/orgs/acme/units/eng/users"))) == ["bea", "cid"]


def test_a_user_moves_back_to_the_root(acme):
    assert call("PATCH", "/orgs/acme/users/cid", {"unit": "root"}).status == 200

    assert ids(call("GET", "/orgs/acme/units/root/users", query={"direct": "true"})) == ["ann", "cid"]


def test_a_member_cannot_move_themselves(acme):
    reply = call("PATCH", "/orgs/acme/users/dee", {"unit": "ops"}, caller=member("acme", "dee"))

    assert reply.status == 403
    assert call("GET", "/orgs/acme/users/dee").body["unit"] == "web"


def test_a_move_to_a_missing_unit_changes_nothing(acme):
    reply = call("PATCH", "/orgs/acme/users/dee", {"unit": "nope"})

    assert reply.status == 404
    assert call("GET", "/orgs/acme/users/dee").body["unit"] == "web"
    assert ids(call("GET", "/orgs/acme/units/web/users")) == ["dee"]


def test_a_user_of_another_org_is_not_listed(acme):
    create_org("bolt")
    create_unit("eng", org_id="bolt")
    create_user("bolt", "bob", unit="eng")

    assert "bob" not in ids(call("GET", "/orgs/acme/units/eng/users"))
    assert ids(call("GET", "/orgs/bolt/units/eng/users")) == ["bob"]


def test_a_move_with_a_stale_if_match_changes_nothing(acme):
    call("PATCH", "/orgs/acme/users/dee", {"name": "Dee 2"})

    reply = call("PATCH", "/orgs/acme/users/dee", {"unit": "ops"}, headers={"If-Match": '"1"'})

    assert reply.status == 412
    assert call("GET", "/orgs/acme/users/dee").body["unit"] == "web"


def test_a_move_goes_alone_without_a_role_or_email_change(acme):
    before = call("GET", "/orgs/acme/users/dee").body
    assert (before["unit"], before["role"], before["email"]) == ("web", "member", "dee@example.com")

    for other in ({"role": "admin"}, {"email": "dee.new@example.com"}):
        reply = call("PATCH", "/orgs/acme/users/dee", {"unit": "ops", **other})

        assert reply.status == 422, reply.body
        assert "in a change of its own" in str(reply.body["error"]["details"])
    assert call("GET", "/orgs/acme/users/dee").body == before  # neither the move, the role nor the e-mail


def test_a_move_and_a_rename_go_together(acme):
    reply = call("PATCH", "/orgs/acme/users/dee", {"unit": "ops", "name": "Dee Ops"}, headers={"If-Match": '"1"'})

    assert reply.status == 200, reply.body
    assert (reply.body["unit"], reply.body["name"], reply.body["version"]) == ("ops", "Dee Ops", 2)


def test_a_move_of_a_user_deleted_right_after_it_is_404_not_a_500(acme, monkeypatch):
    from controlplane.dal import transactions

    # Given bea, deleted right after her move into ops is written
    update_with_check, deleted = transactions.update_with_check, []

    def deleted_right_after(*args, **kwargs):
        update_with_check(*args, **kwargs)
        deleted.append(call("DELETE", "/orgs/acme/users/bea").status)

    monkeypatch.setattr(transactions, "update_with_check", deleted_right_after)

    # When the move answers, it says she is gone
    reply = call("PATCH", "/orgs/acme/users/bea", {"unit": "ops"})

    assert deleted == [204]
    assert (reply.status, reply.error_code) == (404, "not_found"), reply.body


def test_a_user_moved_into_a_unit_that_moves_between_its_read_and_the_write_is_409_and_stays_put(acme, monkeypatch):
    from controlplane.dal import transactions

    # Given ops, moved under eng after bea's move read its path and before her move is written
    update_with_check, moved = transactions.update_with_check, []

    def unit_moved_first(*args, **kwargs):
        if not moved:
            moved.append(call("PATCH", "/orgs/acme/units/ops", {"parent_id": "eng"}).status)
        return update_with_check(*args, **kwargs)

    monkeypatch.setattr(transactions, "update_with_check", unit_moved_first)

    # When bea's move is written, it is refused as a move under way (to retry), not as bea missing
    reply = call("PATCH", "/orgs/acme/users/bea", {"unit": "ops"})

    assert moved == [200]
    assert (reply.status, reply.error_code) == (409, "move_in_progress"), reply.body
    assert call("GET", "/orgs/acme/users/bea").body["unit"] == "eng"


@pytest.mark.parametrize(
    ("taken", "used"),
    [
        ("/orgs/acme/units/eng/users?direct=false", "/orgs/acme/units/eng/users?direct=true"),
        ("/orgs/acme/units/eng/users?direct=true", "/orgs/acme/units/eng/users?direct=false"),
        ("/orgs/acme/units/eng/users?direct=false", "/orgs/bolt/units/eng/users?direct=false"),
        ("/orgs/acme/units?under=eng", "/orgs/bolt/units?under=eng"),
        ("/orgs/acme/units?under=root", "/orgs/acme/units/root/users?direct=false"),
        ("/orgs/acme/users?limit=1", "/orgs/acme/units/root/users?direct=false"),
    ],
    ids=[
        "all-to-direct",
        "direct-to-all",
        "unit-users-to-another-org",
        "units-to-another-org",
        "units-to-users",
        "org-users-to-unit-users",
    ],
)
def test_a_tree_listings_cursor_continues_no_other_listing(acme, dynamodb_calls, taken, used):
    # Given bolt, with units and users of the same ids as acme's
    create_org("bolt", plan="pro")
    create_unit("eng", org_id="bolt")
    for user_id in ("bea", "bob"):
        create_user("bolt", user_id, unit="eng")
    create_user("acme", "bob", unit="eng")
    path, _, query = taken.partition("?")
    cursor = call("GET", path, query=dict([query.split("=")]) | {"limit": "1"}).body["next_cursor"]
    assert cursor
    dynamodb_calls.clear()

    # When it is sent on another listing: another `direct`, another org, another kind of list
    path, _, query = used.partition("?")
    reply = call("GET", path, query=dict([query.split("=")]) | {"cursor": cursor})

    # Then it is refused before any read, as a cursor that was altered
    assert (reply.status, reply.error_code) == (400, "invalid_cursor"), reply.body
    assert dynamodb_calls == []
