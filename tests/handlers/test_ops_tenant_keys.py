"""ops.tenant_keys on moto: the backfill puts every org's derived key in its plan (orgs older than
the consumer, keys of a lost secret, keys of orgs gone), the cleanup deletes a destroyed stack's keys."""

import io
import json
import zipfile

import boto3
import pytest

from controlplane.dal import tenant_keys
from controlplane.dal.api_keys import ApiKeys, key_name_prefix
from controlplane.dal.table import api_table
from ops import tenant_keys as ops
from tests.api import call, create_org

pytestmark = pytest.mark.parametrize("table", ["moto"], indirect=True)  # moto's API Gateway, CloudFormation, Lambda
STACK = "ControlPlane-test"
PREFIX = key_name_prefix(STACK)


class Waits:
    def __init__(self) -> None:
        self.count = 0

    def wait(self) -> None:
        self.count += 1


@pytest.fixture
def keyring(table, monkeypatch) -> ApiKeys:
    client = boto3.client("apigateway")
    plans = {plan: client.create_usage_plan(name=f"{STACK}-{plan}")["id"] for plan in ("free", "pro", "enterprise")}
    monkeypatch.setenv("TENANT_KEY_SECRET", "backfill-test-secret")
    tenant_keys.reset()
    yield ApiKeys(client, plans, PREFIX)
    tenant_keys.reset()


@pytest.fixture
def calls(keyring) -> list[str]:
    recorded: list[str] = []
    keyring.client.meta.events.register(
        "before-send.api-gateway", lambda event_name, **_: recorded.append(event_name.rsplit(".", 1)[-1])
    )
    return recorded


def _keys(keyring: ApiKeys) -> dict[str, tuple[str, list[str]]]:
    """Org -> (its key's value, the plans whose usage plan holds it), for every key of the prefix."""
    found = {}
    for key in keyring.client.get_api_keys(includeValues=True)["items"]:
        if key["name"].startswith(PREFIX):
            plans = [
                plan
                for plan, plan_id in keyring.usage_plans.items()
                if any(k["id"] == key["id"] for k in keyring.client.get_usage_plan_keys(usagePlanId=plan_id)["items"])
            ]
            found[key["name"].removeprefix(PREFIX)] = (key["value"], plans)
    return found


def _stale_key(keyring: ApiKeys, org_id: str, plan: str) -> None:
    key_id = keyring.client.create_api_key(name=PREFIX + org_id, value=f"{org_id}-lost-secret-value-0000")["id"]
    keyring.client.create_usage_plan_key(usagePlanId=keyring.usage_plans[plan], keyId=key_id, keyType="API_KEY")


@pytest.fixture
def before_the_consumer(keyring) -> ApiKeys:
    """acme (pro) and bolt (free) with no key; core (enterprise) with a key of a lost secret; a key of
    ghost, an org that is gone."""
    create_org("acme", plan="pro")
    create_org("bolt")
    create_org("core", plan="enterprise")
    _stale_key(keyring, "core", "free")
    _stale_key(keyring, "ghost", "pro")
    return keyring


def test_backfill_puts_each_orgs_derived_key_in_its_plan_and_deletes_the_gone_orgs(before_the_consumer):
    keyring = before_the_consumer

    done = ops.backfill(api_table(), keyring, pace=Waits().wait, echo=lambda _: None)

    assert done == {"acme": "pro", "bolt": "free", "core": "enterprise", "ghost": "deleted"}
    assert _keys(keyring) == {
        "acme": (tenant_keys.tenant_key("acme"), ["pro"]),
        "bolt": (tenant_keys.tenant_key("bolt"), ["free"]),
        "core": (tenant_keys.tenant_key("core"), ["enterprise"]),
    }


def test_backfill_again_reads_only_and_follows_a_plan_change(before_the_consumer, calls):
    keyring = before_the_consumer
    ops.backfill(api_table(), keyring, pace=Waits().wait, echo=lambda _: None)
    call("PATCH", "/orgs/bolt", {"plan": "pro"})
    calls.clear()

    ops.backfill(api_table(), keyring, pace=Waits().wait, echo=lambda _: None)

    assert _keys(keyring)["bolt"] == (tenant_keys.tenant_key("bolt"), ["pro"])
    assert "CreateApiKey" not in calls and "DeleteApiKey" not in calls
    assert calls.count("DeleteUsagePlanKey") == calls.count("CreateUsagePlanKey") == 1  # bolt's move only


