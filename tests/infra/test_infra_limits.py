"""The plans' request limits in the stack: usage plans equal to the catalogue, the operators' key,
the API's key source, and the tenant-keys consumer with its queue, dead end and grants."""

import json

from controlplane.dal import api_keys, keys
from controlplane.lifecycle.contract import DETAILS, KINDS, SOURCE
from controlplane.logic.tenant_keys import EVENTS
from controlplane.models import plans
from infra.constants import TIMEOUT
from ops import tenant_keys as ops_tenant_keys


def _resources_of(template: dict, resource_type: str) -> dict[str, dict]:
    return {k: r for k, r in template["Resources"].items() if r["Type"] == resource_type}


def test_usage_plans_equal_the_catalogue_and_the_operators_plan(dev):
    usage_plans = {
        r["Properties"]["UsagePlanName"].rsplit("-", 1)[-1]: r["Properties"]
        for r in _resources_of(dev, "AWS::ApiGateway::UsagePlan").values()
    }

    found = {
        plan: plans.RequestLimits(
            per_second=p["Throttle"]["RateLimit"],
            burst=p["Throttle"]["BurstLimit"],
            per_day=p["Quota"]["Limit"] if "Quota" in p else None,
        )
        for plan, p in usage_plans.items()
    }
    assert found == plans.usage_plans()
    for properties in usage_plans.values():
        assert properties.get("Quota", {"Period": "DAY"})["Period"] == "DAY"
        [stage] = properties["ApiStages"]
        assert stage["Stage"] == {"Ref": next(iter(_resources_of(dev, "AWS::ApiGateway::Stage")))}


def test_the_api_takes_keys_from_the_authorizer_only(dev):
    [api] = _resources_of(dev, "AWS::ApiGateway::RestApi").values()

    assert api["Properties"]["ApiKeySourceType"] == "AUTHORIZER"


def test_the_operators_key_is_in_the_operators_plan_with_a_secret_value(dev):
    [key_id] = _resources_of(dev, "AWS::ApiGateway::ApiKey")
    [membership] = _resources_of(dev, "AWS::ApiGateway::UsagePlanKey").values()
    operators_plan = next(
        k
        for k, r in _resources_of(dev, "AWS::ApiGateway::UsagePlan").items()
        if r["Properties"]["UsagePlanName"].endswith("-operators")
    )

    assert membership["Properties"] == {
        "KeyId": {"Ref": key_id},
        "KeyType": "API_KEY",
        "UsagePlanId": {"Ref": operators_plan},
    }
    value = json.dumps(dev["Resources"][key_id]["Properties"]["Value"])
    assert "resolve:secretsmanager" in value  # a dynamic reference: the value never sits in the template


