"""The control plane's stack: the table, the cursor secret, the user pool, the deletions queue, the three
API functions and the REST API, the lifecycle events (stream, events function, bus), and the console."""

from aws_cdk import (
    Acknowledgment,
    Aspects,
    Aws,
    CfnOutput,
    CfnRule,
    CfnRuleAssertion,
    Fn,
    RemovalPolicy,
    Stack,
    Validations,
)
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from controlplane.dal import api_keys
from controlplane.http.routes import FUNCTIONS, ORGANIZATIONS, USERS
from infra.alarms import AlarmTopic, NotifyOnAlarm
from infra.api import Api
from infra.authorizer import ApiAuthorizer
from infra.config import StageConfig
from infra.console import Console
from infra.constants import (
    COGNITO_ACTIONS,
    CURSOR_SECRET_LENGTH,
    DYNAMODB_ACTIONS,
    LOG_LEVEL,
    METRICS_NAMESPACE,
    SERVICE_NAME,
    SNAP_START_REGIONS,
)
from infra.deletions import DeletionsQueue
from infra.events import LifecycleEvents
from infra.function import ControlPlaneFunction, powertools_layer
from infra.identity import Identity
from infra.revocations import Revocations
from infra.table import ControlPlaneTable
from infra.tenant_keys import TenantKeys
from infra.usage_plans import UsagePlans
from infra.waf import RateLimit


