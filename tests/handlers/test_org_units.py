"""Org units (issue 27): the tree's routes, end to end on moto and DynamoDB Local."""

import pytest

from controlplane import config
from controlplane.dal import keys
from tests.api import OPERATOR, admin, call, create_org, create_user, member


def create_unit(unit_id: str, parent_id: str | None = None, org_id: str = "acme", caller: dict = OPERATOR):
    body = {"unit_id": unit_id, "name": unit_id.title(), **({"parent_id": parent_id} if parent_id else {})}
    return call("POST", f"/orgs/{org_id}/units", body, caller=caller)


def ids(reply) -> list[str]:
    assert reply.status == 200, reply.body
    return [item.get("unit_id") or item.get("user_id") for item in reply.body["items"]]


@pytest.fixture
def acme(table):
    """acme's tree: eng (platform (db), web), eng-x, ops; admin root, member alice."""
    create_org("acme")
    create_user("acme", "root", role="admin")
    create_user("acme", "alice")
    for unit_id, parent_id in [("eng", None), ("platform", "eng"), ("db", "platform"), ("web", "eng"), ("eng-x", None)]:
        assert create_unit(unit_id, parent_id).status == 201
    assert create_unit("ops").status == 201


def test_a_created_unit_has_its_path_and_a_location(table):
    create_org("acme")
    create_unit("eng")

    reply = create_unit("platform", "eng", caller=admin())

    assert reply.status == 201, reply.body
    assert reply.headers["Location"].endswith("/orgs/acme/units/platform")
    assert reply.body | {"path": "/eng/platform", "depth": 2, "parent_id": "eng"} == reply.body
    assert call("GET", "/orgs/acme/units/platform").body["path"] == "/eng/platform"


def test_the_tree_lists_depth_first_in_pages(acme):
    first = call("GET", "/orgs/acme/units", query={"limit": "4"})
    rest = call("GET", "/orgs/acme/units", query={"limit": "4", "cursor": first.body["next_cursor"]})

    assert ids(first) + ids(rest) == ["eng", "platform", "db", "web", "eng-x", "ops"]
    assert rest.body["next_cursor"] is None


def test_a_subtree_lists_the_unit_and_everything_below_it_and_nothing_beside_it(acme, dynamodb_calls):
    dynamodb_calls.clear()

    reply = call("GET", "/orgs/acme/units", query={"under": "eng"}, caller=member())

    assert ids(reply) == ["eng", "platform", "db", "web"]
    assert dynamodb_calls == ["BatchGetItem", "Query"]


def test_a_cursor_does_not_continue_another_subtree(acme):
    first = call("GET", "/orgs/acme/units", query={"under": "eng", "limit": "1"})

    reply = call("GET", "/orgs/acme/units", query={"under": "ops", "cursor": first.body["next_cursor"]})

    assert reply.status == 400
    assert reply.error_code == "invalid_cursor"


def test_the_root_is_the_orgs_and_cannot_be_changed(acme):
    assert (
        call("GET", "/orgs/acme/units/root").body | {"path": "/", "depth": 0, "name": "Acme"}
        == call("GET", "/orgs/acme/units/root").body
    )
    assert call("DELETE", "/orgs/acme/units/root").status == 409
    assert call("PATCH", "/orgs/acme/units/root", {"parent_id": "eng"}).status == 409
    renamed = call("PATCH", "/orgs/acme/units/root", {"name": "Other"})
    assert (renamed.status, renamed.error_code) == (409, "conflict"), renamed.body
    assert call("GET", "/orgs/acme/units/root").body["name"] == "Acme"  # the org's name, still
    assert create_unit("root").status == 422


@pytest.mark.parametrize(
    ("method", "body"), [("DELETE", None), ("PATCH", {"name": "Other"}), ("PATCH", {"parent_id": "eng"})]
)
def test_the_root_of_a_missing_org_is_404_not_its_refusal(acme, method, body):
    # Given no org nope (its root is made from the org, so it has none either)
    # When the root of nope is changed
    reply = call(method, "/orgs/nope/units/root", body)

    # Then the answer is the one any unit of a missing org gets, not "the root cannot ..."
    assert (reply.status, reply.error_code) == (404, "not_found"), reply.body


