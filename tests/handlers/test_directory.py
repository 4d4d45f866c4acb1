"""Users' sign-ins (Cognito, on moto) stay in step with the table, even when one side fails."""

import boto3
import pytest
from botocore.exceptions import ClientError

from controlplane import config
from controlplane.logic import users
from controlplane.logic.access import Caller
from controlplane.models.resources import UserCreate
from tests.api import admin, call, create_org, create_ticket, create_user, user_pool

pytestmark = pytest.mark.parametrize("table", ["moto"], indirect=True)  # Cognito exists on moto only

SUCCESSORS_CREATOR = Caller(subject="op", user_id=None, org_id=None, role=None, operator=True)


@pytest.fixture
def pool(table, monkeypatch):
    pool_id = user_pool(monkeypatch)
    create_org("acme")
    return boto3.client("cognito-idp"), pool_id


def _sign_in(pool, username: str) -> dict | None:
    cognito, pool_id = pool
    try:
        user = cognito.admin_get_user(UserPoolId=pool_id, Username=username)
    except cognito.exceptions.UserNotFoundException:
        return None
    return {a["Name"]: a["Value"] for a in user["UserAttributes"]}


def _stored_subject(user_id: str) -> str:
    item = config.dynamodb().get_item(
        TableName=config.settings().table_name, Key={"PK": {"S": "ORG#acme"}, "SK": {"S": f"USER#{user_id}"}}
    )["Item"]
    return item["sign_in_sub"]["S"]


def _fail(monkeypatch, client, operation: str, code: str = "InternalErrorException"):
    def raise_error(**_):
        raise ClientError({"Error": {"Code": code, "Message": "injected"}}, operation)

    monkeypatch.setattr(client, operation, raise_error)


def test_an_address_cognito_refuses_is_422_and_leaves_no_user(pool, monkeypatch):
    _fail(monkeypatch, config.directory().client, "admin_create_user", "InvalidParameterException")

    reply = create_user("acme", "alice")

    assert reply.status == 422 and reply.body["error"]["code"] == "validation_error"
    assert "refused this user: injected" in reply.body["error"]["message"]
    assert call("GET", "/orgs/acme/users/alice").status == 404
    assert call("GET", "/orgs/acme").body["usage"]["users"] == 0


def test_an_address_change_cognito_refuses_is_422_and_changes_nothing(pool, monkeypatch):
    create_user("acme", "alice")
    _fail(monkeypatch, config.directory().client, "admin_update_user_attributes", "InvalidParameterException")

    reply = call("PATCH", "/orgs/acme/users/alice", {"email": "alice@new.example"}, caller=admin())

    assert reply.status == 422 and reply.body["error"]["code"] == "validation_error"
    user = call("GET", "/orgs/acme/users/alice").body
    assert (user["email"], user["version"]) == ("alice@example.com", 1)


def test_creating_a_user_creates_their_sign_in_with_the_claims(pool):
    create_user("acme", "alice", role="admin")

    attributes = _sign_in(pool, "acme.alice")

    assert attributes["custom:org_id"] == "acme"
    assert attributes["custom:user_id"] == "alice"
    assert attributes["custom:role"] == "admin"
    assert attributes["email"] == "alice@example.com"


def test_failed_sign_in_creation_leaves_no_user_in_the_table(pool, monkeypatch):
    _fail(monkeypatch, config.directory().client, "admin_create_user")

    reply = create_user("acme", "alice")

    assert reply.status == 500
    assert call("GET", "/orgs/acme/users/alice").status == 404
    assert _sign_in(pool, "acme.alice") is None


def test_existing_user_is_409_without_touching_cognito(pool, monkeypatch):
    create_user("acme", "alice")
    _fail(monkeypatch, config.directory().client, "admin_create_user")

    assert create_user("acme", "alice").status == 409
    assert _sign_in(pool, "acme.alice") is not None


def test_changing_the_role_changes_the_claim(pool):
    create_user("acme", "alice")

    call("PATCH", "/orgs/acme/users/alice", {"role": "admin"}, caller=admin())

    assert _sign_in(pool, "acme.alice")["custom:role"] == "admin"


def test_a_role_change_with_a_stale_if_match_is_412_and_leaves_the_claim_as_it_was(pool):
    create_user("acme", "alice")
    call("PATCH", "/orgs/acme/users/alice", {"name": "A2"})

    reply = call("PATCH", "/orgs/acme/users/alice", {"role": "admin"}, headers={"If-Match": ['"1"']})

    assert reply.status == 412
    assert _sign_in(pool, "acme.alice")["custom:role"] == "member"
    assert call("GET", "/orgs/acme/users/alice").body["role"] == "member"


