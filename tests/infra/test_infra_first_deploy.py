"""What a first `cdk deploy` in a fresh region needs, and what it leaves behind: API Gateway's account
role for the access logs, an app client Cognito accepts, alarms that notify someone, prod resources a
failed first create does not keep (but never one it cannot delete), SnapStart only where Lambda has it,
and the share of a new account's Lambda concurrency the queue consumers may take, as the docs state it."""

import json
import re

import aws_cdk as cdk
import pytest
from cfnlint.api import lint
from cfnlint.helpers import REGIONS

from infra.config import StageConfig
from infra.constants import SNAP_START_REGIONS
from local import ROOT

PUSH_TO_CLOUDWATCH = ":iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs"
# A region cfn-lint knows where Lambda has no SnapStart (cfn-lint's E2530)
REGION_WITHOUT_SNAP_START = sorted(set(REGIONS) - SNAP_START_REGIONS - {"cn-north-1", "cn-northwest-1"})[0]


def _of_type(template: dict, resource_type: str) -> dict[str, dict]:
    return {k: r for k, r in template["Resources"].items() if r["Type"] == resource_type}


def test_the_stack_sets_the_accounts_cloudwatch_role_before_the_stage_logs(dev):
    # Given the dev template (api_gateway_account_role unset: on)
    [(account_id, account)] = _of_type(dev, "AWS::ApiGateway::Account").items()
    [stage] = _of_type(dev, "AWS::ApiGateway::Stage").values()
    role_id = account["Properties"]["CloudWatchRoleArn"]["Fn::GetAtt"][0]
    role = dev["Resources"][role_id]

    # Then the stage, which writes access logs, is created after the account names a role
    assert stage["Properties"]["AccessLogSetting"]["DestinationArn"]
    assert account_id in stage["DependsOn"]
    # that API Gateway may assume, allowed to write logs
    assert role["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]["Principal"] == {
        "Service": "apigateway.amazonaws.com"
    }
    assert PUSH_TO_CLOUDWATCH in str(role["Properties"]["ManagedPolicyArns"])
    # and both outlive the stack: the account's setting does
    assert account["DeletionPolicy"] == role["DeletionPolicy"] == "Retain"


def test_a_region_whose_role_is_set_elsewhere_keeps_it(templates):
    shared = templates["shared"].to_json()

    assert not _of_type(shared, "AWS::ApiGateway::Account")
    assert PUSH_TO_CLOUDWATCH not in str(_of_type(shared, "AWS::IAM::Role"))


@pytest.mark.parametrize(
    ("context", "expected"),
    [({}, True), ({"api_gateway_account_role": "false"}, False), ({"api_gateway_account_role": True}, True)],
)
def test_api_gateway_account_role_context_key(context, expected):
    assert StageConfig.from_context(cdk.App(context=context).node).api_gateway_account_role is expected


def test_every_app_client_may_write_every_attribute_the_pool_requires(dev):
    # CreateUserPoolClient refuses a client that cannot write a required attribute
    [pool] = _of_type(dev, "AWS::Cognito::UserPool").values()
    clients = _of_type(dev, "AWS::Cognito::UserPoolClient")
    required = {attribute["Name"] for attribute in pool["Properties"]["Schema"] if attribute.get("Required")}

    assert required == {"email"}
    assert len(clients) == 2  # the API's and the console's
    for client_id, client in clients.items():
        assert required <= set(client["Properties"]["WriteAttributes"]), client_id


@pytest.mark.parametrize("stage", ["dev", "prod", "shared"])
def test_every_alarm_notifies_the_alarm_topic_when_it_fires_and_recovers(templates, stage):
    template = templates[stage].to_json()
    [topic_id] = _of_type(template, "AWS::SNS::Topic")
    alarms = _of_type(template, "AWS::CloudWatch::Alarm")

    assert len(alarms) >= 2  # the deletions' dead letters and the events' failures
    for alarm in alarms.values():
        assert alarm["Properties"]["AlarmActions"] == [{"Ref": topic_id}]
        assert alarm["Properties"]["OKActions"] == [{"Ref": topic_id}]
    assert template["Outputs"]["AlarmTopicArn"]["Value"] == {"Ref": topic_id}


def test_alarm_email_subscribes_to_the_topic_and_none_subscribes_nobody(templates):
    [subscription] = _of_type(templates["shared"].to_json(), "AWS::SNS::Subscription").values()

    assert subscription["Properties"]["Protocol"] == "email"
    assert subscription["Properties"]["Endpoint"] == "ops@example.com"
    assert not _of_type(templates["dev"].to_json(), "AWS::SNS::Subscription")


def test_an_alarm_email_that_is_not_an_address_is_refused():
    with pytest.raises(ValueError, match="alarm_email"):
        StageConfig.from_context(cdk.App(context={"alarm_email": "ops at example"}).node)


def test_prod_keeps_its_data_on_delete_but_not_after_a_failed_first_create(prod):
    # RETAIN would also keep what a rolled-back first create made
    kept = ("AWS::Logs::LogGroup", "AWS::SQS::Queue")
    for resource_type in kept:
        resources = _of_type(prod, resource_type).values()
        assert resources
        assert {r["DeletionPolicy"] for r in resources} == {"RetainExceptOnCreate"}, resource_type
        assert {r["UpdateReplacePolicy"] for r in resources} == {"Retain"}, resource_type


def _deletion_protected(resource: dict) -> bool:
    properties = resource.get("Properties", {})
    return properties.get("DeletionProtectionEnabled") is True or properties.get("DeletionProtection") == "ACTIVE"