@pytest.mark.parametrize(
    ("path", "status"),
    [("/orgs/acme/units/nope", 404), ("/orgs/nope/units/eng", 404), ("/orgs/acme/units/Bad_Id", 422)],
)
def test_a_missing_or_malformed_unit_is_refused(acme, path, status):
    assert call("GET", path).status == status


def test_a_unit_under_a_missing_parent_is_404_and_writes_nothing(acme):
    reply = create_unit("x", "nope")

    assert reply.status == 404
    assert call("GET", "/orgs/acme/units/x").status == 404


def test_a_unit_id_taken_is_409(acme):
    reply = create_unit("web", "ops")

    assert reply.status == 409
    assert reply.error_code == "already_exists"
    assert call("GET", "/orgs/acme/units/web").body["path"] == "/eng/web"


def test_depth_stops_at_10(table):
    create_org("acme")
    parent = None
    for depth in range(1, 11):
        assert create_unit(f"u{depth}", parent).status == 201
        parent = f"u{depth}"

    reply = create_unit("u11", parent)

    assert reply.status == 409
    assert reply.error_code == "limit_exceeded"
    assert call("GET", "/orgs/acme/units/u10").body["depth"] == 10


def test_an_org_has_at_most_1000_units(table, monkeypatch):
    from controlplane.logic import units

    monkeypatch.setattr(units, "MAX_UNITS", 2)
    create_org("acme")
    create_unit("a")
    create_unit("b")

    reply = create_unit("c")

    assert reply.status == 409
    assert reply.error_code == "limit_exceeded"
    assert "2 units" in reply.body["error"]["message"]
    assert call("GET", "/orgs/acme/units/c").status == 404


def test_rename_keeps_the_place(acme):
    reply = call("PATCH", "/orgs/acme/units/platform", {"name": "Platform team"}, caller=admin())

    assert reply.status == 200, reply.body
    assert (reply.body["name"], reply.body["path"], reply.body["version"]) == ("Platform team", "/eng/platform", 2)


def test_members_read_but_do_not_write_units(acme):
    assert call("GET", "/orgs/acme/units/eng", caller=member()).status == 200
    assert create_unit("x", caller=member()).status == 403
    assert call("PATCH", "/orgs/acme/units/eng", {"name": "X"}, caller=member()).status == 403
    assert call("DELETE", "/orgs/acme/units/ops", caller=member()).status == 403


def test_another_orgs_admin_sees_nothing(acme):
    create_org("bolt")

    assert call("GET", "/orgs/acme/units", caller=admin("bolt", "bob")).status == 403
    assert call("GET", "/orgs/bolt/units").body["items"] == []


def test_delete_removes_an_empty_unit(acme):
    assert call("DELETE", "/orgs/acme/units/db", caller=admin()).status == 204

    assert call("GET", "/orgs/acme/units/db").status == 404
    assert create_unit("db", "web").status == 201  # its id is free again


def test_a_unit_with_children_is_not_deleted(acme):
    reply = call("DELETE", "/orgs/acme/units/platform")

    assert reply.status == 409
    assert call("GET", "/orgs/acme/units/platform").body["version"] == 1
    assert create_unit("cache", "platform").status == 201  # the refused delete left no mark


def test_a_unit_with_users_is_not_deleted(acme):
    create_user("acme", "dora", unit="ops")

    reply = call("DELETE", "/orgs/acme/units/ops")

    assert reply.status == 409
    assert "users" in reply.body["error"]["message"]
    assert call("GET", "/orgs/acme/units/ops").status == 200


def test_a_stale_if_match_deletes_nothing(acme):
    call("PATCH", "/orgs/acme/units/ops", {"name": "Operations"})

    reply = call("DELETE", "/orgs/acme/units/ops", headers={"If-Match": '"1"'})

    assert reply.status == 412
    assert call("GET", "/orgs/acme/units/ops").status == 200


