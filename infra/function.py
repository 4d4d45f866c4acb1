"""One Lambda function of the control plane (the three API functions and the events function): its
code asset, runtime settings and log group, and (with SnapStart) its alias; and the Powertools layer."""

from aws_cdk import (
    Acknowledgment,
    Annotations,
    CfnDynamicReference,
    CfnDynamicReferenceService,
    CfnParameter,
    Duration,
    IgnoreMode,
    RemovalPolicy,
    Stack,
    Validations,
)
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.constants import (
    ARCHITECTURE,
    FUNCTIONS_DIR,
    LOG_RETENTION,
    MEMORY_MB,
    RUNTIME,
    SHARED_PACKAGE,
    TIMEOUT,
    powertools_layer_parameter,
)

LIVE_ALIAS = "live"  # with SnapStart, what API Gateway and the deletions queue invoke

_BASIC_EXECUTION_POLICY = "arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"


def function_code(name: str) -> lambda_.Code:
    """functions/ restricted to the function's own package and the shared one, as Lambda imports them.

    Git ignore rules: the root's entries are excluded, then the two packages are let back in.
    """
    exclude = ["/*", f"!/{name}/", f"!/{SHARED_PACKAGE}/", "__pycache__/", "*.pyc"]
    return lambda_.Code.from_asset(str(FUNCTIONS_DIR), exclude=exclude, ignore_mode=IgnoreMode.GIT)


def powertools_layer(scope: Construct, *, sam_local: bool) -> lambda_.ILayerVersion:
    """The official Powertools layer of the version requirements.txt pins, read at each synth.

    Deployed, its ARN is a dynamic reference to AWS's public parameter for that version, which
    CloudFormation resolves at deploy time in the deployment's region. The version is in the template's
    text, so a new pin changes every function's ``Layers`` and, with SnapStart, the logical id of the
    version it publishes (its hash covers the layers): the next deploy runs the new layer. A
    ``CfnParameter`` defaulting to the path did not: ``cdk deploy`` passes UsePreviousValue for a
    parameter the stack already has (aws/aws-cdk#7611), so a stack kept its first layer forever.

    SAM CLI resolves no SSM reference, so the ``sam_local`` synth takes the ARN as a parameter instead:
    ``sam local invoke --parameter-overrides PowertoolsLayerArn=<arn>`` (docs/OPERATIONS.md).
    """
    parameter = powertools_layer_parameter()
    if sam_local:
        arn = CfnParameter(
            Stack.of(scope),
            "PowertoolsLayerArn",
            type="AWS::SSM::Parameter::Value<String>",
            default=parameter,
            description="Public SSM parameter holding the ARN of the official Powertools layer, pinned version",
        ).value_as_string
    else:
        arn = CfnDynamicReference(CfnDynamicReferenceService.SSM, parameter).to_string()
    return lambda_.LayerVersion.from_layer_version_arn(scope, "Powertools", arn)


class ControlPlaneFunction(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        name: str,
        layers: list[lambda_.ILayerVersion],
        environment: dict[str, str],
        removal_policy: RemovalPolicy,
        snap_start: bool = False,
        timeout: Duration = TIMEOUT,
    ) -> None:
        super().__init__(scope, construct_id)
        log_group = logs.LogGroup(self, "Logs", retention=LOG_RETENTION, removal_policy=removal_policy)
        self.function = lambda_.Function(
            self,
            "Function",
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler=f"{name}.handler.lambda_handler",
            code=function_code(name),
            memory_size=MEMORY_MB[name],
            timeout=timeout,
            tracing=lambda_.Tracing.ACTIVE,
            layers=layers,
            environment=environment,
            log_group=log_group,
            # Init (the imports, the DynamoDB client and its model) runs once per published version;
            # a cold start restores the snapshot. Only published versions are snapshotted.
            snap_start=lambda_.SnapStartConf.ON_PUBLISHED_VERSIONS if snap_start else None,
        )
        # What callers invoke: without SnapStart, $LATEST; with it, an alias on the version this
        # deploy published (a new one whenever the code or configuration changes), since invoking
        # $LATEST would never use a snapshot.
        self.target: lambda_.IFunction = self.function
        if snap_start:
            self.target = lambda_.Alias(self, "Live", alias_name=LIVE_ALIAS, version=self.function.current_version)
            Annotations.of(self.function).acknowledge_warning(
                "@aws-cdk/aws-lambda:snapStartRequirePublish",
                "Every deploy publishes a version (current_version) and the alias invokes it.",
            )
        # `sam local invoke <name>` finds the function by this id; its logical id carries a hash.
        self.function.node.default_child.add_metadata("SamResourceId", name)
        Validations.of(self).acknowledge(
            Acknowledgment(
                id=f"AwsSolutions-IAM4[Policy::{_BASIC_EXECUTION_POLICY}]",
                reason="AWSLambdaBasicExecutionRole only lets the function write its logs; it is the policy "
                "Lambda documents for exactly that.",
            ),
            Acknowledgment(
                id="AwsSolutions-IAM5[Resource::*]",
                reason="Active tracing: X-Ray's PutTraceSegments and PutTelemetryRecords take no resource.",
            ),
            Acknowledgment(
                id="AwsSolutions-L1",
                reason=f"{RUNTIME.name} on purpose: the Powertools layer is published per runtime, so a runtime "
                "upgrade is a deliberate change, tested locally first.",
            ),
        )
