"""The tenant-keys consumer: a rule on the lifecycle bus sends the org events to a queue, the
tenantkeys function puts each org's API key in its plan's usage plan (controlplane.logic.tenant_keys).
A message that keeps failing lands in a dead-end queue with its alarm."""

from aws_cdk import Acknowledgment, Aws, CfnOutput, Duration, RemovalPolicy, Stack, Validations
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from controlplane.logic.tenant_keys import EVENTS
from infra.constants import (
    DYNAMODB_ACTIONS,
    TENANT_KEY_SECRET_LENGTH,
    TENANT_KEYS_BATCH_SIZE,
    TENANT_KEYS_FUNCTION,
    TENANT_KEYS_MAX_CONCURRENCY,
    TENANT_KEYS_MAX_RECEIVE_COUNT,
    TIMEOUT,
)
from infra.dead_end import events_queue
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
        usage_plans: dict[str, apigw.UsagePlan],
        key_name_prefix: str,
        layers: list[lambda_.ILayerVersion],
        environment: dict[str, str],
        removal_policy: RemovalPolicy,
    ) -> None:
        super().__init__(scope, construct_id)
        # HMAC key of the tenants' key values (controlplane.dal.tenant_keys); the authorizer reads it too.
        # Kept where the stack's data is kept (prod): the keys it derived outlive the stack (they are
        # made outside CloudFormation), and without it their values could not be told apart.
        self.secret = secretsmanager.Secret(
            self,
            "Secret",
            description="HMAC key that derives each org's API Gateway key value from its org id",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=TENANT_KEY_SECRET_LENGTH, exclude_punctuation=True
            ),
            removal_policy=removal_policy,
        )
        Validations.of(self.secret).acknowledge(
            Acknowledgment(
                id="AwsSolutions-SMG4",
                reason="Rotating it changes every org's key value: that needs every key re-created first.",
            )
        )
        queue = events_queue(
            self,
            bus=bus,
            rule_id="OrgEvents",
            rule_description="Org creations, plan changes and deletions, for the tenants' API keys",
            detail_types=list(EVENTS),
            visibility_timeout=Duration.seconds(6 * TIMEOUT.to_seconds()),
            max_receive_count=TENANT_KEYS_MAX_RECEIVE_COUNT,
            dead_end_description="An org's API key could not be put in its usage plan: its requests are answered "
            "503 until it is. Redrive the message to the tenant-keys queue once the cause is fixed.",
            removal_policy=removal_policy,
        )
        consumer = ControlPlaneFunction(
            self,
            "Function",
            name=TENANT_KEYS_FUNCTION,
            layers=layers,
            environment={
                **environment,
                "TENANT_KEY_SECRET_ARN": self.secret.secret_arn,
                "USAGE_PLAN_IDS": Stack.of(self).to_json_string(
                    {plan: usage_plan.usage_plan_id for plan, usage_plan in usage_plans.items()}
                ),
                "API_KEY_NAME_PREFIX": key_name_prefix,
            },
            removal_policy=removal_policy,
        )
        self.function = consumer.function
        consumer.target.add_event_source(
            event_sources.SqsEventSource(
                queue,
                batch_size=TENANT_KEYS_BATCH_SIZE,
                max_concurrency=TENANT_KEYS_MAX_CONCURRENCY,
                report_batch_item_failures=True,
            )
        )
        # ops.tenant_keys (make tenant-keys-backfill) reads the consumer's settings from its environment.
        CfnOutput(
            Stack.of(self),
            "TenantKeysFunctionName",
            value=self.function.function_name,
            description="The tenant-keys consumer: make tenant-keys-backfill reads its settings",
        )
        data.grant(self.function, *DYNAMODB_ACTIONS[TENANT_KEYS_FUNCTION])
        self.secret.grant_read(self.function)
        self._grant_control_api(usage_plans)

    def _grant_control_api(self, usage_plans: dict[str, apigw.UsagePlan]) -> None:
        """API Gateway's control API has no grant_* in the CDK: these are exactly the calls of
        controlplane.dal.api_keys (tests/infra/test_infra_permissions.py checks them), on the account's
        keys, whose ids API Gateway makes when the consumer creates them, and on this stack's usage
        plans' key lists only: never another stack's plans, nor a plan itself."""
        apigateway = f"arn:{Aws.PARTITION}:apigateway:{Aws.REGION}::"
        plan_ids = [usage_plan.usage_plan_id for usage_plan in usage_plans.values()]
        for methods, resources in (
            (["GET", "POST"], ["/apikeys"]),  # GetApiKeys (by name, with values), CreateApiKey
            (["DELETE"], ["/apikeys/*"]),  # DeleteApiKey
            (["GET"], ["/usageplans"]),  # GetUsagePlans (keyId=...): where a key is
            (["POST"], [f"/usageplans/{plan_id}/keys" for plan_id in plan_ids]),  # CreateUsagePlanKey
            (["DELETE"], [f"/usageplans/{plan_id}/keys/*" for plan_id in plan_ids]),  # DeleteUsagePlanKey
        ):
            iam.Grant.add_to_principal(
                grantee=self.function,
                actions=[f"apigateway:{method}" for method in methods],
                resource_arns=[f"{apigateway}{resource}" for resource in resources],
            )
        stack = Stack.of(self)
        Validations.of(self.function).acknowledge(
            Acknowledgment(
                id="AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/apikeys/*]",
                reason="DeleteApiKey of an org's key, whose id API Gateway makes when the consumer creates it. "
                "API keys have no tags or names in IAM's resource, so no narrower ARN exists.",
            ),
            *(
                Acknowledgment(
                    id="AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/usageplans/"
                    f"<{stack.get_logical_id(usage_plan.node.default_child)}>/keys/*]",
                    reason="DeleteUsagePlanKey of an org's key (its id made at run time) from one of this "
                    "stack's usage plans, when its plan changes.",
                )
                for usage_plan in usage_plans.values()
            ),
        )
