"""The deletions queue: encrypted, TLS only, a dead-letter queue with an alarm, consumed by the
organizations function one message at a time with partial batch failures; fed, besides the functions,
by a rule on the lifecycle bus: an org's status changes, which start its sign-ins jobs."""

import pytest

from controlplane.dal import keys
from controlplane.lifecycle.contract import KINDS, SOURCE
from controlplane.logic import import_job, signins


def _queues(template: dict) -> tuple[str, dict, str, dict]:
    """(id, properties) of the deletions queue and of its dead-letter queue."""
    queues = {k: r["Properties"] for k, r in template["Resources"].items() if r["Type"] == "AWS::SQS::Queue"}
    # (The tenant-keys and revocations queues have their own tests.)
    [queue_id] = [k for k, p in queues.items() if "RedrivePolicy" in p and k.startswith("Deletions")]
    dead_letters_arn = queues[queue_id]["RedrivePolicy"]["deadLetterTargetArn"]
    [dead_letters_id] = [k for k in queues if dead_letters_arn == {"Fn::GetAtt": [k, "Arn"]}]
    return queue_id, queues[queue_id], dead_letters_id, queues[dead_letters_id]


def _of_type(template: dict, resource_type: str) -> list[dict]:
    return [r["Properties"] for r in template["Resources"].values() if r["Type"] == resource_type]


def test_failed_messages_move_to_the_dead_letter_queue_after_five_receives(dev):
    _, queue, dead_letters_id, dead_letters = _queues(dev)

    assert queue["RedrivePolicy"] == {
        "deadLetterTargetArn": {"Fn::GetAtt": [dead_letters_id, "Arn"]},
        "maxReceiveCount": 5,
    }
    assert dead_letters["MessageRetentionPeriod"] == 14 * 24 * 60 * 60


def test_a_message_is_invisible_for_six_times_the_functions_timeout(dev, functions):
    _, queue, _, _ = _queues(dev)
    timeout = dev["Resources"][functions["organizations"]]["Properties"]["Timeout"]

    assert queue["VisibilityTimeout"] >= 6 * timeout


def test_both_queues_are_encrypted_and_refuse_requests_without_tls(dev):
    queue_id, queue, dead_letters_id, dead_letters = _queues(dev)
    policies = {
        tuple(q["Ref"] for q in p["Queues"]): p["PolicyDocument"] for p in _of_type(dev, "AWS::SQS::QueuePolicy")
    }

    for logical_id, properties in ((queue_id, queue), (dead_letters_id, dead_letters)):
        assert properties["SqsManagedSseEnabled"] is True  # not KMS: EventBridge may send to it
        [statement] = [s for s in policies[(logical_id,)]["Statement"] if s["Effect"] == "Deny"]
        assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_organizations_function_consumes_the_queue_one_message_at_a_time_reporting_failures(dev, functions):
    queue_id, _, _, _ = _queues(dev)

    [mapping] = [
        mapping
        for mapping in _of_type(dev, "AWS::Lambda::EventSourceMapping")
        if mapping["EventSourceArn"] == {"Fn::GetAtt": [queue_id, "Arn"]}
    ]

    assert mapping["EventSourceArn"] == {"Fn::GetAtt": [queue_id, "Arn"]}
    assert mapping["FunctionName"] == {"Ref": functions["organizations"]}
    assert mapping["BatchSize"] == 1
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]  # process_partial_response


def test_at_most_4_of_the_queues_jobs_run_at_once_so_imports_leave_cognito_room(dev):
    # Given each user import's job creates 10 sign-ins a second, of Cognito's 50 UserCreation a second
    queue_id, _, _, _ = _queues(dev)
    [mapping] = [
        m
        for m in _of_type(dev, "AWS::Lambda::EventSourceMapping")
        if m["EventSourceArn"] == {"Fn::GetAtt": [queue_id, "Arn"]}
    ]

    # Then the queue runs at most 4 jobs at once: 40 a second, and interactive creates keep 10
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": 4}
    assert 4 * import_job.IMPORT_SIGNINS_PER_SECOND < import_job.USER_CREATION_PER_SECOND


