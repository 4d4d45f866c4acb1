"""Lifecycle events: the table's stream, the events function, the bus ``controlplane-<stage>`` and its
archive, and the on-failure queue with its alarm (controlplane.lifecycle.contract has the contract)."""

from aws_cdk import Acknowledgment, Duration, RemovalPolicy, Validations
from aws_cdk import aws_events as events
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from constructs import Construct

from controlplane.lifecycle import activity
from controlplane.lifecycle.contract import SOURCE
from infra.constants import (
    DYNAMODB_ACTIONS,
    EVENT_BUS_PREFIX,
    EVENTS_BATCH_SIZE,
    EVENTS_FUNCTION,
    EVENTS_MAX_RECORD_AGE,
    EVENTS_RETRY_ATTEMPTS,
)
from infra.dead_end import dead_end_queue
from infra.function import ControlPlaneFunction
from infra.table import ControlPlaneTable


class LifecycleEvents(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        stage: str,
        archive_days: int,
        activity_retention_days: int,
        data: ControlPlaneTable,
        layers: list[lambda_.ILayerVersion],
        environment: dict[str, str],
        removal_policy: RemovalPolicy,
        snap_start: bool = False,
    ) -> None:
        super().__init__(scope, construct_id)
        self.bus = events.EventBus(self, "Bus", event_bus_name=f"{EVENT_BUS_PREFIX}-{stage}")
        archive = self.bus.archive(
            "Archive",
            description="Every lifecycle event, for replay",
            event_pattern=events.EventPattern(source=[SOURCE]),
            retention=Duration.days(archive_days),
        )
        # archive() renders the key it does not pass on as KmsKeyIdentifier "" (aws-cdk issue 38298),
        # which some regions refuse; without the property EventBridge encrypts with its own key.
        archive.node.default_child.add_property_deletion_override("KmsKeyIdentifier")
        self.failures = dead_end_queue(
            self,
            "Failures",
            alarm_id="FailuresAlarm",
            alarm_description="Lifecycle events could not be published: the application plane missed changes. "
            "The message names the stream records; publish them again before the stream drops them (24 h).",
            removal_policy=removal_policy,
        )
        Validations.of(self.failures).acknowledge(
            Acknowledgment(
                id="AwsSolutions-SQS3",
                reason="This queue is itself the dead end: Lambda's on-failure destination for stream records "
                "that could not be published. It holds their position in the stream, for a person to replay.",
            )
        )
        events_function = ControlPlaneFunction(
            self,
            "Function",
            name=EVENTS_FUNCTION,
            layers=layers,
            environment={
                **environment,
                "EVENT_BUS_NAME": self.bus.event_bus_name,
                "ACTIVITY_RETENTION_DAYS": str(activity_retention_days),
            },
            removal_policy=removal_policy,
            snap_start=snap_start,
        )
        self.function = events_function.function
        events_function.target.add_event_source(
            event_sources.DynamoEventSource(
                data.table,
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=EVENTS_BATCH_SIZE,
                bisect_batch_on_error=True,
                retry_attempts=EVENTS_RETRY_ATTEMPTS,
                max_record_age=EVENTS_MAX_RECORD_AGE,
                report_batch_item_failures=True,
                on_failure=event_sources.SqsDlq(self.failures),
                # Only the resources' records: the activity log's own items send nothing, invoke nothing.
                filters=activity.filter_criteria(),
            )
        )
        Validations.of(self.function).acknowledge(
            Acknowledgment(
                id="AwsSolutions-IAM5[Resource::*]",
                reason="dynamodb:ListStreams takes no resource; the stream's own actions are granted on this "
                "table's stream only. Active tracing's X-Ray actions take no resource either.",
            )
        )
        self.bus.grant_put_events_to(self.function)
        data.grant(self.function, *DYNAMODB_ACTIONS[EVENTS_FUNCTION])