def test_failed_claim_update_leaves_the_table_unchanged(pool, monkeypatch):
    create_user("acme", "alice")
    _fail(monkeypatch, config.directory().client, "admin_update_user_attributes")

    reply = call("PATCH", "/orgs/acme/users/alice", {"role": "admin"})

    assert reply.status == 500
    assert call("GET", "/orgs/acme/users/alice").body["role"] == "member"


@pytest.mark.parametrize("change", [{"role": "admin"}, {"email": "ann@acme.example"}])
def test_a_sign_in_change_for_a_user_with_no_sign_in_is_409_and_changes_nothing(pool, change):
    # Given a user whose sign-in is not there (an import's, not made yet or refused by Cognito)
    create_user("acme", "ann")
    cognito, pool_id = pool
    cognito.admin_delete_user(UserPoolId=pool_id, Username="acme.ann")

    reply = call("PATCH", "/orgs/acme/users/ann", change, caller=admin())

    assert reply.status == 409 and reply.body["error"]["code"] == "conflict"
    assert "no sign-in" in reply.body["error"]["message"]
    user = call("GET", "/orgs/acme/users/ann").body
    assert (user["role"], user["email"], user["version"]) == ("member", "ann@example.com", 1)
    assert _sign_in(pool, "acme.ann") is None


def test_deleting_a_user_deletes_their_sign_in(pool):
    create_user("acme", "alice")

    assert call("DELETE", "/orgs/acme/users/alice").status == 204
    assert _sign_in(pool, "acme.alice") is None


def test_failed_sign_in_deletion_leaves_the_user_whole(pool, monkeypatch):
    create_user("acme", "alice")
    ticket = create_ticket("acme", "alice").body["ticket_id"]
    _fail(monkeypatch, config.directory().client, "admin_delete_user")

    reply = call("DELETE", "/orgs/acme/users/alice")

    assert reply.status == 500
    assert _sign_in(pool, "acme.alice") is not None
    assert call("GET", f"/orgs/acme/tickets/{ticket}").status == 200


def test_delete_interrupted_after_the_sign_in_completes_when_retried(pool, monkeypatch):
    create_user("acme", "alice")
    with monkeypatch.context() as patch:
        _fail(patch, config.dynamodb(), "transact_write_items")  # the final step: user and seat
        assert call("DELETE", "/orgs/acme/users/alice").status == 500

    assert call("DELETE", "/orgs/acme/users/alice").status == 204
    assert call("GET", "/orgs/acme/users/alice").status == 404
    assert _sign_in(pool, "acme.alice") is None


def test_a_left_over_sign_in_is_replaced_by_the_users_create_with_a_new_subject(pool):
    cognito, pool_id = pool
    cognito.admin_create_user(UserPoolId=pool_id, Username="acme.alice")
    left_over = _sign_in(pool, "acme.alice")["sub"]

    assert create_user("acme", "alice").status == 201
    assert _sign_in(pool, "acme.alice")["sub"] not in ("", left_over)
    assert _stored_subject("alice") == _sign_in(pool, "acme.alice")["sub"]


def test_the_user_item_keeps_the_sign_ins_subject_and_a_re_created_user_gets_a_new_one(pool):
    create_user("acme", "alice")
    first = _stored_subject("alice")
    assert first == _sign_in(pool, "acme.alice")["sub"]

    assert call("DELETE", "/orgs/acme/users/alice").status == 204
    create_user("acme", "alice")

    assert _stored_subject("alice") == _sign_in(pool, "acme.alice")["sub"] != first


def test_the_subject_is_not_in_the_api_response(pool):
    assert "sign_in_sub" not in create_user("acme", "alice").body
    assert "sign_in_sub" not in call("GET", "/orgs/acme/users/alice").body


def test_failing_to_store_the_subject_removes_the_sign_in_and_the_user(pool, monkeypatch):
    table_client = config.dynamodb()
    real = table_client.update_item

    def refuse_the_mark(**request):
        if "sign_in_sub" in str(request.get("ExpressionAttributeNames")):
            raise ClientError({"Error": {"Code": "InternalServerError", "Message": "injected"}}, "UpdateItem")
        return real(**request)

    monkeypatch.setattr(table_client, "update_item", refuse_the_mark)

    assert create_user("acme", "alice").status == 500
    monkeypatch.undo()
    assert _sign_in(pool, "acme.alice") is None
    assert call("GET", "/orgs/acme/users/alice").status == 404
    assert call("GET", "/orgs/acme").body["usage"]["users"] == 0


