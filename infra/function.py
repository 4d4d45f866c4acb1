"""One Lambda function of the control plane (the three API functions and the events function): its
code asset, runtime settings and log group, and (with SnapStart) its alias."""

from aws_cdk import Acknowledgment, Annotations, IgnoreMode, RemovalPolicy, Validations
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
)

LIVE_ALIAS = "live"  # with SnapStart, what API Gateway and the deletions queue invoke

_BASIC_EXECUTION_POLICY = "arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"


def function_code(name: str) -> lambda_.Code:
    """functions/ restricted to the function's own package and the shared one, as Lambda imports them.

    Git ignore rules: the root's entries are excluded, then the two packages are let back in.
    """
    exclude = ["/*", f"!/{name}/", f"!/{SHARED_PACKAGE}/", "__pycache__/", "*.pyc"]
    return lambda_.Code.from_asset(str(FUNCTIONS_DIR), exclude=exclude, ignore_mode=IgnoreMode.GIT)


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
            timeout=TIMEOUT,
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
