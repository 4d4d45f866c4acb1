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
