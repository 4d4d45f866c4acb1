"""A dead end: a queue where whatever arrives needs a person (a dead-letter queue, an on-failure
destination), and the alarm that goes off as soon as one message is there."""

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.constants import DEAD_LETTER_RETENTION


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