def test_a_failed_create_leaves_a_same_name_successor_its_sign_in_and_its_item(pool, monkeypatch):
    # Given alice's create, which has made her sign-in but finds her item deleted when it stores the
    # sign-in's subject, and a new alice created before that first create cleans up after itself
    table_client, real = config.dynamodb(), config.dynamodb().update_item
    successor: dict[str, str] = {}

    def deleted_and_created_again_around_the_first_mark(**request):
        if successor or "sign_in_sub" not in str(request.get("ExpressionAttributeNames")):
            return real(**request)
        successor["pending"] = "yes"
        users.delete_user("acme", "alice")
        try:
            return real(**request)
        finally:
            again = UserCreate(user_id="alice", name="Alice", email="alice@new.example")
            users.create_user("acme", again, SUCCESSORS_CREATOR)
            successor["sub"] = _sign_in(pool, "acme.alice")["sub"]

    monkeypatch.setattr(table_client, "update_item", deleted_and_created_again_around_the_first_mark)

    # When the first create fails (its user is gone)
    assert create_user("acme", "alice").status == 404
    monkeypatch.undo()

    # Then the new alice keeps her sign-in, and her item, which holds its subject, and her seat
    assert _sign_in(pool, "acme.alice")["sub"] == successor["sub"]
    assert _stored_subject("alice") == successor["sub"]
    assert call("GET", "/orgs/acme/users/alice").body["email"] == "alice@new.example"
    assert call("GET", "/orgs/acme").body["usage"]["users"] == 1


def test_a_create_cognito_refuses_answers_so_even_when_its_user_was_created_again_meanwhile(pool, monkeypatch):
    # Given alice's create, taken in the table; while Cognito refuses her address, alice is deleted
    # and created again (with an address Cognito takes)
    client = config.directory().client
    real, successor = client.admin_create_user, []

    def refused_after_a_successor(**request):
        if successor:
            return real(**request)
        successor.append(True)
        users.delete_user("acme", "alice")
        users.create_user(
            "acme", UserCreate(user_id="alice", name="Alice", email="alice@new.example"), SUCCESSORS_CREATOR
        )
        raise ClientError({"Error": {"Code": "InvalidParameterException", "Message": "injected"}}, "AdminCreateUser")

    monkeypatch.setattr(client, "admin_create_user", refused_after_a_successor)

    # When the first create meets Cognito's refusal
    reply = create_user("acme", "alice")
    monkeypatch.undo()

    # Then it answers with Cognito's refusal (not that alice is missing: she is there), and the new
    # alice keeps her item, her sign-in and her seat
    assert reply.status == 422 and reply.body["error"]["code"] == "validation_error", reply.body
    assert call("GET", "/orgs/acme/users/alice").body["email"] == "alice@new.example"
    assert _stored_subject("alice") == _sign_in(pool, "acme.alice")["sub"]
    assert call("GET", "/orgs/acme").body["usage"]["users"] == 1


def test_a_create_overtaken_before_it_makes_its_sign_in_leaves_the_successors_sign_in(pool, monkeypatch):
    # Given alice's create, taken in the table; before it asks Cognito for her sign-in, alice is
    # deleted and created again, whole: the new alice's item and her sign-in, its subject stored
    client = config.directory().client
    real, successor = client.admin_create_user, []

    def after_a_successor(**request):
        if not successor:
            successor.append(True)
            users.delete_user("acme", "alice")
            again = UserCreate(user_id="alice", name="Alice", email="alice@new.example")
            users.create_user("acme", again, SUCCESSORS_CREATOR)
        return real(**request)

    monkeypatch.setattr(client, "admin_create_user", after_a_successor)

    # When the first create finds a sign-in of that name
    reply = create_user("acme", "alice")
    monkeypatch.undo()

    # Then it is the new alice's, not a left-over: it stays, and the first create answers that its
    # user is gone; the new alice keeps her item, her seat and a sign-in she can use
    assert reply.status == 404, reply.body
    assert _sign_in(pool, "acme.alice") is not None
    assert _stored_subject("alice") == _sign_in(pool, "acme.alice")["sub"]
    assert call("GET", "/orgs/acme/users/alice").body["email"] == "alice@new.example"
    assert call("GET", "/orgs/acme").body["usage"]["users"] == 1