class ControlPlaneStack(Stack):
    def __init__(self, scope: Construct, *, config: StageConfig, **kwargs) -> None:
        super().__init__(scope, config.stack_name, **kwargs)
        # Not RETAIN: that also keeps what a failed first create rolls back, leaving it for a person.
        removal_policy = RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE if config.protected else RemovalPolicy.DESTROY
        # Except the deletion-protected table and user pool: CloudFormation cannot delete them, so the
        # rollback of a failed first create would fail on them (ROLLBACK_FAILED), and so would the stack
        # delete with which `cdk deploy` starts its next attempt. Kept, they are empty and in nobody's way.
        protected_policy = RemovalPolicy.RETAIN if config.protected else RemovalPolicy.DESTROY
        data = ControlPlaneTable(self, "Data", protected=config.protected, removal_policy=protected_policy)
        identity = Identity(
            self,
            "Identity",
            protected=config.protected,
            stage=config.stage,
            removal_policy=protected_policy,
            ses_identity=config.ses_identity,
            ses_region=config.ses_region,
        )
        console = Console(self, "Console", removal_policy=removal_policy)
        login_domain, console_client = identity.add_console_client(console.url)
        deletions = DeletionsQueue(self, "Deletions", removal_policy=removal_policy)

        cursor_secret = secretsmanager.Secret(
            self,
            "CursorSecret",
            description="HMAC key that signs the pagination cursors",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=CURSOR_SECRET_LENGTH, exclude_punctuation=True
            ),
        )
        Validations.of(cursor_secret).acknowledge(
            Acknowledgment(
                id="AwsSolutions-SMG4",
                reason="No rotation yet: the functions verify cursors with one key, so rotating it would "
                "invalidate every cursor in flight; rotation needs a two-key verify window first.",
            )
        )

        powertools = powertools_layer(self, sam_local=config.sam_local)
        environment = {
            "TABLE_NAME": data.table.table_name,
            "CURSOR_SECRET_ARN": cursor_secret.secret_arn,
            "POWERTOOLS_SERVICE_NAME": SERVICE_NAME,
            "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
            # The tracer records no return value in X-Ray: a response, an item or a sign-in is a tenant's
            # data (names, e-mails), which the trace would keep outside the table, and copying it costs.
            "POWERTOOLS_TRACER_CAPTURE_RESPONSE": "false",
            "LOG_LEVEL": LOG_LEVEL,
        }
        environment["CORS_ALLOW_ORIGINS"] = ",".join([console.origin, *config.cors_allow_origins])
        if config.sam_local:
            environment |= {"AWS_ENDPOINT_URL_DYNAMODB": "", "CURSOR_SECRET": ""}
        functions, targets = {}, {}
        for name in FUNCTIONS:
            api_function = ControlPlaneFunction(
                self,
                name.capitalize(),
                name=name,
                layers=[powertools],
                environment=environment,
                removal_policy=removal_policy,
                snap_start=config.snap_start_enabled,
            )
            function = api_function.function
            data.grant(function, *DYNAMODB_ACTIONS[name])
            cursor_secret.grant_read(function)  # every function paginates
            if COGNITO_ACTIONS[name]:  # keeps users' sign-ins in step with the table
                identity.user_pool.grant(function, *COGNITO_ACTIONS[name])
                function.add_environment("USER_POOL_ID", identity.user_pool.user_pool_id)
            functions[name], targets[name] = function, api_function.target
        deletions.attach(functions[ORGANIZATIONS], targets[ORGANIZATIONS])
        deletions.allow_sending(functions[USERS])  # a deleted user's ticket sweep, once GSI1 settles

        # No cursor secret (it reads one item, never a page) and no CORS (it answers no browser): the
        # events function's, and the tenant-keys consumer's.
        without_api_settings = {
            name: value
            for name, value in environment.items()
            if name not in ("CURSOR_SECRET_ARN", "CORS_ALLOW_ORIGINS")
        }
        lifecycle = LifecycleEvents(
            self,
            "Events",
            stage=config.stage,
            archive_days=config.events_archive_days,
            activity_retention_days=config.activity_retention_days,
            data=data,
            layers=[powertools],
            environment=without_api_settings,
            removal_policy=removal_policy,
            snap_start=config.snap_start_enabled,
        )
        deletions.follow(lifecycle.bus)  # an org's status change starts its sign-ins job

        authorizer = ApiAuthorizer(
            self,
            "Authorizer",
            data=data,
            user_pool=identity.user_pool,
            clients=[identity.client, console_client],  # the app clients that sign users in
            removal_policy=removal_policy,
            snap_start=config.snap_start_enabled,
        )
        if config.sam_local:  # JWKS_URL, TOKEN_ISSUER and TOKEN_AUDIENCES are declared already
            authorizer.function.add_environment("AWS_ENDPOINT_URL_DYNAMODB", "")
        api = Api(
            self,
            "Api",
            config=config,
            authorizer=authorizer.target,
            removal_policy=removal_policy,
            console_origin=console.origin,
        )
        api.add_routes(targets)
        usage_plans = UsagePlans(
            self, "UsagePlans", api=api.api, prefix=config.stack_name, removal_policy=removal_policy
        )
        tenant_keys = TenantKeys(
            self,
            "TenantKeys",
            bus=lifecycle.bus,
            data=data,
            usage_plans=usage_plans.tenants,
            key_name_prefix=api_keys.key_name_prefix(config.stack_name),
            layers=[powertools],
            environment=without_api_settings,
            removal_policy=removal_policy,
        )
        Revocations(
            self,
            "Revocations",
            bus=lifecycle.bus,
            api=api.api,
            layers=[powertools],
            environment=without_api_settings,
            removal_policy=removal_policy,
        )
        if config.waf_enabled:
            RateLimit(self, "Waf", stage=api.api.deployment_stage, name=config.stack_name, limit=config.waf_rate_limit)
        # The authorizer names each caller's usage plan key (usageIdentifierKey): the org's, derived
        # from the tenant-key secret, or the operators' (controlplane.dal.tenant_keys).
        authorizer.use_keys(tenant_keys.secret, usage_plans.operators_key_secret)
        console.connect(
            api_url=api.url,
            api_origin=api.origin,
            cognito_domain=login_domain.base_url(),
            client_id=console_client.user_pool_client_id,
        )

        alarms = AlarmTopic(self, "Alarms", email=config.alarm_email)
        Aspects.of(self).add(NotifyOnAlarm(alarms.topic))
        if config.snap_start_enabled:
            self._refuse_regions_without_snap_start()

        CfnOutput(self, "ApiUrl", value=api.url, description="Base URL of the API: append paths like /orgs")
        CfnOutput(self, "TableName", value=data.table.table_name)
        CfnOutput(self, "UserPoolId", value=identity.user_pool.user_pool_id, description="Users and operators")
        CfnOutput(
            self,
            "UserPoolClientId",
            value=identity.client.user_pool_client_id,
            description="App client for sign-in: SRP, or ADMIN_USER_PASSWORD_AUTH with IAM credentials",
        )
        CfnOutput(self, "AlarmTopicArn", value=alarms.topic.topic_arn, description="Every alarm notifies it")
        CfnOutput(
            self, "ConsoleUrl", value=console.url, description="The console: sign in with Cognito's managed login"
        )

    def _refuse_regions_without_snap_start(self) -> None:
        """The region is often unknown at synth: CloudFormation then checks it before it creates anything."""
        CfnRule(
            self,
            "SnapStartRegion",
            assertions=[
                CfnRuleAssertion(
                    assert_=Fn.condition_contains(sorted(SNAP_START_REGIONS), Aws.REGION),
                    assert_description="Lambda SnapStart is not available in this region: "
                    "deploy with -c snap_start=false",
                )
            ],
        )