def test_an_org_delete_removes_its_units(acme, table):
    assert call("DELETE", "/orgs/acme").status == 204

    left = config.dynamodb().scan(TableName=table)["Items"]  # every item left in the table
    assert [item for item in left if "acme" in item["PK"]["S"]] == []


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/orgs/acme/units", {"under": "en#g"}),
        ("/orgs/acme/units", {"under": "ENG"}),
        ("/orgs/acme/units/eng/users", {"direct": "maybe"}),
        ("/orgs/acme/units/eng/users", {"direct": "yes"}),
        ("/orgs/acme/units/eng/users", {"direct": "1"}),
        ("/orgs/acme/units/eng/users", {"direct": "True"}),
        ("/orgs/acme/units", {"limit": "10.0"}),
        ("/orgs/acme/units/eng%23x/users", {}),
    ],
)
def test_a_malformed_unit_id_or_option_is_422_before_any_dynamodb_request(acme, dynamodb_calls, path, query):
    dynamodb_calls.clear()

    reply = call("GET", path, query=query)

    assert reply.status == 422, reply.body
    assert dynamodb_calls == []


@pytest.mark.parametrize("body", [{"unit_id": "a#b", "name": "X"}, {"unit_id": "x", "name": "X", "parent_id": "a#b"}])
def test_a_malformed_id_in_a_body_is_422_and_writes_nothing(acme, dynamodb_calls, body):
    dynamodb_calls.clear()

    reply = call("POST", "/orgs/acme/units", body)

    assert reply.status == 422
    assert dynamodb_calls == []


def test_a_cursor_over_a_unit_deleted_and_created_again_elsewhere_starts_again(acme):
    # Given a listing of web's subtree begun at /eng/web
    create_unit("leaf", "web")
    first = call("GET", "/orgs/acme/units", query={"under": "web", "limit": "1"})
    # When web is deleted and a new web is created under ops (no move: the move count is unchanged)
    assert call("DELETE", "/orgs/acme/units/leaf").status == 204
    assert call("DELETE", "/orgs/acme/units/web").status == 204
    assert create_unit("web", "ops").status == 201
    create_unit("zz", "web")

    reply = call("GET", "/orgs/acme/units", query={"under": "web", "cursor": first.body["next_cursor"]})

    # Then the old position (/eng/web) is not a start key of the new subtree (DynamoDB Local: a 500)
    assert (reply.status, reply.error_code) == (409, "conflict")
    assert reply.body["error"]["message"].startswith("Unit web was deleted and created again since this listing began")


def test_a_users_cursor_over_a_unit_deleted_and_created_again_elsewhere_starts_again(acme):
    create_user("acme", "dee", unit="web")
    create_user("acme", "dex", unit="web")
    first = call("GET", "/orgs/acme/units/web/users", query={"limit": "1"})
    for user_id in ("dee", "dex"):
        assert call("PATCH", f"/orgs/acme/users/{user_id}", {"unit": "root"}).status == 200
    assert call("DELETE", "/orgs/acme/units/web").status == 204
    assert create_unit("web", "ops").status == 201
    for user_id in ("dee", "dex"):
        assert call("PATCH", f"/orgs/acme/users/{user_id}", {"unit": "web"}).status == 200

    reply = call("GET", "/orgs/acme/units/web/users", query={"cursor": first.body["next_cursor"]})

    assert (reply.status, reply.error_code) == (409, "conflict")
    assert reply.body["error"]["message"].startswith("Unit web was deleted and created again since this listing began")


@pytest.mark.parametrize(
    ("path", "query"), [("/orgs/acme/units", {"under": "web"}), ("/orgs/acme/units/web/users", {})]
)
def test_a_cursor_position_outside_the_subtree_never_reaches_dynamodb(acme, dynamodb_calls, path, query):
    from controlplane.logic import tree_reads

    # Given a cursor of this listing (as signed by us) whose position is not under /eng/web
    unit = call("GET", "/orgs/acme/units/web").body
    scope = keys.units_scope("acme", "web") if "under" in query else keys.unit_users_scope("acme", "web", False)
    position = ["/ops"] if "under" in query else ["/ops", "alice"]
    token = tree_reads._cursor(scope, 0, unit["created_at"], position)
    dynamodb_calls.clear()

    reply = call("GET", path, query={**query, "cursor": token})

    assert (reply.status, reply.error_code) == (409, "conflict")
    assert dynamodb_calls == ["BatchGetItem"]