def test_a_create_overtaken_before_it_stores_its_subject_leaves_the_successor_its_own(pool, monkeypatch):
    # Given alice's create, which has made her sign-in; before it stores the sign-in's subject, alice
    # is deleted and created again, and that new create's item takes its subject only after the
    # first create's write of its own subject has reached it
    table_client, real = config.dynamodb(), config.dynamodb().update_item
    first: dict[str, object] = {}

    def overtaken_at_the_first_mark(**request):
        if "sign_in_sub" not in str(request.get("ExpressionAttributeNames")):
            return real(**request)
        if not first:  # the first create's mark: the successor comes now, and this mark lands within it
            first["request"] = request
            users.delete_user("acme", "alice")
            again = UserCreate(user_id="alice", name="Alice", email="alice@new.example")
            users.create_user("acme", again, SUCCESSORS_CREATOR)
            if "refused" in first:
                raise first["refused"]  # type: ignore[misc]
            return first["answer"]
        try:  # the successor's mark: the first create's lands on the item just before it
            first["answer"] = real(**first["request"])  # type: ignore[arg-type]
        except ClientError as refused:
            first["refused"] = refused
        return real(**request)

    monkeypatch.setattr(table_client, "update_item", overtaken_at_the_first_mark)

    # When the first create goes on
    assert create_user("acme", "alice").status == 404  # its user is gone: it answers so
    monkeypatch.undo()

    # Then the new alice's item holds her own sign-in's subject (the authorizer lets her in), and
    # keeps her seat
    assert _stored_subject("alice") == _sign_in(pool, "acme.alice")["sub"]
    assert call("GET", "/orgs/acme/users/alice").body["email"] == "alice@new.example"
    assert call("GET", "/orgs/acme").body["usage"]["users"] == 1


def test_deleting_a_missing_user_touches_no_sign_in(pool):
    cognito, pool_id = pool
    cognito.admin_create_user(UserPoolId=pool_id, Username="acme.ghost")

    assert call("DELETE", "/orgs/acme/users/ghost").status == 404
    assert _sign_in(pool, "acme.ghost") is not None


@pytest.mark.parametrize("version", [None, 7], ids=["missing", "stale-if-match"])
def test_updating_a_missing_or_stale_user_touches_no_sign_in(pool, monkeypatch, version):
    create_user("acme", "alice")
    user_id = "alice" if version else "ghost"
    _fail(monkeypatch, config.directory().client, "admin_update_user_attributes")
    _fail(monkeypatch, config.directory().client, "admin_get_user")
    headers = {"If-Match": [f'"{version}"']} if version else {}

    reply = call("PATCH", f"/orgs/acme/users/{user_id}", {"role": "admin"}, headers=headers)

    assert reply.status == (412 if version else 404)


def test_a_stale_delete_touches_no_sign_in(pool, monkeypatch):
    create_user("acme", "alice")
    _fail(monkeypatch, config.directory().client, "admin_delete_user")

    assert call("DELETE", "/orgs/acme/users/alice", headers={"If-Match": ['"7"']}).status == 412


def test_deleting_the_org_deletes_every_sign_in(pool):
    for user_id in ("alice", "bob"):
        create_user("acme", user_id)

    assert call("DELETE", "/orgs/acme").status == 204
    assert _sign_in(pool, "acme.alice") is None
    assert _sign_in(pool, "acme.bob") is None


def test_deleting_the_org_deletes_a_sign_in_left_over_with_no_user_and_no_other_orgs(pool, monkeypatch):
    # Given bob's create, whose subject could not be stored and whose clean-up could not remove his
    # sign-in either (Cognito failing too): a sign-in acme.bob left over, invited, with no user item
    assert create_org("acmecorp").status == 201
    assert create_user("acmecorp", "carol").status == 201  # a name that starts with acme, another org's
    table_client, client = config.dynamodb(), config.directory().client
    real = table_client.update_item

    def refuse_the_mark(**request):
        if "sign_in_sub" in str(request.get("ExpressionAttributeNames")):
            raise ClientError({"Error": {"Code": "InternalServerError", "Message": "injected"}}, "UpdateItem")
        return real(**request)

    with monkeypatch.context() as failing:
        failing.setattr(table_client, "update_item", refuse_the_mark)
        _fail(failing, client, "admin_delete_user")
        assert create_user("acme", "bob").status == 500
    assert call("GET", "/orgs/acme/users/bob").status == 404 and _sign_in(pool, "acme.bob") is not None

    # When acme is deleted
    assert call("DELETE", "/orgs/acme").status == 204

    # Then no sign-in of acme outlives it (its address was acme's data); acmecorp's stays
    assert _sign_in(pool, "acme.bob") is None
    assert _sign_in(pool, "acmecorp.carol") is not None