def test_a_rolled_back_first_create_never_has_to_delete_what_is_deletion_protected(prod):
    # Given prod's deletion-protected resources: DeleteTable and DeleteUserPool refuse them ("Resource
    # cannot be deleted as it is currently protected against deletion"; Cognito's InvalidParameterException)
    protected = {k: r for k, r in prod["Resources"].items() if _deletion_protected(r)}
    assert {r["Type"] for r in protected.values()} == {"AWS::DynamoDB::Table", "AWS::Cognito::UserPool"}

    # Then a first create that rolls back (a new account's CloudFront refusal, say) skips them: under
    # RetainExceptOnCreate it would try to delete them, fail (ROLLBACK_FAILED), and `cdk deploy`, which
    # deletes such a stack before trying again, would fail the same way. Kept, they are in nobody's way
    # (generated names), and outlive a delete or a replacement as the rest of prod's data does.
    for logical_id, resource in protected.items():
        assert resource["DeletionPolicy"] == "Retain", logical_id
        assert resource["UpdateReplacePolicy"] == "Retain", logical_id


def test_snap_start_defaults_off_in_a_region_without_it():
    assert StageConfig(stage="prod", region="eu-west-1").snap_start_enabled is True
    assert StageConfig(stage="prod", region=REGION_WITHOUT_SNAP_START).snap_start_enabled is False
    assert StageConfig(stage="prod").snap_start_enabled is True  # region unknown: the template checks it


def test_snap_start_asked_for_in_a_region_without_it_is_refused_with_the_way_out():
    with pytest.raises(ValueError, match=rf"not available in {REGION_WITHOUT_SNAP_START}.*snap_start=false"):
        StageConfig(stage="prod", snap_start=True, region=REGION_WITHOUT_SNAP_START)


def test_the_cli_region_is_read_from_cdk_default_region(monkeypatch):
    monkeypatch.setenv("CDK_DEFAULT_REGION", REGION_WITHOUT_SNAP_START)

    config = StageConfig.from_context(cdk.App(context={"stage": "prod"}).node)

    assert config.region == REGION_WITHOUT_SNAP_START
    assert config.snap_start_enabled is False


def test_a_snap_start_template_refuses_regions_without_it_before_creating_anything(prod, dev):
    # Given prod (SnapStart on) synthesized without a region: the rule holds the regions cfn-lint knows
    [assertion] = prod["Rules"]["SnapStartRegion"]["Assertions"]
    regions, region = assertion["Assert"]["Fn::Contains"]

    assert set(regions) == SNAP_START_REGIONS
    assert region == {"Ref": "AWS::Region"}
    assert "snap_start=false" in assertion["AssertDescription"]
    assert "SnapStartRegion" not in dev.get("Rules", {})
    # and cfn-lint, whose list it is, flags SnapStart in a region outside it
    matches = lint(json.dumps(prod), regions=[REGION_WITHOUT_SNAP_START])
    assert "E2530" in {match.rule.id for match in matches}


def test_operations_states_how_much_of_a_new_accounts_concurrency_the_queue_consumers_may_take(dev):
    # Given the queue consumers' event sources: each may run up to its maximum concurrency at once
    mappings = _of_type(dev, "AWS::Lambda::EventSourceMapping").values()
    consumers = sum(m["Properties"].get("ScalingConfig", {}).get("MaximumConcurrency", 0) for m in mappings)

    # Then docs/OPERATIONS.md, which tells a new account (as few as 10 at once) to check its quota, says that many
    operations = (ROOT / "docs" / "OPERATIONS.md").read_text()
    [stated] = re.findall(r"the queue consumers may take up to\s+\*\*(\d+)\*\*", operations)
    assert consumers == int(stated)


@pytest.mark.parametrize("stage", ["paws", "amazon", "newcognito"])
def test_a_stage_the_sign_in_domain_cannot_carry_is_refused_at_synth(stage):
    # Cognito refuses a domain prefix with a reserved word ("Domain cannot contain reserved word: aws"),
    # and the console's prefix is controlplane-<stage>-<account>: a deploy would fail halfway and roll back
    with pytest.raises(ValueError, match=rf"stage {stage!r}.*aws, amazon or cognito"):
        StageConfig(stage=stage)


def test_the_sign_in_domain_prefix_carries_the_stage_and_nothing_reserved(dev, prod):
    for template, stage in ((dev, "dev"), (prod, "prod")):
        [domain] = _of_type(template, "AWS::Cognito::UserPoolDomain").values()
        prefix = domain["Properties"]["Domain"]["Fn::Join"][1][0]

        assert prefix == f"controlplane-{stage}-"
        assert not any(word in prefix for word in ("aws", "amazon", "cognito"))


@pytest.mark.parametrize("stage", ["dev", "prod"])
def test_cdk_destroy_leaves_no_log_group_lambda_made_and_no_kms_key(templates, stage):
    # Given every function of the stack, the console's deployment handler (CDK's) included
    template = templates[stage].to_json()
    log_groups = _of_type(template, "AWS::Logs::LogGroup")

    # Then each logs to a log group of the stack (Lambda makes no /aws/lambda/<name> outside it), and
    # the stack makes no KMS key to wait out a deletion window (docs/OPERATIONS.md, what destroy leaves)
    for logical_id, function in _of_type(template, "AWS::Lambda::Function").items():
        assert function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"] in log_groups, logical_id
    assert not _of_type(template, "AWS::KMS::Key")
