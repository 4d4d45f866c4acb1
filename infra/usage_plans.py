"""One API Gateway usage plan per plan of the catalogue (controlplane.models.plans), and the
operators' own, on the API's stage; the operators' key, whose value is a generated secret."""

from aws_cdk import Acknowledgment, RemovalPolicy, Validations
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from controlplane.models import plans
from infra.constants import OPERATORS_KEY_LENGTH


class UsagePlans(Construct):
    def __init__(
        self, scope: Construct, construct_id: str, *, api: apigw.RestApi, prefix: str, removal_policy: RemovalPolicy
    ) -> None:
        super().__init__(scope, construct_id)
        self.plans: dict[str, apigw.UsagePlan] = {}
        for plan, limits in plans.usage_plans().items():
            quota = apigw.QuotaSettings(limit=limits.per_day, period=apigw.Period.DAY) if limits.per_day else None
            self.plans[plan] = api.add_usage_plan(
                plan.capitalize(),
                name=f"{prefix}-{plan}",
                description=f"Each org on the {plan} plan has its own key here: the limits are per org",
                throttle=apigw.ThrottleSettings(rate_limit=limits.per_second, burst_limit=limits.burst),
                quota=quota,
                api_stages=[apigw.UsagePlanPerApiStage(api=api, stage=api.deployment_stage)],
            )
        # The operators' key: the stack makes it, so operators can create the first org. Its value is
        # this secret (a dynamic reference, never in the template); the authorizer reads it.
        self.operators_key_secret = secretsmanager.Secret(
            self,
            "OperatorsKeyValue",
            description="Value of the operators' API Gateway usage plan key (returned by the authorizer)",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=OPERATORS_KEY_LENGTH, exclude_punctuation=True
            ),
            removal_policy=removal_policy,  # kept with the stack's data (prod), as the tenants' key secret
        )
        operators_key = apigw.ApiKey(
            self,
            "OperatorsKey",
            api_key_name=f"{prefix}/operators",
            value=self.operators_key_secret.secret_value.unsafe_unwrap(),
        )
        self.plans[plans.OPERATORS].add_api_key(operators_key)
        Validations.of(self.operators_key_secret).acknowledge(
            Acknowledgment(
                id="AwsSolutions-SMG4",
                reason="Not a credential: with the key source AUTHORIZER no client can present a key. "
                "Rotating it would need the API key and the authorizers' cached copy to change together.",
            )
        )

    @property
    def tenants(self) -> dict[str, apigw.UsagePlan]:
        """Plan -> usage plan, the catalogue's only: the tenant-keys consumer's, never the operators'."""
        return {plan: usage_plan for plan, usage_plan in self.plans.items() if plan in plans.CATALOGUE}
