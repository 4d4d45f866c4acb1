"""Tenant status: operators suspend and reactivate an org with PATCH; everyone else sees the status."""

import pytest

from controlplane import config
from controlplane.dal import keys
from controlplane.dal.table import api_table
from tests.api import admin, call, create_org, create_user, member

SUSPEND = {"status": "suspended", "suspension_reason": "Invoice 2026-11 unpaid"}


def _stored(org_id: str = "acme") -> dict:
    return api_table().get(keys.org_key(org_id), consistent=True)


def test_operator_suspends_an_org_with_a_reason_in_one_update_then_reads_its_seats(table, dynamodb_calls):
    create_org("acme")
    dynamodb_calls.clear()

    reply = call("PATCH", "/orgs/acme", SUSPEND)

    assert reply.status == 200, reply.body
    assert dynamodb_calls == ["UpdateItem", "Query"]  # the org item, then the org with its seat counter
    assert reply.body["status"] == "suspended"
    assert reply.body["suspension_reason"] == "Invoice 2026-11 unpaid"
    assert reply.body["suspended_at"] == reply.body["updated_at"]
    assert reply.body["version"] == 2
    assert reply.headers["ETag"] == '"2"'
    stored = _stored()
    assert (stored["status"], stored["suspension_reason"]) == ("suspended", "Invoice 2026-11 unpaid")


def test_new_orgs_are_active_without_a_suspension(table):
    reply = create_org("acme")

    assert reply.body["status"] == "active"
    assert reply.body["suspended_at"] is None
    assert reply.body["suspension_reason"] is None
    assert _stored()["status"] == "active"


def test_an_org_stored_without_a_status_reads_as_active(table):
    create_org("acme")
    config.dynamodb().update_item(
        TableName=table,
        Key={"PK": {"S": "ORG#acme"}, "SK": {"S": "METADATA#acme"}},
        UpdateExpression="REMOVE #status",
        ExpressionAttributeNames={"#status": "status"},
    )

    assert call("GET", "/orgs/acme").body["status"] == "active"
    assert call("GET", "/orgs").body["items"][0]["status"] == "active"


def test_get_and_list_show_the_status_and_only_operators_see_the_reason(table):
    create_org("acme")
    create_org("bolt")
    call("PATCH", "/orgs/acme", SUSPEND)

    as_operator = call("GET", "/orgs/acme").body
    as_admin = call("GET", "/orgs/acme", caller=admin()).body
    as_member = call("GET", "/orgs/acme", query={"include": "users"}, caller=member()).body["org"]
    listed = {org["org_id"]: org for org in call("GET", "/orgs").body["items"]}

    assert as_operator["suspension_reason"] == "Invoice 2026-11 unpaid"
    for seen in (as_admin, as_member):
        assert seen["status"] == "suspended"
        assert seen["suspended_at"] == as_operator["suspended_at"]
        assert seen["suspension_reason"] is None
    assert listed["acme"]["status"] == "suspended"
    assert listed["acme"]["suspension_reason"] == "Invoice 2026-11 unpaid"
    assert listed["bolt"]["status"] == "active"


def test_an_admin_patching_other_fields_of_a_suspended_org_does_not_see_the_reason(table):
    create_org("acme")
    call("PATCH", "/orgs/acme", SUSPEND)

    reply = call("PATCH", "/orgs/acme", {"name": "Acme 2"}, caller=admin())

    assert reply.status == 200
    assert reply.body["suspension_reason"] is None
    assert _stored()["suspension_reason"] == "Invoice 2026-11 unpaid"


@pytest.mark.parametrize("body", [SUSPEND, {"status": "active"}], ids=["suspend", "reactivate"])
def test_an_org_admin_sending_status_gets_403_and_nothing_is_written(table, dynamodb_calls, body):
    create_org("acme")
    dynamodb_calls.clear()

    reply = call("PATCH", "/orgs/acme", body, caller=admin())

    assert reply.status == 403
    assert reply.error_code == "forbidden"
    assert "status" in reply.body["error"]["message"]
    assert dynamodb_calls == []
    assert _stored()["version"] == 1