def test_deleting_the_org_reads_every_page_of_its_left_over_sign_ins(pool):
    # Given more left-over sign-ins of acme than one page of Cognito's ListUsers holds (60)
    cognito, pool_id = pool
    for i in range(61):
        cognito.admin_create_user(UserPoolId=pool_id, Username=f"acme.left-{i:02}")

    # When acme is deleted
    assert call("DELETE", "/orgs/acme").status == 204

    # Then none outlives it: the last page's too
    assert [i for i in range(61) if _sign_in(pool, f"acme.left-{i:02}") is not None] == []


def test_changing_the_email_changes_the_sign_in_address(pool):
    create_user("acme", "alice")

    call("PATCH", "/orgs/acme/users/alice", {"email": "new@example.com"})

    assert _sign_in(pool, "acme.alice")["email"] == "new@example.com"


def _accept_invitation_and_reset_password(pool, username: str) -> None:
    """The user sets their password (CONFIRMED), then asks for a reset: moto, like Cognito, refuses it
    when the sign-in has no verified e-mail ("no registered/verified email or phone_number")."""
    cognito, pool_id = pool
    cognito.admin_set_user_password(UserPoolId=pool_id, Username=username, Password="Str0ng!Passw0rd", Permanent=True)
    cognito.admin_reset_user_password(UserPoolId=pool_id, Username=username)


@pytest.fixture
def cognito_unverifies_changed_addresses(monkeypatch):
    """What Cognito does and moto does not: an address changed by AdminUpdateUserAttributes is unverified
    (and sent a code) unless the same call sets email_verified to true."""
    client = config.directory().client
    update = client.admin_update_user_attributes

    def like_cognito(**request):
        attributes = request["UserAttributes"]
        names = {attribute["Name"] for attribute in attributes}
        if "email" in names and "email_verified" not in names:
            attributes = [*attributes, {"Name": "email_verified", "Value": "false"}]
        return update(**{**request, "UserAttributes": attributes})

    monkeypatch.setattr(client, "admin_update_user_attributes", like_cognito)


def test_a_new_user_can_reset_their_password_by_email(pool):
    # Given a user an admin created (the admin vouches for the address: docs/SECURITY.md)
    create_user("acme", "alice")

    # Then their sign-in's address is verified, so the e-mail-only recovery can send them a code
    assert _sign_in(pool, "acme.alice")["email_verified"] == "true"
    _accept_invitation_and_reset_password(pool, "acme.alice")


def test_a_changed_email_stays_verified_so_the_user_can_still_reset(pool, cognito_unverifies_changed_addresses):
    create_user("acme", "alice")

    assert call("PATCH", "/orgs/acme/users/alice", {"email": "new@example.com"}, caller=admin()).status == 200

    attributes = _sign_in(pool, "acme.alice")
    assert (attributes["email"], attributes["email_verified"]) == ("new@example.com", "true")
    _accept_invitation_and_reset_password(pool, "acme.alice")


def test_a_role_change_leaves_the_address_alone(pool, cognito_unverifies_changed_addresses):
    create_user("acme", "alice")

    call("PATCH", "/orgs/acme/users/alice", {"role": "admin"}, caller=admin())

    assert _sign_in(pool, "acme.alice")["email"] == "alice@example.com"
    assert _sign_in(pool, "acme.alice")["email_verified"] == "true"


def test_a_role_change_whose_user_is_deleted_after_it_read_the_sign_in_is_404_not_a_500(pool, monkeypatch):
    # Given alice, deleted (her sign-in, then her item) right after her role change read her sign-in
    create_user("acme", "alice")
    client = config.directory().client
    real, deleted = client.admin_get_user, []

    def deleted_after_the_read(**request):
        answer = real(**request)
        if not deleted:
            deleted.append(True)
            users.delete_user("acme", "alice")
        return answer

    monkeypatch.setattr(client, "admin_get_user", deleted_after_the_read)

    # When the role change goes on to change the sign-in
    reply = call("PATCH", "/orgs/acme/users/alice", {"role": "admin"})
    monkeypatch.undo()

    # Then it is 404, as for a user already gone (her sign-in went first), and nothing is left of alice
    assert (reply.status, reply.error_code) == (404, "not_found"), reply.body
    assert call("GET", "/orgs/acme/users/alice").status == 404
    assert _sign_in(pool, "acme.alice") is None