def test_a_delete_whose_if_match_loses_to_a_rename_is_412(acme, monkeypatch):
    from controlplane.dal.table import Table

    query = Table.query

    def renamed_meanwhile(self, *args, **options):
        monkeypatch.setattr(Table, "query", query)
        assert call("PATCH", "/orgs/acme/units/ops", {"name": "Operations"}).status == 200
        return query(self, *args, **options)

    monkeypatch.setattr(Table, "query", renamed_meanwhile)  # after the delete checked the version

    reply = call("DELETE", "/orgs/acme/units/ops", headers={"If-Match": '"1"'})

    assert (reply.status, reply.error_code) == (412, "precondition_failed")
    assert call("GET", "/orgs/acme/units/ops").body["name"] == "Operations"


@pytest.fixture
def lagging_indexes(monkeypatch):
    """GSI1 and GSI2 that show a unit or a user only 0.2 s after it was put (``shown_late``), and a
    settle time of 0.5 s: what a delete must wait out before it believes the indexes."""
    import time

    from controlplane import config
    from controlplane.dal.schema import GSI1_NAME, GSI2_NAME
    from controlplane.dal.table import Table

    monkeypatch.setenv("GSI1_SETTLE_SECONDS", "0.5")
    config.reset()
    put_at: dict[str, float] = {}
    query = Table.query

    def lagging(self, partition, **options):
        items, last = query(self, partition, **options)
        if options.get("index") in (GSI1_NAME, GSI2_NAME):
            items = [i for i in items if time.time() >= put_at.get(i.get("unit_id") or i["user_id"], 0) + 0.2]
        return items, last

    monkeypatch.setattr(Table, "query", lagging)
    yield lambda entry: put_at.__setitem__(entry, time.time())
    config.reset()


def test_a_user_created_in_a_unit_deleted_after_it_was_read_is_404_and_takes_no_seat(acme, monkeypatch):
    # Given ops, deleted (empty, so the delete goes through) right after a user's create read it
    from controlplane.logic import units as units_logic

    placement = units_logic.placement

    def deleted_after_the_read(org_id, unit_id):
        found = placement(org_id, unit_id)
        assert call("DELETE", "/orgs/acme/units/ops").status == 204
        return found

    monkeypatch.setattr(units_logic, "placement", deleted_after_the_read)

    # When eve is created in ops
    reply = create_user("acme", "eve", unit="ops")

    # Then the unit is gone, so it is a 404, and nothing of eve was written: no user, no seat taken
    assert (reply.status, reply.error_code) == (404, "not_found"), reply.body
    monkeypatch.undo()
    assert call("GET", "/orgs/acme/users/eve").status == 404
    assert call("GET", "/orgs/acme").body["usage"]["users"] == 2


def test_a_user_placed_a_moment_before_their_units_delete_keeps_it(acme, lagging_indexes):
    assert create_user("acme", "dora", unit="ops").status == 201
    lagging_indexes("dora")  # not in GSI2 yet when the delete looks at once

    reply = call("DELETE", "/orgs/acme/units/ops")

    assert (reply.status, reply.error_code) == (409, "conflict"), reply.body
    assert "users" in reply.body["error"]["message"]
    assert call("GET", "/orgs/acme/units/ops/users").body["items"][0]["user_id"] == "dora"


@pytest.mark.parametrize("emptied_by", ["user moved out", "user deleted", "child deleted"])
def test_a_unit_emptied_a_moment_before_its_delete_is_deleted_though_the_indexes_still_show_it_full(
    acme, monkeypatch, emptied_by
):
    # Given ops, emptied a moment ago, and indexes that still show what left it for 0.2 s (GSIs
    # lag a removal as they lag a placement), with a settle time of 0.5 s
    import time

    from controlplane.dal import tree
    from controlplane.dal.schema import GSI1_NAME, GSI2_NAME
    from controlplane.dal.table import Table, api_table

    monkeypatch.setenv("GSI1_SETTLE_SECONDS", "0.5")
    config.reset()
    if emptied_by == "child deleted":
        assert create_unit("ops-eu", "ops").status == 201
        left, index = api_table().get(keys.unit_key("acme", "ops-eu"), consistent=True), GSI1_NAME
        assert call("DELETE", "/orgs/acme/units/ops-eu").status == 204
    else:
        assert create_user("acme", "dora", unit="ops").status == 201
        left, index = api_table().get(keys.user_key("acme", "dora"), consistent=True), GSI2_NAME
        if emptied_by == "user moved out":
            assert call("PATCH", "/orgs/acme/users/dora", {"unit": "eng"}).status == 200
        else:
            assert call("DELETE", "/orgs/acme/users/dora").status == 204
    # ... and whose last placement is older than any request (else the delete waits out the settle
    # time for it, and the removal's lag with it): a unit emptied of what it held a while
    table = api_table()
    table.client.update_item(
        TableName=table.name,
        Key={name: {"S": value} for name, value in keys.unit_key("acme", "ops").items()},
        UpdateExpression="SET #placed = :long_ago",
        ExpressionAttributeNames={"#placed": tree.LAST_PLACED},
        ExpressionAttributeValues={":long_ago": {"N": str(time.time() - 2 * tree.REQUEST_LIFETIME)}},
    )
    removed_at, query = time.time(), Table.query

    def lagging(self, partition, **options):
        items, last = query(self, partition, **options)
        if options.get("index") == index and time.time() < removed_at + 0.2:
            items = [left, *items] if options.get("limit", 2) > len(items) else items
        return items, last

    monkeypatch.setattr(Table, "query", lagging)

    # When ops is deleted
    reply = call("DELETE", "/orgs/acme/units/ops")

    # Then it goes: what the index showed is no longer under ops in the table, so the delete waits
    # for the index to settle and looks again, rather than answer "still has users" of an empty unit
    assert reply.status == 204, reply.body
    config.reset()