def test_backfill_takes_one_org_per_wait(before_the_consumer):
    waits = Waits()

    ops.backfill(api_table(), before_the_consumer, pace=waits.wait, echo=lambda _: None)

    assert waits.count == 4


def test_cleanup_deletes_the_stacks_keys_and_no_other(keyring):
    _stale_key(keyring, "acme", "pro")
    _stale_key(keyring, "bolt", "free")
    other = keyring.client.create_api_key(name=key_name_prefix("ControlPlane-prod") + "acme")["id"]

    deleted = ops.cleanup(keyring, echo=lambda _: None)

    assert sorted(deleted) == [PREFIX + "acme", PREFIX + "bolt"]
    assert [k["id"] for k in keyring.client.get_api_keys()["items"]] == [other]


def _deploy(outputs: dict[str, str]) -> None:
    template = {
        "Resources": {"Queue": {"Type": "AWS::SQS::Queue"}},
        "Outputs": {name: {"Value": value} for name, value in outputs.items()},
    }
    boto3.client("cloudformation").create_stack(StackName=STACK, TemplateBody=json.dumps(template))


def test_cleanup_refuses_while_the_stack_exists_and_deletes_nothing(keyring):
    _stale_key(keyring, "acme", "pro")
    _deploy({})

    assert ops.main(["cleanup", "--stack", STACK]) == 1

    assert list(keyring.names())


def test_cleanup_runs_once_the_stack_is_deleted(keyring):
    _stale_key(keyring, "acme", "pro")
    _deploy({})
    boto3.client("cloudformation").delete_stack(StackName=STACK)

    assert ops.main(["cleanup", "--stack", STACK, "--writes-per-second", "5"]) == 0

    assert list(keyring.names()) == []


def test_the_backfill_reads_its_settings_from_the_consumers_environment(table):
    # Given a stack whose output names the consumer, and the consumer's environment
    environment = {name: f"{name.lower()}-value" for name in ops.CONSUMER_SETTINGS} | {"LOG_LEVEL": "INFO"}
    role = boto3.client("iam").create_role(RoleName="consumer", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as archive:
        archive.writestr("handler.py", "")
    boto3.client("lambda").create_function(
        FunctionName="consumer",
        Runtime="python3.12",
        Role=role,
        Handler="tenantkeys.handler.lambda_handler",
        Code={"ZipFile": code.getvalue()},
        Environment={"Variables": environment},
    )
    _deploy({ops.CONSUMER_OUTPUT: "consumer"})

    # When reading them
    settings = ops.consumer_settings(boto3.client("cloudformation"), boto3.client("lambda"), STACK)

    # Then it has the consumer's four settings, and nothing else of its environment
    assert settings == {name: f"{name.lower()}-value" for name in ops.CONSUMER_SETTINGS}


def test_the_backfill_refuses_a_stack_without_the_consumers_output(table):
    _deploy({})

    with pytest.raises(SystemExit, match="no output TenantKeysFunctionName"):
        ops.consumer_settings(boto3.client("cloudformation"), boto3.client("lambda"), STACK)


def test_the_backfill_names_a_stack_that_does_not_exist_without_a_traceback(table):
    # Given no stack of that name (a mistyped STAGE)
    # When the backfill runs
    with pytest.raises(SystemExit) as exited:
        ops.main(["backfill", "--stack", "ControlPlane-prd"])

    # Then it exits with one line naming the stack, not botocore's ClientError
    assert "ControlPlane-prd: no such stack" in str(exited.value.code)


def test_writes_per_second_above_the_accounts_quota_is_refused(table, capsys):
    with pytest.raises(SystemExit):
        ops.main(["cleanup", "--stack", STACK, "--writes-per-second", "6"])

    assert "at most 5.0" in capsys.readouterr().err