def test_a_role_change_whose_user_is_deleted_before_its_write_is_404_not_a_500(pool, monkeypatch):
    # Given alice, deleted (her sign-in, then her item) right after her role change changed the sign-in
    create_user("acme", "alice")
    directory = config.directory()
    set_attributes, deleted = directory.set_attributes, []

    def deleted_meanwhile(*args):
        set_attributes(*args)
        if not deleted:
            deleted.append(True)
            users.delete_user("acme", "alice")

    monkeypatch.setattr(directory, "set_attributes", deleted_meanwhile)

    # When the role change's write finds no user, and its sign-in's claim has nowhere to go back to
    reply = call("PATCH", "/orgs/acme/users/alice", {"role": "admin"})
    monkeypatch.undo()

    # Then it is 404, as for a user already gone, and nothing is left of alice
    assert (reply.status, reply.error_code) == (404, "not_found"), reply.body
    assert _sign_in(pool, "acme.alice") is None


def test_a_role_change_that_a_rename_overtakes_after_the_claim_changed_is_412_and_puts_the_claim_back(
    pool, monkeypatch
):
    # Given alice (version 1), renamed by someone else after her role change checked If-Match and
    # changed the sign-in's claim, before the table's write
    create_user("acme", "alice")
    directory = config.directory()
    set_attributes, renamed = directory.set_attributes, []

    def renamed_meanwhile(*args):
        set_attributes(*args)
        if not renamed:
            renamed.append(call("PATCH", "/orgs/acme/users/alice", {"name": "A2"}).status)

    monkeypatch.setattr(directory, "set_attributes", renamed_meanwhile)

    # When the role change's write meets the new version
    reply = call("PATCH", "/orgs/acme/users/alice", {"role": "admin"}, headers={"If-Match": ['"1"']})

    # Then it is 412, and the claim is put back: the token says what the table says
    assert renamed == [200]
    assert (reply.status, reply.error_code) == (412, "precondition_failed"), reply.body
    assert call("GET", "/orgs/acme/users/alice").body["role"] == "member"
    assert _sign_in(pool, "acme.alice")["custom:role"] == "member"


def test_an_email_change_that_another_overtakes_with_its_own_address_is_412_and_leaves_the_winners_address(
    pool, monkeypatch
):
    # Given alice (version 1), whose address another admin's change (no If-Match) sets to b@ after
    # this change checked If-Match and set a@ on the sign-in, before this change's write (a client's
    # resend of a slow PATCH meets it the same way)
    create_user("acme", "alice")
    directory = config.directory()
    set_attributes, overtaken = directory.set_attributes, []

    def overtaken_meanwhile(*args):
        set_attributes(*args)
        if not overtaken:
            overtaken.append("running")
            overtaken[0] = call("PATCH", "/orgs/acme/users/alice", {"email": "b@example.com"}).status

    monkeypatch.setattr(directory, "set_attributes", overtaken_meanwhile)

    # When this change's write meets the new version
    reply = call("PATCH", "/orgs/acme/users/alice", {"email": "a@example.com"}, headers={"If-Match": ['"1"']})

    # Then it is 412, and the sign-in keeps the address the table holds (the other change's), not
    # alice's first one: password resets go where the API says
    assert overtaken == [200]
    assert (reply.status, reply.error_code) == (412, "precondition_failed"), reply.body
    assert call("GET", "/orgs/acme/users/alice").body["email"] == "b@example.com"
    assert _sign_in(pool, "acme.alice")["email"] == "b@example.com"


def test_a_cognito_outage_reading_the_sign_in_is_503_and_changes_nothing(pool, monkeypatch):
    # Given alice, and Cognito failing on its side (5xx, after botocore's retries) when her sign-in is read
    create_user("acme", "alice")

    def failing(**_):
        error = {"Error": {"Code": "InternalErrorException", "Message": "injected"}}
        raise ClientError({**error, "ResponseMetadata": {"HTTPStatusCode": 500}}, "AdminGetUser")

    monkeypatch.setattr(config.directory().client, "admin_get_user", failing)

    # When an admin changes her role
    reply = call("PATCH", "/orgs/acme/users/alice", {"role": "admin"}, caller=admin())

    # Then a 503 to retry (not the 409 of a user without a sign-in), and neither side changed
    assert reply.status == 503 and reply.error_code == "service_unavailable"
    assert reply.headers["Retry-After"] == "1"
    monkeypatch.undo()
    assert _sign_in(pool, "acme.alice")["custom:role"] == "member"
    user = call("GET", "/orgs/acme/users/alice").body
    assert (user["role"], user["version"]) == ("member", 1)


