"""The tenant-keys consumer: a rule on the lifecycle bus sends the org events to a queue, the
tenantkeys function puts each org's API key in its plan's usage plan (controlplane.logic.tenant_keys).
A message that keeps failing lands in a dead-end queue with its alarm."""

from aws_cdk import Acknowledgment, Aws, Duration, RemovalPolicy, Stack, Validations
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from controlplane.lifecycle.contract import SOURCE
from controlplane.logic.tenant_keys import EVENTS
from infra.constants import (
    DYNAMODB_ACTIONS,
    TENANT_KEY_SECRET_LENGTH,
    TENANT_KEYS_BATCH_SIZE,
    TENANT_KEYS_FUNCTION,
    TENANT_KEYS_MAX_RECEIVE_COUNT,
    TIMEOUT,
)
from infra.dead_end import dead_end_queue
from infra.function import ControlPlaneFunction
from infra.table import ControlPlaneTable


class TenantKeys(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        bus: events.IEventBus,
        data: ControlPlaneTable,
        usage_plan_ids: dict[str, str],
        key_name_prefix: str,
        layers: list[lambda_.ILayerVersion],
        environment: dict[str, str],
        removal_policy: RemovalPolicy,
    ) -> None:
        super().__init__(scope, construct_id)
        # HMAC key of the tenants' key values (controlplane.http.tenant_keys); the authorizer reads it too.
        self.secret = secretsmanager.Secret(
            self,
            "Secret",
            description="HMAC key that derives each org's API Gateway key value from its org id",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=TENANT_KEY_SECRET_LENGTH, exclude_punctuation=True
            ),
        )
        Validations.of(self.secret).acknowledge(
            Acknowledgment(
                id="AwsSolutions-SMG4",
                reason="Rotating it changes every org's key value: that needs every key re-created first.",
            )
        )
        dead_letters = dead_end_queue(
            self,
            "DeadLetters",
            alarm_id="DeadLettersAlarm",
            alarm_description="An org's API key could not be put in its usage plan: its requests are answered 503 "
            "until it is. Redrive the message to the tenant-keys queue once the cause is fixed.",
            removal_policy=removal_policy,
        )
        Validations.of(dead_letters).acknowledge(
            Acknowledgment(id="AwsSolutions-SQS3", reason="This queue is itself the tenant-keys queue's dead end.")
        )
        queue = sqs.Queue(
            self,
            "Queue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            visibility_timeout=Duration.seconds(6 * TIMEOUT.to_seconds()),
            dead_letter_queue=sqs.DeadLetterQueue(queue=dead_letters, max_receive_count=TENANT_KEYS_MAX_RECEIVE_COUNT),
            removal_policy=removal_policy,
        )
        events.Rule(
            self,
            "OrgEvents",
            event_bus=bus,
            description="Org creations, plan changes and deletions, for the tenants' API keys",
            event_pattern=events.EventPattern(source=[SOURCE], detail_type=list(EVENTS)),
            targets=[targets.SqsQueue(queue)],
        )
        consumer = ControlPlaneFunction(
            self,
            "Function",
            name=TENANT_KEYS_FUNCTION,
            layers=layers,
            environment={
                **environment,
                "TENANT_KEY_SECRET_ARN": self.secret.secret_arn,
                "USAGE_PLAN_IDS": Stack.of(self).to_json_string(usage_plan_ids),
                "API_KEY_NAME_PREFIX": key_name_prefix,
            },
            removal_policy=removal_policy,
        )
        self.function = consumer.function
        consumer.target.add_event_source(
            event_sources.SqsEventSource(queue, batch_size=TENANT_KEYS_BATCH_SIZE, report_batch_item_failures=True)
        )
        data.grant(self.function, *DYNAMODB_ACTIONS[TENANT_KEYS_FUNCTION])
        self.secret.grant_read(self.function)
        # API Gateway's control API has no grant_* in the CDK: these are the calls of
        # controlplane.dal.api_keys, on the account's keys and usage plans' key lists.
        apigateway = f"arn:{Aws.PARTITION}:apigateway:{Aws.REGION}::"
        iam.Grant.add_to_principal(
            grantee=self.function,
            actions=["apigateway:GET", "apigateway:POST", "apigateway:DELETE"],
            resource_arns=[
                f"{apigateway}/apikeys",
                f"{apigateway}/apikeys/*",
                f"{apigateway}/usageplans",
                f"{apigateway}/usageplans/*",
            ],
        )
        Validations.of(self.function).acknowledge(
            Acknowledgment(
                id="AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/apikeys/*]",
                reason="API Gateway makes an org's key id when the consumer creates the key: unknown at deploy.",
            ),
            Acknowledgment(
                id="AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/usageplans/*]",
                reason="Adds and removes keys of usage plans (/usageplans/<id>/keys/<key id>); the code only "
                "touches the ids in USAGE_PLAN_IDS. Narrowing to them needs their logical ids in the finding.",
            ),
        )
