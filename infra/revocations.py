"""Revocations: a rule on the lifecycle bus sends the events that change access
(controlplane.lifecycle.access) to a queue; the revocations function flushes the stage's authorizer
cache, so a suspension, a reactivation, a deleted user or a demotion takes effect within seconds,
not the cache's TTL. Its one grant: that flush, on this stage. A message that keeps failing lands in
a dead-end queue with its alarm."""

from aws_cdk import Acknowledgment, Aws, Duration, RemovalPolicy, Validations
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from controlplane.lifecycle.access import ACCESS_CHANGES
from controlplane.lifecycle.contract import SOURCE
from infra.constants import (
    REVOCATIONS_BATCH_SIZE,
    REVOCATIONS_FUNCTION,
    REVOCATIONS_MAX_CONCURRENCY,
    REVOCATIONS_MAX_RECEIVE_COUNT,
    TENANT_KEYS_RULE_MAX_EVENT_AGE,
    TENANT_KEYS_RULE_RETRY_ATTEMPTS,
    TIMEOUT,
)
from infra.dead_end import dead_end_queue
from infra.function import ControlPlaneFunction


def flush_arn(api: apigw.RestApi) -> str:
    """FlushStageAuthorizersCache is ``DELETE /restapis/{id}/stages/{stage}/cache/authorizers``: IAM
    authorizes it as ``apigateway:DELETE`` on that path."""
    stage = api.deployment_stage.stage_name
    return f"arn:{Aws.PARTITION}:apigateway:{Aws.REGION}::/restapis/{api.rest_api_id}/stages/{stage}/cache/authorizers"


class Revocations(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        bus: events.IEventBus,
        api: apigw.RestApi,
        layers: list[lambda_.ILayerVersion],
        environment: dict[str, str],
        removal_policy: RemovalPolicy,
    ) -> None:
        super().__init__(scope, construct_id)
        dead_letters = dead_end_queue(
            self,
            "DeadLetters",
            alarm_id="DeadLettersAlarm",
            alarm_description="The authorizer cache could not be flushed after a change of access: cached "
            "decisions lived out their TTL instead (authorizer_ttl_seconds). Check the revocations function's logs.",
            removal_policy=removal_policy,
        )
        Validations.of(dead_letters).acknowledge(
            Acknowledgment(id="AwsSolutions-SQS3", reason="This queue is itself the revocations queue's dead end.")
        )
        queue = sqs.Queue(
            self,
            "Queue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            visibility_timeout=Duration.seconds(2 * TIMEOUT.to_seconds()),
            dead_letter_queue=sqs.DeadLetterQueue(queue=dead_letters, max_receive_count=REVOCATIONS_MAX_RECEIVE_COUNT),
            removal_policy=removal_policy,
        )
        events.Rule(
            self,
            "AccessChanges",
            event_bus=bus,
            description="Suspensions, reactivations, deletions and role changes: flush the authorizer cache",
            event_pattern=events.EventPattern(source=[SOURCE], detail_type=list(ACCESS_CHANGES)),
            targets=[
                targets.SqsQueue(
                    queue,
                    dead_letter_queue=dead_letters,
                    retry_attempts=TENANT_KEYS_RULE_RETRY_ATTEMPTS,
                    max_event_age=TENANT_KEYS_RULE_MAX_EVENT_AGE,
                )
            ],
        )
        consumer = ControlPlaneFunction(
            self,
            "Function",
            name=REVOCATIONS_FUNCTION,
            layers=layers,
            environment={**environment, "REST_API_ID": api.rest_api_id, "STAGE": api.deployment_stage.stage_name},
            removal_policy=removal_policy,
        )
        self.function = consumer.function
        consumer.target.add_event_source(
            event_sources.SqsEventSource(
                queue, batch_size=REVOCATIONS_BATCH_SIZE, max_concurrency=REVOCATIONS_MAX_CONCURRENCY
            )
        )
        # API Gateway's control API has no grant_* in the CDK: the one call functions/revocations makes.
        iam.Grant.add_to_principal(grantee=self.function, actions=["apigateway:DELETE"], resource_arns=[flush_arn(api)])