def test_reactivating_clears_the_suspension(table):
    create_org("acme")
    call("PATCH", "/orgs/acme", SUSPEND)

    reply = call("PATCH", "/orgs/acme", {"status": "active"})

    assert reply.status == 200
    assert (reply.body["status"], reply.body["suspended_at"], reply.body["suspension_reason"]) == ("active", None, None)
    assert reply.body["version"] == 3
    stored = _stored()
    assert "suspended_at" not in stored and "suspension_reason" not in stored


def test_suspending_again_changes_the_reason_but_keeps_the_time(table):
    create_org("acme")
    first = call("PATCH", "/orgs/acme", SUSPEND).body

    reply = call("PATCH", "/orgs/acme", {"status": "suspended", "suspension_reason": "Legal hold"})

    assert reply.body["suspension_reason"] == "Legal hold"
    assert reply.body["suspended_at"] == first["suspended_at"]
    assert reply.body["updated_at"] >= first["updated_at"] and reply.body["version"] == 3


def test_a_stale_if_match_is_412_and_leaves_the_org_active(table):
    create_org("acme")
    call("PATCH", "/orgs/acme", {"name": "Acme 2"})

    reply = call("PATCH", "/orgs/acme", SUSPEND, headers={"If-Match": ['"1"']})

    assert reply.status == 412
    assert reply.error_code == "precondition_failed"
    assert _stored()["status"] == "active" and _stored()["version"] == 2


def test_a_current_if_match_suspends(table):
    create_org("acme")

    reply = call("PATCH", "/orgs/acme", SUSPEND, headers={"If-Match": ['"1"']})

    assert reply.status == 200 and reply.body["status"] == "suspended"


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"status": "suspended", "suspension_reason": "x" * 501}, ["body", "suspension_reason"]),
        ({"status": "suspended", "suspension_reason": "   "}, ["body", "suspension_reason"]),
        ({"status": "suspended"}, ["body"]),
        ({"status": "active", "suspension_reason": "why"}, ["body"]),
        ({"suspension_reason": "why"}, ["body"]),
        ({"status": "deleting"}, ["body", "status"]),
        ({"status": None}, ["body"]),
    ],
    ids=["reason-too-long", "reason-blank", "no-reason", "reason-when-active", "reason-alone", "unknown", "null"],
)
def test_an_invalid_status_change_is_422_and_changes_nothing(table, dynamodb_calls, body, loc):
    create_org("acme")
    dynamodb_calls.clear()

    reply = call("PATCH", "/orgs/acme", body)

    assert reply.status == 422, reply.body
    assert reply.error_code == "validation_error"
    assert reply.body["error"]["details"][0]["loc"][: len(loc)] == loc
    assert dynamodb_calls == []
    assert _stored()["status"] == "active" and _stored()["version"] == 1


def test_a_reason_of_500_characters_is_kept_whole(table):
    create_org("acme")

    reply = call("PATCH", "/orgs/acme", {"status": "suspended", "suspension_reason": "x" * 500})

    assert reply.status == 200 and reply.body["suspension_reason"] == "x" * 500


def test_suspending_a_missing_org_is_404(table):
    assert call("PATCH", "/orgs/ghost", SUSPEND).status == 404


def test_a_suspended_org_takes_no_new_user_and_keeps_its_seats(table):
    create_org("acme")
    create_user("acme", "alice")
    call("PATCH", "/orgs/acme", SUSPEND)

    reply = create_user("acme", "bob")

    assert reply.status == 409
    assert reply.error_code == "org_suspended"
    assert call("GET", "/orgs/acme/users/bob").status == 404
    assert call("GET", "/orgs/acme").body["usage"]["users"] == 1


def test_a_reactivated_org_takes_new_users_again_and_kept_its_items(table):
    create_org("acme")
    create_user("acme", "alice")
    call("PATCH", "/orgs/acme", SUSPEND)

    call("PATCH", "/orgs/acme", {"status": "active"})

    assert create_user("acme", "bob").status == 201
    assert call("GET", "/orgs/acme/users/alice").status == 200
    assert call("GET", "/orgs/acme").body["usage"]["users"] == 2
