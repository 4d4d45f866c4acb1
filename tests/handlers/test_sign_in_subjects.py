"""The one-off backfill stores each existing user's Cognito sub on their item, once, resumably."""

import boto3
import pytest

from controlplane import config
from controlplane.dal.conditions import ConditionFailed
from controlplane.dal.table import Table, api_table
from ops import sign_in_subjects
from tests.api import call, create_org, create_user, user_pool

pytestmark = pytest.mark.parametrize("table", ["moto"], indirect=True)  # Cognito exists on moto only


class NoWait:
    def wait(self) -> None:
        pass


@pytest.fixture
def legacy(table, monkeypatch):
    """acme (alice, bob) and bolt (carol), stored before subjects were kept; bob's sign-in is gone."""
    cognito, pool_id = boto3.client("cognito-idp"), user_pool(monkeypatch)
    for org_id, user_id in [("acme", "alice"), ("acme", "bob"), ("bolt", "carol")]:
        if call("GET", f"/orgs/{org_id}").status == 404:
            create_org(org_id)
        create_user(org_id, user_id)
        config.dynamodb().update_item(
            TableName=table,
            Key={"PK": {"S": f"ORG#{org_id}"}, "SK": {"S": f"USER#{user_id}"}},
            UpdateExpression="REMOVE sign_in_sub",
        )
    cognito.admin_delete_user(UserPoolId=pool_id, Username="acme.bob")
    return cognito, pool_id


def _subject(table: str, org_id: str, user_id: str) -> str | None:
    item = config.dynamodb().get_item(
        TableName=table, Key={"PK": {"S": f"ORG#{org_id}"}, "SK": {"S": f"USER#{user_id}"}}
    )["Item"]
    return item.get("sign_in_sub", {}).get("S")


def _cognito_sub(pool, username: str) -> str:
    cognito, pool_id = pool
    attributes = cognito.admin_get_user(UserPoolId=pool_id, Username=username)["UserAttributes"]
    return next(a["Value"] for a in attributes if a["Name"] == "sub")


def test_the_backfill_stores_each_users_cognito_sub_and_reports_the_missing_sign_ins(legacy, table):
    report = sign_in_subjects.backfill(api_table(), config.directory(), echo=lambda _: None, throttle=NoWait())

    assert sorted(report.stored) == ["acme.alice", "bolt.carol"]
    assert report.no_sign_in == ["acme.bob"]
    assert _subject(table, "acme", "alice") == _cognito_sub(legacy, "acme.alice")
    assert _subject(table, "bolt", "carol") == _cognito_sub(legacy, "bolt.carol")
    assert _subject(table, "acme", "bob") is None  # the authorizer refuses bob: fail closed


def test_running_it_again_changes_nothing_and_keeps_what_the_api_stored(legacy, table):
    config.dynamodb().update_item(
        TableName=table,
        Key={"PK": {"S": "ORG#acme"}, "SK": {"S": "USER#alice"}},
        UpdateExpression="SET sign_in_sub = :s",
        ExpressionAttributeValues={":s": {"S": "stored-by-the-api"}},
    )
    sign_in_subjects.backfill(api_table(), config.directory(), echo=lambda _: None, throttle=NoWait())

    again = sign_in_subjects.backfill(api_table(), config.directory(), echo=lambda _: None, throttle=NoWait())

    assert again.stored == [] and again.already == 2
    assert _subject(table, "acme", "alice") == "stored-by-the-api"


def test_a_run_resumes_after_the_last_org_it_finished(legacy, table):
    done: list[str] = []

    report = sign_in_subjects.backfill(
        api_table(), config.directory(), after="acme", echo=done.append, throttle=NoWait()
    )

    assert report.stored == ["bolt.carol"] and done == ["done bolt"]
    assert _subject(table, "acme", "alice") is None


class RecreatedMeanwhile(Table):
    """The backfill's table, whose write lands late: after alice's sign-in was read, she is deleted
    and created again, and the write comes between that create's item (no subject yet) and its own
    store of the new sign-in's subject (right after Cognito made the new sign-in)."""

    def mark(self, key, attribute, value, expects=(), alongside=None, *, overwrite=False):
        landed: dict[str, object] = {}

        def late_write(**_) -> None:
            try:
                landed["item"] = Table.mark(self, key, attribute, value, expects, alongside, overwrite=overwrite)
            except ConditionFailed as refused:
                landed["refused"] = refused

        assert call("DELETE", "/orgs/acme/users/alice").status == 204
        events = config.directory().client.meta.events
        events.register_first("after-call.cognito-identity-provider.AdminCreateUser", late_write, "late-write")
        try:
            assert create_user("acme", "alice").status == 201
        finally:
            events.unregister("after-call.cognito-identity-provider.AdminCreateUser", unique_id="late-write")
        if "refused" in landed:
            raise landed["refused"]
        return landed["item"]