def test_an_alarm_goes_off_when_a_message_reaches_the_dead_letter_queue(dev):
    _, _, dead_letters_id, _ = _queues(dev)

    [alarm] = [
        alarm
        for alarm in _of_type(dev, "AWS::CloudWatch::Alarm")
        if {"Fn::GetAtt": [dead_letters_id, "QueueName"]} in [d["Value"] for d in alarm["Dimensions"]]
    ]

    assert (alarm["Namespace"], alarm["MetricName"]) == ("AWS/SQS", "ApproximateNumberOfMessagesVisible")
    assert alarm["Dimensions"] == [{"Name": "QueueName", "Value": {"Fn::GetAtt": [dead_letters_id, "QueueName"]}}]
    assert (alarm["ComparisonOperator"], alarm["Threshold"]) == ("GreaterThanOrEqualToThreshold", 1)
    assert alarm["TreatMissingData"] == "notBreaching"


@pytest.mark.parametrize("stage", ["dev", "prod"])
def test_queues_are_retained_only_in_prod(templates, stage):
    body = templates[stage].to_json()
    queues = [r for r in body["Resources"].values() if r["Type"] == "AWS::SQS::Queue"]

    assert {queue["DeletionPolicy"] for queue in queues} == {"RetainExceptOnCreate" if stage == "prod" else "Delete"}


def _status_rule(template: dict) -> tuple[str, dict]:
    [(rule_id, rule)] = [
        (k, r["Properties"])
        for k, r in template["Resources"].items()
        if r["Type"] == "AWS::Events::Rule" and k.startswith("DeletionsStatusChanges")
    ]
    return rule_id, rule


def test_an_orgs_status_transitions_on_the_bus_go_to_the_deletions_queue_to_start_its_sign_ins_job(dev):
    # Given the org's status transitions, as the contract names them
    queue_id, _, dead_letters_id, _ = _queues(dev)
    [org] = [kind for kind in KINDS if kind.entity == keys.ORG]
    transitions = [t.detail_type for t in org.transitions if t.field == "status"]
    [bus_id] = [k for k, r in dev["Resources"].items() if r["Type"] == "AWS::Events::EventBus"]

    # Then a rule on the lifecycle bus sends exactly them to the deletions queue, and what it cannot
    # deliver to the queue's dead end, whose alarm sees it
    _, rule = _status_rule(dev)
    assert rule["EventBusName"] == {"Ref": bus_id}
    assert rule["EventPattern"] == {"source": [SOURCE], "detail-type": transitions}
    assert set(transitions) == set(signins.events()) and len(transitions) == 2
    [target] = rule["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": [queue_id, "Arn"]}
    assert target["DeadLetterConfig"] == {"Arn": {"Fn::GetAtt": [dead_letters_id, "Arn"]}}
    assert target["RetryPolicy"] == {"MaximumEventAgeInSeconds": 24 * 60 * 60, "MaximumRetryAttempts": 185}


def test_only_that_rule_may_send_to_the_deletions_queue_and_its_dead_end_from_eventbridge(dev):
    queue_id, _, dead_letters_id, _ = _queues(dev)
    rule_id, _ = _status_rule(dev)
    policies = {
        tuple(q["Ref"] for q in p["Queues"]): p["PolicyDocument"] for p in _of_type(dev, "AWS::SQS::QueuePolicy")
    }

    for logical_id in (queue_id, dead_letters_id):
        [allowed] = [s for s in policies[(logical_id,)]["Statement"] if s["Effect"] == "Allow"]
        assert allowed["Principal"] == {"Service": "events.amazonaws.com"}
        assert allowed["Condition"] == {"ArnEquals": {"aws:SourceArn": {"Fn::GetAtt": [rule_id, "Arn"]}}}
        assert "sqs:SendMessage" in allowed["Action"]