def test_a_unit_created_a_moment_before_its_parents_delete_keeps_it(acme, lagging_indexes):
    assert create_unit("oncall", "ops").status == 201
    lagging_indexes("oncall")

    reply = call("DELETE", "/orgs/acme/units/ops")

    assert (reply.status, reply.error_code) == (409, "conflict"), reply.body
    assert call("GET", "/orgs/acme/units/oncall").body["path"] == "/ops/oncall"


def test_a_unit_moved_a_moment_before_its_new_parents_delete_keeps_it(acme, lagging_indexes):
    assert call("PATCH", "/orgs/acme/units/web", {"parent_id": "ops"}).status == 200
    lagging_indexes("web")  # its entry at its new path

    reply = call("DELETE", "/orgs/acme/units/ops")

    assert (reply.status, reply.error_code) == (409, "conflict"), reply.body
    assert call("GET", "/orgs/acme/units/web").body["path"] == "/ops/web"


def test_a_delete_waits_only_when_something_was_put_under_its_unit_lately(acme, lagging_indexes, monkeypatch):
    from controlplane.logic import units

    slept: list[float] = []
    monkeypatch.setattr(units.time, "sleep", slept.append)
    assert create_unit("empty").status == 201  # under the root: nothing was ever put under it

    assert call("DELETE", "/orgs/acme/units/empty").status == 204
    create_user("acme", "dora", unit="ops")
    call("PATCH", "/orgs/acme/users/dora", {"unit": "eng"})
    assert call("DELETE", "/orgs/acme/units/ops").status == 204  # dora left it: nothing under it now

    assert slept[0] == 0 and 0 < slept[1] <= 0.5, slept  # the rest of the settle time since dora came


def _while_the_delete_waits(monkeypatch, act) -> None:
    """Run ``act`` once, where the delete waits for the indexes (the first wait of the request; the
    waits after it, ``act``'s own included, really wait)."""
    import time

    sleep, acted = time.sleep, []

    def wait(seconds):
        if seconds > 0 and not acted:
            acted.append(True)
            act()
        sleep(seconds)

    monkeypatch.setattr(time, "sleep", wait)


def test_a_second_delete_of_a_unit_waits_its_turn_and_never_unmarks_the_first(acme, lagging_indexes, monkeypatch):
    # Given dora was in ops a moment ago (so a delete of ops waits for the indexes)
    create_user("acme", "dora", unit="ops")
    assert call("PATCH", "/orgs/acme/users/dora", {"unit": "eng"}).status == 200
    meanwhile = []

    def others_act():
        meanwhile.append(call("DELETE", "/orgs/acme/units/ops"))  # a retry, say
        meanwhile.append(create_user("acme", "eve", unit="ops"))

    _while_the_delete_waits(monkeypatch, others_act)

    # When ops is deleted, and meanwhile it is deleted again and someone is created in it
    reply = call("DELETE", "/orgs/acme/units/ops")

    # Then the second delete is 409 and left the first's mark, so eve was refused (the unit's fate was
    # not known yet: retry shortly): no one is left in the deleted unit
    assert [(r.status, r.error_code) for r in meanwhile] == [(409, "conflict"), (409, "conflict")]
    assert "under way" in meanwhile[0].body["error"]["message"]
    assert reply.status == 204, reply.body
    assert call("GET", "/orgs/acme/users/eve").status == 404


