"""Revocations: a rule on the lifecycle bus sends the events that change access
(controlplane.lifecycle.access) to a queue; the revocations function flushes the stage's authorizer
cache, so a suspension, a reactivation, a deleted user or a demotion takes effect within seconds,
not the cache's TTL, and again a few seconds later (a message it queues for itself: the
function's docstring says why). Its grants: that flush, on this stage, and sending to its own queue.
A message that keeps failing lands in a dead-end queue with its alarm."""

from aws_cdk import Aws, Duration, RemovalPolicy
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from constructs import Construct

from controlplane.lifecycle.access import ACCESS_CHANGES
from infra.constants import (
    REVOCATIONS_BATCH_SIZE,
    REVOCATIONS_FUNCTION,
    REVOCATIONS_MAX_CONCURRENCY,
    REVOCATIONS_MAX_RECEIVE_COUNT,
    TIMEOUT,
)
from infra.dead_end import events_queue
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
        queue = events_queue(
            self,
            bus=bus,
            rule_id="AccessChanges",
            rule_description="Suspensions, reactivations, deletions and role changes: flush the authorizer cache",
            detail_types=list(ACCESS_CHANGES),
            visibility_timeout=Duration.seconds(2 * TIMEOUT.to_seconds()),
            max_receive_count=REVOCATIONS_MAX_RECEIVE_COUNT,
            dead_end_description="The authorizer cache could not be flushed after a change of access: cached "
            "decisions lived out their TTL instead (authorizer_ttl_seconds). Check the revocations function's logs.",
            removal_policy=removal_policy,
        )
        consumer = ControlPlaneFunction(
            self,
            "Function",
            name=REVOCATIONS_FUNCTION,
            layers=layers,
            environment={
                **environment,
                "REST_API_ID": api.rest_api_id,
                "STAGE": api.deployment_stage.stage_name,
                "QUEUE_URL": queue.queue_url,  # each flush's second, delayed, is a message to itself
            },
            removal_policy=removal_policy,
        )
        self.function = consumer.function
        consumer.target.add_event_source(
            event_sources.SqsEventSource(
                queue, batch_size=REVOCATIONS_BATCH_SIZE, max_concurrency=REVOCATIONS_MAX_CONCURRENCY
            )
        )
        queue.grant_send_messages(self.function)
        # API Gateway's control API has no grant_* in the CDK: the one call functions/revocations makes.
        iam.Grant.add_to_principal(grantee=self.function, actions=["apigateway:DELETE"], resource_arns=[flush_arn(api)])
