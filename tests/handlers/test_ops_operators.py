"""Operators' sign-ins are created in the operators group, and never with a dot in the username."""

import boto3
import pytest

from ops import operators

pytestmark = pytest.mark.parametrize("table", ["moto"], indirect=True)  # Cognito exists on moto only


@pytest.fixture
def pool(table):
    cognito = boto3.client("cognito-idp")
    pool_id = cognito.create_user_pool(PoolName="users")["UserPool"]["Id"]
    cognito.create_group(UserPoolId=pool_id, GroupName=operators.OPERATORS_GROUP)
    return cognito, pool_id


def test_an_operator_is_created_in_the_operators_group(pool):
    cognito, pool_id = pool

    subject = operators.create(cognito, pool_id, "ops-alice", "alice@example.com")

    groups = cognito.admin_list_groups_for_user(UserPoolId=pool_id, Username="ops-alice")["Groups"]
    assert [group["GroupName"] for group in groups] == ["operators"]
    assert subject


@pytest.mark.parametrize("username", ["acme.alice", "ops.alice", "", "with space"])
def test_a_username_that_breaks_the_naming_rule_is_refused_and_nothing_is_created(pool, username):
    cognito, pool_id = pool

    with pytest.raises(ValueError):
        operators.create(cognito, pool_id, username, "alice@example.com")

    assert cognito.list_users(UserPoolId=pool_id)["Users"] == []


def test_the_command_exits_2_with_the_reason(pool, capsys):
    _, pool_id = pool

    with pytest.raises(SystemExit) as exited:
        operators.main(["--user-pool-id", pool_id, "--username", "acme.alice", "--email", "a@example.com"])

    assert exited.value.code == 2
    assert "may not contain a dot" in capsys.readouterr().err


def test_a_run_again_after_the_group_add_failed_puts_the_operator_in_the_group(pool, monkeypatch):
    # Given a first run whose sign-in was made but whose group add failed
    cognito, pool_id = pool
    add = cognito.admin_add_user_to_group

    def fails(**kwargs):
        raise ConnectionError("injected: the group add failed")

    monkeypatch.setattr(cognito, "admin_add_user_to_group", fails)
    with pytest.raises(ConnectionError):
        operators.create(cognito, pool_id, "ops-alice", "alice@example.com")
    monkeypatch.setattr(cognito, "admin_add_user_to_group", add)

    # When it is run again, as the Makefile says is safe
    subject = operators.create(cognito, pool_id, "ops-alice", "alice@example.com")

    # Then the operator is in the group, one sign-in, the same subject
    groups = cognito.admin_list_groups_for_user(UserPoolId=pool_id, Username="ops-alice")["Groups"]
    assert [group["GroupName"] for group in groups] == ["operators"]
    assert [u["Username"] for u in cognito.list_users(UserPoolId=pool_id)["Users"]] == ["ops-alice"]
    assert subject


def test_a_username_taken_by_another_address_is_refused_and_not_made_an_operator(pool):
    cognito, pool_id = pool
    cognito.admin_create_user(
        UserPoolId=pool_id, Username="ops-bob", UserAttributes=[{"Name": "email", "Value": "bob@example.com"}]
    )

    with pytest.raises(ValueError, match="another e-mail"):
        operators.create(cognito, pool_id, "ops-bob", "mallory@example.com")

    assert cognito.admin_list_groups_for_user(UserPoolId=pool_id, Username="ops-bob")["Groups"] == []


@pytest.mark.parametrize("missing", ["--user-pool-id", "--username", "--email"])
def test_an_empty_pool_username_or_email_exits_2_without_a_request(pool, capsys, missing):
    # Given make operator's arguments with "" for one left off its command line (never the shell's
    # USERNAME or EMAIL; USER_POOL_ID forgotten, or an empty $POOL)
    cognito, pool_id = pool
    given = {"--user-pool-id": pool_id, "--username": "ops-alice", "--email": "a@example.com", missing: ""}

    # When the command runs
    with pytest.raises(SystemExit) as exited:
        operators.main([part for pair in given.items() for part in pair])

    # Then it exits 2 naming the empty option, not with botocore's traceback, and creates no one
    assert exited.value.code == 2
    assert f"{missing} is empty" in capsys.readouterr().err
    assert cognito.list_users(UserPoolId=pool_id)["Users"] == []