@pytest.mark.parametrize("placed", ["user_created", "user_moved", "unit_created"])
def test_what_is_placed_in_a_unit_while_its_refused_delete_waits_is_told_to_retry_not_that_it_is_gone(
    acme, lagging_indexes, monkeypatch, placed
):
    # Given ops holds dora, placed a moment ago (so a delete of ops waits for the indexes, and is refused)
    assert create_user("acme", "dora", unit="ops").status == 201
    place = {
        "user_created": lambda: create_user("acme", "eve", unit="ops"),
        "user_moved": lambda: call("PATCH", "/orgs/acme/users/alice", {"unit": "ops"}),
        "unit_created": lambda: create_unit("cache", "ops"),
    }[placed]
    meanwhile = []
    _while_the_delete_waits(monkeypatch, lambda: meanwhile.append(place()))

    # When ops is deleted, and something is placed in it while the delete waits
    reply = call("DELETE", "/orgs/acme/units/ops")

    # Then the delete is refused and ops stays; the placement was 409 conflict (retry shortly), not a
    # 404 for a unit that exists, and done again it goes in
    assert (reply.status, reply.error_code) == (409, "conflict")
    assert call("GET", "/orgs/acme/units/ops").status == 200
    assert (meanwhile[0].status, meanwhile[0].error_code) == (409, "conflict"), meanwhile[0].body
    assert "retry shortly" in meanwhile[0].body["error"]["message"]
    monkeypatch.undo()
    assert place().status in (200, 201)


def test_a_unit_whose_ancestor_moved_while_its_delete_waited_is_not_deleted(acme, lagging_indexes, monkeypatch):
    # Given platform (with db under it) had dora a moment ago
    create_user("acme", "dora", unit="platform")
    assert call("PATCH", "/orgs/acme/users/dora", {"unit": "eng"}).status == 200
    moved = []
    _while_the_delete_waits(
        monkeypatch, lambda: moved.append(call("PATCH", "/orgs/acme/units/eng", {"parent_id": "ops"}).status)
    )

    # When eng moves under ops while platform's delete waits, so that its look at its old path finds nothing
    reply = call("DELETE", "/orgs/acme/units/platform")

    # Then the delete is refused (retry), and platform and db are where the move put them
    assert moved == [200]
    assert (reply.status, reply.error_code) == (409, "move_in_progress"), reply.body
    assert call("GET", "/orgs/acme/units/db").body["path"] == "/ops/eng/platform/db"
    assert create_unit("cache", "platform").status == 201  # the refused delete took its mark back


def test_a_delete_that_fails_after_its_mark_takes_the_mark_back(acme, monkeypatch):
    from botocore.exceptions import EndpointConnectionError

    from controlplane.dal.table import Table

    # Given DynamoDB cannot be reached once the delete has marked ops
    def unreachable(self, partition, **options):
        raise EndpointConnectionError(endpoint_url="https://dynamodb.us-east-1.amazonaws.com")

    with monkeypatch.context() as outage:
        outage.setattr(Table, "query", unreachable)
        # When ops is deleted
        reply = call("DELETE", "/orgs/acme/units/ops")

    # Then the delete is 503, and ops takes users and deletes as before: no mark was left behind
    assert (reply.status, reply.error_code) == (503, "service_unavailable"), reply.body
    assert create_user("acme", "dora", unit="ops").status == 201
    assert call("PATCH", "/orgs/acme/users/dora", {"unit": "eng"}).status == 200
    assert call("DELETE", "/orgs/acme/units/ops").status == 204