def test_a_sign_in_returned_without_a_subject_leaves_no_user_and_the_next_create_replaces_it(pool, monkeypatch):
    # Given Cognito creating alice's sign-in but answering without its sub
    client = config.directory().client
    real = client.admin_create_user

    def without_sub(**request):
        created = real(**request)
        created["User"]["Attributes"] = [a for a in created["User"]["Attributes"] if a["Name"] != "sub"]
        return created

    monkeypatch.setattr(client, "admin_create_user", without_sub)

    # When alice is created
    reply = create_user("acme", "alice")

    # Then no user with a blank subject: a 500, no item, her seat given back
    assert reply.status == 500 and reply.body["error"]["code"] == "internal_error"
    assert call("GET", "/orgs/acme/users/alice").status == 404
    assert call("GET", "/orgs/acme").body["usage"]["users"] == 0
    monkeypatch.undo()
    assert create_user("acme", "alice").status == 201
    assert _stored_subject("alice") == _sign_in(pool, "acme.alice")["sub"]


def test_a_ticket_opened_for_a_user_whose_create_then_fails_goes_with_them(pool, monkeypatch):
    # Given alice's create, taken in the table, and a ticket opened for her (she is listed) while
    # Cognito is asked for her sign-in, which it refuses
    opened: list[int] = []

    def open_a_ticket_then_refuse(**_):
        opened.append(create_ticket("acme", "alice").status)
        raise ClientError({"Error": {"Code": "InvalidParameterException", "Message": "injected"}}, "AdminCreateUser")

    with monkeypatch.context() as cognito:
        cognito.setattr(config.directory().client, "admin_create_user", open_a_ticket_then_refuse)
        assert create_user("acme", "alice").status == 422
    assert opened == [201]

    # When a user of that id is created again
    assert create_user("acme", "alice").status == 201

    # Then the failed create's user went with her ticket: the new alice does not inherit it
    assert call("GET", "/orgs/acme/users/alice/tickets").body["items"] == []


def test_a_failed_create_whose_sweep_cannot_be_queued_still_takes_its_user_and_ticket_back(
    pool, deletions_queue, monkeypatch
):
    # Given alice's create, taken in the table, a ticket opened for her while Cognito is asked for her
    # sign-in, which it refuses, and the queue that would take her sweep failing too
    def open_a_ticket_then_refuse(**_):
        assert create_ticket("acme", "alice").status == 201
        raise ClientError({"Error": {"Code": "InvalidParameterException", "Message": "injected"}}, "AdminCreateUser")

    def queue_down(**_):
        raise ClientError({"Error": {"Code": "InternalError", "Message": "injected"}}, "SendMessage")

    with monkeypatch.context() as failing:
        failing.setattr(config.directory().client, "admin_create_user", open_a_ticket_then_refuse)
        failing.setattr(config.sqs(), "send_message", queue_down)
        reply = create_user("acme", "alice")

    # Then the create's own error is the answer, and alice went all the same, with her seat and her
    # ticket: nothing of a refused create stays
    assert (reply.status, reply.error_code) == (422, "validation_error"), reply.body
    assert call("GET", "/orgs/acme/users/alice").status == 404
    assert call("GET", "/orgs/acme").body["usage"]["users"] == 0
    assert create_user("acme", "alice").status == 201
    assert call("GET", "/orgs/acme/users/alice/tickets").body["items"] == []


def test_a_subject_stored_on_the_new_item_by_another_writer_gives_way_to_the_creates_own(pool, monkeypatch):
    # Given alice's create, whose item a concurrent `make sign-in-subjects` reads before her sign-in
    # exists and stores the subject of a sign-in left over by an earlier failed create of that name
    # (AdminGetUser found it), just before the create, which replaced that left-over, stores its own
    from controlplane.dal import keys, stamps
    from controlplane.dal.table import api_table

    new_sign_in = users._new_sign_in

    def backfilled_meanwhile(*args, **kwargs):
        subject = new_sign_in(*args, **kwargs)
        api_table().mark(keys.user_key("acme", "alice"), stamps.SIGN_IN_SUBJECT, "left-over-sub")
        return subject

    monkeypatch.setattr(users, "_new_sign_in", backfilled_meanwhile)

    # When the create ends
    reply = create_user("acme", "alice")

    # Then alice's item holds her own sign-in's subject, so her tokens pass the authorizer
    assert reply.status == 201, reply.body
    assert _stored_subject("alice") == _sign_in(pool, "acme.alice")["sub"]


