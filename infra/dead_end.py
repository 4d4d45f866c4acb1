"""A dead end: a queue where whatever arrives needs a person (a dead-letter queue, an on-failure
destination), and the alarm that goes off as soon as one message is there; and the queue of a bus's
events that a consumer reads, with its dead end."""

from aws_cdk import Acknowledgment, Duration, RemovalPolicy, Validations
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from controlplane.lifecycle.contract import SOURCE
from infra.constants import DEAD_LETTER_RETENTION, RULE_MAX_EVENT_AGE, RULE_RETRY_ATTEMPTS


def dead_end_queue(
    scope: Construct, construct_id: str, *, alarm_id: str, alarm_description: str, removal_policy: RemovalPolicy
) -> sqs.Queue:
    queue = sqs.Queue(
        scope,
        construct_id,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        retention_period=DEAD_LETTER_RETENTION,
        removal_policy=removal_policy,
    )
    cloudwatch.Alarm(
        scope,
        alarm_id,
        alarm_description=alarm_description,
        metric=queue.metric_approximate_number_of_messages_visible(
            period=Duration.minutes(5), statistic=cloudwatch.Stats.MAXIMUM
        ),
        threshold=1,
        comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluation_periods=1,
        treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
    )
    return queue


def events_queue(
    scope: Construct,
    *,
    bus: events.IEventBus,
    rule_id: str,
    rule_description: str,
    detail_types: list[str],
    visibility_timeout: Duration,
    max_receive_count: int,
    dead_end_description: str,
    removal_policy: RemovalPolicy,
) -> sqs.Queue:
    """The bus's lifecycle events of ``detail_types``, queued for a consumer ("Queue", by the rule
    ``rule_id``), and their dead end ("DeadLetters", with its alarm): a message the consumer gave up
    on lands there, and so does an event EventBridge could not deliver to the queue (retried for a
    day), where the same alarm sees it. CDK adds the queue policy that lets this rule, and only it,
    send there."""
    name = scope.node.id
    dead_letters = dead_end_queue(
        scope,
        "DeadLetters",
        alarm_id="DeadLettersAlarm",
        alarm_description=dead_end_description,
        removal_policy=removal_policy,
    )
    Validations.of(dead_letters).acknowledge(
        Acknowledgment(id="AwsSolutions-SQS3", reason=f"This queue is itself the {name} queue's dead end.")
    )
    queue = sqs.Queue(
        scope,
        "Queue",
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        visibility_timeout=visibility_timeout,
        dead_letter_queue=sqs.DeadLetterQueue(queue=dead_letters, max_receive_count=max_receive_count),
        removal_policy=removal_policy,
    )
    events.Rule(
        scope,
        rule_id,
        event_bus=bus,
        description=rule_description,
        event_pattern=events.EventPattern(source=[SOURCE], detail_type=detail_types),
        targets=[
            targets.SqsQueue(
                queue,
                dead_letter_queue=dead_letters,
                retry_attempts=RULE_RETRY_ATTEMPTS,
                max_event_age=RULE_MAX_EVENT_AGE,
            )
        ],
    )
    return queue
