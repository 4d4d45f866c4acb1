"""Lifecycle events: the stream, the bus and its archive, the events function's source mapping, its
on-failure queue and alarm, and its least privilege."""

import json

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from controlplane.lifecycle.contract import SOURCE
from infra.config import StageConfig
from infra.constants import EVENTS_BATCH_SIZE, EVENTS_RETRY_ATTEMPTS
from infra.stack import ControlPlaneStack


def _of_type(template: dict, resource_type: str) -> dict[str, dict]:
    return {k: r for k, r in template["Resources"].items() if r["Type"] == resource_type}


def _one(template: dict, resource_type: str) -> tuple[str, dict]:
    [(logical_id, resource)] = _of_type(template, resource_type).items()
    return logical_id, resource


def _events_function(template: dict) -> tuple[str, dict]:
    [(logical_id, resource)] = [
        (k, r)
        for k, r in _of_type(template, "AWS::Lambda::Function").items()
        if r["Properties"]["Handler"] == "events.handler.lambda_handler"
    ]
    return logical_id, resource


def _statements(template: dict, function: dict) -> list[dict]:
    role = {"Ref": function["Properties"]["Role"]["Fn::GetAtt"][0]}
    return [
        statement
        for policy in _of_type(template, "AWS::IAM::Policy").values()
        if role in policy["Properties"]["Roles"]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def _actions(statement: dict) -> list[str]:
    return [statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"]


def test_bus_is_named_for_the_stage_and_archived_for_30_days_by_default(dev):
    bus_id, bus = _one(dev, "AWS::Events::EventBus")
    _, archive = _one(dev, "AWS::Events::Archive")

    assert bus["Properties"]["Name"] == "controlplane-dev"
    assert archive["Properties"]["SourceArn"] == {"Fn::GetAtt": [bus_id, "Arn"]}
    assert archive["Properties"]["RetentionDays"] == 30
    assert archive["Properties"]["EventPattern"] == {"source": [SOURCE]}


def test_archive_names_no_key_of_its_own(dev):
    """EventBus.archive() writes ``KmsKeyIdentifier: ""`` (aws-cdk issue 38298: it drops the key it was
    given and renders the missing one as an empty string), which CloudFormation passes to
    CreateArchive as it is; a fix proposed for it reports that some regions answer an empty key with
    GeneralServiceException. The archive is encrypted with EventBridge's own key without one."""
    _, archive = _one(dev, "AWS::Events::Archive")

    assert "KmsKeyIdentifier" not in archive["Properties"]


def test_archive_retention_is_a_context_key(tmp_path):
    app = cdk.App(outdir=str(tmp_path), context={"stage": "qa", "events_archive_days": "90"})
    stack = ControlPlaneStack(app, config=StageConfig.from_context(app.node))

    _, archive = _one(Template.from_stack(stack).to_json(), "AWS::Events::Archive")

    assert archive["Properties"]["RetentionDays"] == 90


def test_archive_retention_below_a_day_is_refused():
    with pytest.raises(ValueError, match="events_archive_days"):
        StageConfig(events_archive_days=0)


@pytest.mark.parametrize(
    ("key", "refusal"),
    [
        ("events_archive_days", "at least 1"),
        ("activity_retention_days", "at least 1"),
        ("account_rps_limit", "below the"),
        ("waf_rate_limit", "at least"),
    ],
)
@pytest.mark.parametrize("given", [0, "0"])
def test_a_zero_in_cdk_json_or_on_the_command_line_is_refused_not_taken_for_the_default(key, refusal, given):
    # cdk.json holds a JSON 0; -c key=0 gives the string: both are a setting (and a wrong one), not an absence
    with pytest.raises(ValueError, match=refusal):
        StageConfig.from_context(cdk.App(context={key: given}).node)


def test_events_function_reads_the_stream_with_partial_batch_responses_bisect_and_an_on_failure_queue(dev):
    function_id, function = _events_function(dev)
    [mapping] = [
        m
        for m in _of_type(dev, "AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == {"Ref": function_id}
    ]
    table_id, _ = _one(dev, "AWS::DynamoDB::Table")
    queues = _of_type(dev, "AWS::SQS::Queue")

    properties = mapping["Properties"]
    assert properties["FunctionName"] == {"Ref": function_id}
    assert properties["EventSourceArn"] == {"Fn::GetAtt": [table_id, "StreamArn"]}
    assert properties["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert properties["BisectBatchOnFunctionError"] is True
    assert properties["BatchSize"] == EVENTS_BATCH_SIZE
    assert properties["MaximumRetryAttempts"] == EVENTS_RETRY_ATTEMPTS
    assert 60 <= properties["MaximumRecordAgeInSeconds"] < 24 * 3600  # inside the stream's retention
    assert properties["StartingPosition"] == "TRIM_HORIZON"
    destination = properties["DestinationConfig"]["OnFailure"]["Destination"]
    [failures_id] = [k for k in queues if destination == {"Fn::GetAtt": [k, "Arn"]}]
    assert function["Properties"]["Environment"]["Variables"]["EVENT_BUS_NAME"] == {
        "Ref": _one(dev, "AWS::Events::EventBus")[0]
    }
    assert "CURSOR_SECRET_ARN" not in function["Properties"]["Environment"]["Variables"]  # never reads it
    alarms = [
        alarm["Properties"]
        for alarm in _of_type(dev, "AWS::CloudWatch::Alarm").values()
        if {"Name": "QueueName", "Value": {"Fn::GetAtt": [failures_id, "QueueName"]}}
        in alarm["Properties"]["Dimensions"]
    ]
    assert [(a["MetricName"], a["Threshold"]) for a in alarms] == [("ApproximateNumberOfMessagesVisible", 1)]


def test_only_the_resources_records_reach_the_events_function_never_the_activity_logs(dev):
    function_id, function = _events_function(dev)
    [mapping] = [
        m
        for m in _of_type(dev, "AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == {"Ref": function_id}
    ]

    patterns = [json.loads(f["Pattern"]) for f in mapping["Properties"]["FilterCriteria"]["Filters"]]

    resources = {"S": ["org", "user", "ticket", "unit"]}
    assert patterns == [
        {"dynamodb": {"NewImage": {"entity": resources}}},
        {"dynamodb": {"OldImage": {"entity": resources}}},
    ]
    assert function["Properties"]["Environment"]["Variables"]["ACTIVITY_RETENTION_DAYS"] == "90"


def test_activity_retention_is_a_context_key(tmp_path):
    app = cdk.App(outdir=str(tmp_path), context={"stage": "qa", "activity_retention_days": "400"})
    stack = ControlPlaneStack(app, config=StageConfig.from_context(app.node))

    _, function = _events_function(Template.from_stack(stack).to_json())

    assert function["Properties"]["Environment"]["Variables"]["ACTIVITY_RETENTION_DAYS"] == "400"


def test_activity_retention_below_a_day_is_refused():
    with pytest.raises(ValueError, match="activity_retention_days"):
        StageConfig(activity_retention_days=0)


def test_events_function_may_put_events_on_its_bus_read_its_tables_stream_get_items_and_batch_write_only(dev):
    _, function = _events_function(dev)
    bus_id, _ = _one(dev, "AWS::Events::EventBus")
    table_id, _ = _one(dev, "AWS::DynamoDB::Table")

    granted = {}
    for statement in _statements(dev, function):
        assert statement["Effect"] == "Allow"
        for action in _actions(statement):
            granted.setdefault(action, []).append(statement["Resource"])

    assert granted.pop("events:PutEvents") == [{"Fn::GetAtt": [bus_id, "Arn"]}]
    assert granted.pop("dynamodb:ListStreams") == ["*"]  # takes no resource
    stream = {"Fn::GetAtt": [table_id, "StreamArn"]}
    for action in ("dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"):
        assert granted.pop(action) == [stream]
    [item_resources] = granted.pop("dynamodb:GetItem")
    assert item_resources == {"Fn::GetAtt": [table_id, "Arn"]}  # the table, never its indexes: it queries none
    assert granted.pop("dynamodb:BatchWriteItem") == [item_resources]  # the activity log, in the same grant
    assert {k for k in granted if not k.startswith(("xray:", "sqs:"))} == set()
    assert not [k for k in granted if k.startswith("dynamodb:") or k.startswith("events:")]