def _left_in_the_table(org_id: str) -> list[dict]:
    """Every item stored under the org's partition (a deleted org leaves none)."""
    table = config.dynamodb()
    found = table.query(
        TableName=config.settings().table_name,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": f"ORG#{org_id}"}},
        ConsistentRead=True,
    )
    return found["Items"]


def test_a_create_whose_sign_in_is_made_after_its_orgs_whole_delete_leaves_no_sign_in(pool, monkeypatch):
    # Given bob's create, taken in the table before acme's delete mark; before it asks Cognito for his
    # sign-in, acme's whole delete runs (it lists the pool's sign-ins before bob's exists)
    client = config.directory().client
    real, deleted = client.admin_create_user, []

    def after_the_orgs_delete(**request):
        if not deleted:
            deleted.append(call("DELETE", "/orgs/acme").status)
        return real(**request)

    monkeypatch.setattr(client, "admin_create_user", after_the_orgs_delete)

    # When the create makes his sign-in
    reply = create_user("acme", "bob")
    monkeypatch.undo()

    # Then the create takes it back (its user is gone, so it cannot store its subject): no sign-in
    # and no item of acme outlives it
    assert deleted == [204]
    assert reply.status == 404, reply.body
    assert _sign_in(pool, "acme.bob") is None
    assert _left_in_the_table("acme") == []


def test_a_create_whose_sign_in_is_made_after_the_delete_passed_its_user_leaves_no_sign_in(pool, monkeypatch):
    import threading

    from controlplane.logic import cascade

    # Given bob's create, taken in the table before acme's delete mark, and acme's delete, which
    # removes bob's sign-in (none yet), then waits while the create makes it and stores its subject on
    # bob's item; then the delete deletes that item and lists the pool's sign-ins (bob's it removed)
    remove, taken, passed, stored = cascade.remove_sign_in, *(threading.Event() for _ in range(3))
    client, table_client = config.directory().client, config.dynamodb()
    create_sign_in, update_item = client.admin_create_user, table_client.update_item

    def then_wait(org_id, user_id):
        remove(org_id, user_id)
        passed.set()
        assert stored.wait(30)

    def after_the_delete_passed(**request):
        taken.set()
        assert passed.wait(30)
        return create_sign_in(**request)

    def then_let_it_go_on(**request):
        answer = update_item(**request)
        if "sign_in_sub" in str(request.get("ExpressionAttributeNames")):
            stored.set()
        return answer

    monkeypatch.setattr(cascade, "remove_sign_in", then_wait)
    monkeypatch.setattr(client, "admin_create_user", after_the_delete_passed)
    monkeypatch.setattr(table_client, "update_item", then_let_it_go_on)
    created: list = []
    creating = threading.Thread(target=lambda: created.append(create_user("acme", "bob")))

    # When the create runs, and the delete starts once the table took bob
    creating.start()
    assert taken.wait(30)
    deleted = call("DELETE", "/orgs/acme")
    creating.join(30)
    monkeypatch.undo()

    # Then the create, which reads its org after making the sign-in (being deleted: marked before the
    # delete removed any sign-in), took it back: no sign-in and no item of acme outlives it
    assert deleted.status == 204, deleted.body
    assert [reply.status for reply in created] == [201]  # bob was in acme before its delete began
    assert _sign_in(pool, "acme.bob") is None
    assert _left_in_the_table("acme") == []


def test_a_delete_run_overtaken_before_the_left_over_sign_ins_spares_the_org_created_again(pool, monkeypatch):
    from controlplane.dal.directory import Directory
    from controlplane.logic import cascade

    # Given acme's delete past its users, when another run of the delete finishes it, and acme is
    # created again with bob (and his sign-in), all before this run lists the org's sign-ins
    user_ids, overtaken = Directory.user_ids, []

    def overtaken_before_the_listing(self, org_id):
        if not overtaken:
            overtaken.append(True)
            assert cascade.continue_delete("acme", cascade.deletion_mark("acme")) is True
            assert create_org("acme").status == 201
            assert create_user("acme", "bob").status == 201
        return user_ids(self, org_id)

    create_user("acme", "alice")
    monkeypatch.setattr(Directory, "user_ids", overtaken_before_the_listing)

    # When this run goes on to the sign-ins no user item names
    assert cascade.delete_org("acme") is True

    # Then it stops at the org created again: bob keeps his sign-in
    assert overtaken == [True]
    assert _sign_in(pool, "acme.bob") is not None
