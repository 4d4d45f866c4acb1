"""The CDK app: one ControlPlane-<stage> stack, checked against the AWS Solutions rules on every synth."""

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from infra.config import StageConfig
from infra.stack import ControlPlaneStack

app = cdk.App()
ControlPlaneStack(app, config=StageConfig.from_context(app.node))
cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
app.synth()
