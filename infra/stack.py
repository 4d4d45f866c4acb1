"""The control plane's stack: the table, the cursor secret, the three functions and the REST API."""

from aws_cdk import Acknowledgment, CfnOutput, CfnParameter, RemovalPolicy, Stack, Validations
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from controlplane.routes import FUNCTIONS
from infra.api import Api
from infra.config import StageConfig
from infra.constants import (
    CURSOR_SECRET_LENGTH,
    DYNAMODB_ACTIONS,
    LOG_LEVEL,
    METRICS_NAMESPACE,
    POWERTOOLS_LAYER_PARAMETER,
    SERVICE_NAME,
)
from infra.function import ApiFunction
from infra.table import ControlPlaneTable


class ControlPlaneStack(Stack):
    def __init__(self, scope: Construct, *, config: StageConfig, **kwargs) -> None:
        super().__init__(scope, config.stack_name, **kwargs)
        removal_policy = RemovalPolicy.RETAIN if config.protected else RemovalPolicy.DESTROY
        data = ControlPlaneTable(self, "Data", protected=config.protected)

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

        # CloudFormation resolves the layer ARN at deploy time, in the deployment's region. A plainly
        # named parameter, so `sam local invoke --parameter-overrides PowertoolsLayerArn=<arn>` can set it.
        powertools_arn = CfnParameter(
            self,
            "PowertoolsLayerArn",
            type="AWS::SSM::Parameter::Value<String>",
            default=POWERTOOLS_LAYER_PARAMETER,
            description="Public SSM parameter holding the ARN of the official Powertools layer, pinned version",
        )
        powertools = lambda_.LayerVersion.from_layer_version_arn(self, "Powertools", powertools_arn.value_as_string)
        environment = {
            "TABLE_NAME": data.table.table_name,
            "CURSOR_SECRET_ARN": cursor_secret.secret_arn,
            "POWERTOOLS_SERVICE_NAME": SERVICE_NAME,
            "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
            "LOG_LEVEL": LOG_LEVEL,
        }
        functions = {}
        for name in FUNCTIONS:
            function = ApiFunction(
                self,
                name.capitalize(),
                name=name,
                layers=[powertools],
                environment=environment,
                removal_policy=removal_policy,
            ).function
            data.grant(function, *DYNAMODB_ACTIONS[name])
            cursor_secret.grant_read(function)  # every function paginates
            functions[name] = function

        api = Api(self, "Api", config=config, removal_policy=removal_policy)
        api.add_routes(functions)

        CfnOutput(self, "ApiUrl", value=api.url, description="Base URL of the API: append paths like /orgs")
        CfnOutput(self, "TableName", value=data.table.table_name)