def test_a_user_deleted_and_created_again_meanwhile_keeps_the_new_sign_ins_subject(table, monkeypatch):
    # Given alice, stored before subjects were kept
    pool = boto3.client("cognito-idp"), user_pool(monkeypatch)
    create_org("acme")
    create_user("acme", "alice")
    config.dynamodb().update_item(
        TableName=table,
        Key={"PK": {"S": "ORG#acme"}, "SK": {"S": "USER#alice"}},
        UpdateExpression="REMOVE sign_in_sub",
    )
    old_subject = _cognito_sub(pool, "acme.alice")

    # When the backfill reads her old sign-in's subject, and she is deleted and created again before
    # its write lands
    sign_in_subjects.backfill(
        RecreatedMeanwhile(config.dynamodb(), table), config.directory(), echo=lambda _: None, throttle=NoWait()
    )

    # Then the new alice keeps her new sign-in's subject: the deleted sign-in's would refuse her tokens
    new_subject = _cognito_sub(pool, "acme.alice")
    assert new_subject != old_subject
    assert _subject(table, "acme", "alice") == new_subject


def _dan_imported_without_his_sign_in(monkeypatch) -> str:
    """dan, put by an import of acme whose job ran short of time before his sign-in: its id."""
    from controlplane.logic import import_job
    from controlplane.logic import imports as logic_imports

    with monkeypatch.context() as held:
        held.setattr(logic_imports.import_job, "run", lambda *args: None)
        started = call(
            "POST", "/orgs/acme/user-imports", {"rows": [{"user_id": "dan", "name": "D", "email": "d@x.io"}]}
        )
    assert started.status == 202, started.body
    with monkeypatch.context() as short:
        short.setattr(import_job, "_sign_in", lambda *args: False)  # time ran short before the sign-ins
        assert import_job.run("acme", started.body["import_id"]) == 0
    return str(started.body["import_id"])


def test_a_user_whose_import_is_still_making_sign_ins_is_pending_not_reported_as_lost(legacy, table, monkeypatch):
    # Given dan, put by an import whose job has not made his sign-in yet (it is paced: 10,000 take 17 minutes)
    _dan_imported_without_his_sign_in(monkeypatch)

    # When the backfill runs
    report = sign_in_subjects.backfill(api_table(), config.directory(), echo=lambda _: None, throttle=NoWait())

    # Then dan is not among the users whose sign-in is gone (an operator would delete and create him
    # again): his import is still running, and it stores his subject
    assert report.no_sign_in == ["acme.bob"]
    assert report.pending == ["acme.dan"]


def test_a_left_over_sign_in_of_a_user_whose_import_is_running_is_not_given_to_them(legacy, table, monkeypatch):
    # Given a sign-in acme.dan left over from before (another address, whose holder got its invitation),
    # and dan, put by an import whose job has not made his sign-in yet
    from controlplane.logic import import_job

    cognito, pool_id = legacy
    left = cognito.admin_create_user(
        UserPoolId=pool_id, Username="acme.dan", UserAttributes=[{"Name": "email", "Value": "old@x.io"}]
    )
    left_sub = next(a["Value"] for a in left["User"]["Attributes"] if a["Name"] == "sub")
    import_id = _dan_imported_without_his_sign_in(monkeypatch)

    # When the backfill runs, and then the import's job makes dan's sign-in
    report = sign_in_subjects.backfill(api_table(), config.directory(), echo=lambda _: None, throttle=NoWait())
    assert import_job.run("acme", import_id) is None

    # Then dan's item holds the subject of a sign-in of his own address, not the left-over's (whose
    # holder could sign in as him): the backfill left him to his import, as pending
    assert _subject(table, "acme", "dan") == _cognito_sub(legacy, "acme.dan") != left_sub
    attributes = cognito.admin_get_user(UserPoolId=pool_id, Username="acme.dan")["UserAttributes"]
    assert next(a["Value"] for a in attributes if a["Name"] == "email") == "d@x.io"
    assert report.pending == ["acme.dan"]