def test_a_mark_left_by_a_dead_delete_counts_for_nothing_once_it_is_older_than_any_request(acme):
    import time

    from controlplane.dal import tree
    from controlplane.dal.table import api_table

    # Given a delete that marked ops a moment ago, and one that marked web and died (its function timed out)
    tree.mark_deleting(api_table(), keys.unit_key("acme", "ops"), "live", time.time(), None)
    long_ago = time.time() - tree.REQUEST_LIFETIME - 1
    tree.mark_deleting(api_table(), keys.unit_key("acme", "web"), "dead", long_ago, None)

    # Then ops takes no one and no second delete, while web takes both: the second delete takes the
    # dead one's mark over, finds erin, and takes its own mark back
    assert create_user("acme", "dora", unit="ops").status == 409  # retry shortly: the delete may be refused
    assert (
        call("DELETE", "/orgs/acme/units/ops").body["error"]["message"]
        == "A delete of unit ops is under way; retry shortly"
    )
    assert create_user("acme", "erin", unit="web").status == 201
    reply = call("DELETE", "/orgs/acme/units/web")
    assert (reply.status, reply.error_code) == (409, "conflict") and "users" in reply.body["error"]["message"]
    assert call("PATCH", "/orgs/acme/users/erin", {"unit": "eng"}).status == 200
    assert call("DELETE", "/orgs/acme/units/web").status == 204


def test_a_placement_that_committed_long_after_its_stamp_keeps_its_unit(acme, lagging_indexes):
    import time
    from decimal import Decimal

    from controlplane.dal.codec import to_dynamo
    from controlplane.dal.table import api_table

    # Given dora's create was stamped a second before it committed (its transaction was retried), and
    # GSI2 does not show her yet
    assert create_user("acme", "dora", unit="ops").status == 201
    table = api_table()
    table.client.update_item(
        TableName=table.name,
        Key=to_dynamo(keys.unit_key("acme", "ops")),
        UpdateExpression="SET last_placed = :at",
        ExpressionAttributeValues=to_dynamo({":at": Decimal(str(time.time() - 1))}),
    )
    lagging_indexes("dora")

    # When ops is deleted at once
    reply = call("DELETE", "/orgs/acme/units/ops")

    # Then the delete waited for the indexes from its mark, not from the stamp, and found her
    assert (reply.status, reply.error_code) == (409, "conflict"), reply.body
    assert call("GET", "/orgs/acme/users/dora").body["unit"] == "ops"


def test_a_unit_delete_an_org_delete_overtakes_leaves_nothing_of_the_org(acme, table, lagging_indexes, monkeypatch):
    from controlplane import config
    from controlplane.dal import batches
    from controlplane.dal.table import api_table

    # Given dora was in ops a moment ago (so a delete of ops waits for the indexes)
    create_user("acme", "dora", unit="ops")
    assert call("PATCH", "/orgs/acme/users/dora", {"unit": "eng"}).status == 200
    delete_all, later = batches.delete_all, []

    def units_in_a_later_batch(table, items):  # the cascade's first batch holds the tree item, not ops
        later.extend(item for item in items if item.get("entity") == keys.UNIT)
        delete_all(table, [item for item in items if item.get("entity") != keys.UNIT])

    def org_deleted():
        with monkeypatch.context() as cascade:
            cascade.setattr(batches, "delete_all", units_in_a_later_batch)
            assert call("DELETE", "/orgs/acme").status == 204

    _while_the_delete_waits(monkeypatch, org_deleted)

    # When the org's delete takes the tree item while ops's delete waits, and the units go after it
    reply = call("DELETE", "/orgs/acme/units/ops")
    delete_all(api_table(), later)

    # Then ops's delete does not count itself on a tree item of its own: none outlives the org, to
    # give the next org of that id a count of -1 (1,001 units)
    left = config.dynamodb().scan(TableName=table)["Items"]
    assert [item for item in left if "acme" in item["PK"]["S"]] == []
    assert (reply.status, reply.error_code) == (404, "not_found"), reply.body


def test_a_unit_delete_that_finds_its_org_being_deleted_is_404_and_takes_its_mark_back(acme):
    from controlplane.dal import keys, stamps, tree
    from controlplane.dal.table import api_table

    # Given acme, whose delete has begun (it marks the org first) since the request was admitted
    api_table().mark(keys.org_key("acme"), stamps.DELETING, stamps.now())

    # When an empty unit is deleted, it is refused as the org gone, and the unit is as it was
    reply = call("DELETE", "/orgs/acme/units/web")

    assert (reply.status, reply.error_code) == (404, "not_found"), reply.body
    assert "Organization acme" in reply.body["error"]["message"]
    assert tree.DELETING not in api_table().get(keys.unit_key("acme", "web"), consistent=True)