def test_org_events_reach_the_consumer_through_a_queue_with_a_dead_end(dev):
    queue_id, rule = _consumer_queue_and_rule(dev)

    # The rule asks for what the contract publishes of an org: its creation, plan change and deletion
    org = next(kind for kind in KINDS if kind.entity == keys.ORG)
    wanted = [org.created, org.changed, org.deleted]
    assert rule["EventPattern"] == {"source": [SOURCE], "detail-type": wanted}
    assert set(wanted) <= set(DETAILS)  # each a detail-type the events function really sends
    assert list(EVENTS) == wanted  # and the consumer acts on those very events
    queue = dev["Resources"][queue_id]["Properties"]
    assert queue["RedrivePolicy"]["maxReceiveCount"] >= 3
    dead_end = queue["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
    alarms = [
        a["Properties"]
        for a in _resources_of(dev, "AWS::CloudWatch::Alarm").values()
        if {"Name": "QueueName", "Value": {"Fn::GetAtt": [dead_end, "QueueName"]}} in a["Properties"]["Dimensions"]
    ]
    assert len(alarms) == 1 and alarms[0]["Threshold"] == 1
    [mapping] = [
        m["Properties"]
        for m in _resources_of(dev, "AWS::Lambda::EventSourceMapping").values()
        if m["Properties"].get("EventSourceArn") == {"Fn::GetAtt": [queue_id, "Arn"]}
    ]
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_the_consumer_knows_each_plans_usage_plan(dev):
    [consumer] = [
        f["Properties"]
        for f in _resources_of(dev, "AWS::Lambda::Function").values()
        if f["Properties"].get("Handler") == "tenantkeys.handler.lambda_handler"
    ]
    variables = consumer["Environment"]["Variables"]

    assert {"TABLE_NAME", "TENANT_KEY_SECRET_ARN", "USAGE_PLAN_IDS", "API_KEY_NAME_PREFIX"} <= set(variables)
    assert variables["API_KEY_NAME_PREFIX"] == "ControlPlane-dev/org/"
    rendered = json.dumps(variables["USAGE_PLAN_IDS"])
    assert all(f'\\"{plan}\\"' in rendered for plan in plans.CATALOGUE)
    assert plans.OPERATORS not in rendered  # the consumer never touches the operators' plan


def _consumer_queue_and_rule(template: dict) -> tuple[str, dict]:
    """The queue the tenant-keys consumer reads, and the one rule that fills it (found by where
    events go, not by what the rule asks for)."""
    [consumer] = [
        name
        for name, f in _resources_of(template, "AWS::Lambda::Function").items()
        if f["Properties"].get("Handler") == "tenantkeys.handler.lambda_handler"
    ]
    [queue_id] = [
        m["Properties"]["EventSourceArn"]["Fn::GetAtt"][0]
        for m in _resources_of(template, "AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == {"Ref": consumer}
    ]
    [rule] = [
        r["Properties"]
        for r in _resources_of(template, "AWS::Events::Rule").values()
        if any(t["Arn"] == {"Fn::GetAtt": [queue_id, "Arn"]} for t in r["Properties"].get("Targets", []))
    ]
    return queue_id, rule


def test_an_event_the_rule_cannot_deliver_is_retried_for_a_day_then_dead_ends_where_the_alarm_sees_it(dev):
    queue_id, rule = _consumer_queue_and_rule(dev)
    [target] = rule["Targets"]
    dead_end = dev["Resources"][queue_id]["Properties"]["RedrivePolicy"]["deadLetterTargetArn"]

    assert target["DeadLetterConfig"] == {"Arn": dead_end}  # the consumer's own dead end, with its alarm
    assert target["RetryPolicy"] == {"MaximumRetryAttempts": 185, "MaximumEventAgeInSeconds": 86400}
    # And the dead end's policy lets EventBridge send there for this rule only
    rule_id = next(k for k, r in _resources_of(dev, "AWS::Events::Rule").items() if r["Properties"] == rule)
    [policy] = [
        p["Properties"]
        for p in _resources_of(dev, "AWS::SQS::QueuePolicy").values()
        if {"Ref": dead_end["Fn::GetAtt"][0]} in p["Properties"]["Queues"]
    ]
    [allow] = [s for s in policy["PolicyDocument"]["Statement"] if s["Effect"] == "Allow"]
    assert allow["Principal"] == {"Service": "events.amazonaws.com"} and allow["Action"] == "sqs:SendMessage"
    assert allow["Condition"] == {"ArnEquals": {"aws:SourceArn": {"Fn::GetAtt": [rule_id, "Arn"]}}}


def test_at_most_two_consumers_pace_their_key_writes_under_the_accounts_five_a_second(dev):
    # CreateApiKey and DeleteApiKey: 5 a second per account; the consumers and a backfill together stay under
    queue_id, _ = _consumer_queue_and_rule(dev)
    [mapping] = [
        m["Properties"]
        for m in _resources_of(dev, "AWS::Lambda::EventSourceMapping").values()
        if m["Properties"].get("EventSourceArn") == {"Fn::GetAtt": [queue_id, "Arn"]}
    ]

    concurrency = mapping["ScalingConfig"]["MaximumConcurrency"]
    assert concurrency == 2
    assert concurrency * api_keys.WRITES_PER_SECOND + ops_tenant_keys.WRITES_PER_SECOND <= 5
    # A batch's paced writes (a delete and a create per message at most) fit well inside the timeout
    assert 2 * mapping["BatchSize"] / api_keys.WRITES_PER_SECOND <= TIMEOUT.to_seconds() / 2


def _secrets(template: dict) -> dict[str, str]:
    """Description -> deletion policy of the tenant-key and operators' key secrets."""
    return {
        r["Properties"]["Description"]: r.get("DeletionPolicy", "Delete")
        for r in _resources_of(template, "AWS::SecretsManager::Secret").values()
        if "API Gateway key value" in r["Properties"]["Description"]
        or "operators' API Gateway usage plan key" in r["Properties"]["Description"]
    }


def test_the_key_secrets_outlive_a_deleted_prod_stack_and_go_with_a_dev_one(dev, prod):
    assert len(_secrets(prod)) == 2
    assert set(_secrets(prod).values()) <= {"Retain", "RetainExceptOnCreate"}
    assert set(_secrets(dev).values()) == {"Delete"}


def test_the_stack_names_the_consumer_for_the_backfill(dev):
    consumer = next(
        k
        for k, r in _resources_of(dev, "AWS::Lambda::Function").items()
        if r["Properties"].get("Handler") == "tenantkeys.handler.lambda_handler"
    )

    assert dev["Outputs"][ops_tenant_keys.CONSUMER_OUTPUT]["Value"] == {"Ref": consumer}
