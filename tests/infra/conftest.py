"""Infrastructure fixtures: the app synthesized once per session, in-process and by the CDK CLI."""

import json
from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from controlplane.http.routes import FUNCTIONS
from infra.config import StageConfig
from infra.stack import ControlPlaneStack
from local import ROOT, cdk_cli

CDK_CONTEXT = json.loads((ROOT / "cdk.json").read_text())["context"]  # the feature flags the CLI uses

CONFIGS = {
    "dev": StageConfig(stage="dev"),
    "prod": StageConfig(stage="prod"),
    "cors": StageConfig(stage="web", cors_allow_origins=("https://app.example.com",)),
    "sam": StageConfig(stage="sam", sam_local=True),
    # A region whose API Gateway account role another stack set, alarms that e-mail someone, and an SES
    # identity the user pool sends through
    "shared": StageConfig(
        stage="shared", api_gateway_account_role=False, alarm_email="ops@example.com", ses_identity="example.com"
    ),
}


@pytest.fixture(scope="session")
def stacks(tmp_path_factory) -> dict[str, ControlPlaneStack]:
    """One app, synthesized once, with a stack per configuration the tests compare."""
    app = cdk.App(outdir=str(tmp_path_factory.mktemp("cdk.out")), context=CDK_CONTEXT)
    found = {name: ControlPlaneStack(app, config=config) for name, config in CONFIGS.items()}
    app.synth()
    return found


@pytest.fixture(scope="session")
def templates(stacks) -> dict[str, Template]:
    return {name: Template.from_stack(stack) for name, stack in stacks.items()}


@pytest.fixture(scope="session")
def dev(templates) -> dict:
    return templates["dev"].to_json()


@pytest.fixture(scope="session")
def prod(templates) -> dict:
    return templates["prod"].to_json()


@pytest.fixture(scope="session")
def functions(dev) -> dict[str, str]:
    """Logical id of each function, found by its handler rather than by CDK's naming."""
    by_handler = {
        resource["Properties"]["Handler"]: logical_id
        for logical_id, resource in dev["Resources"].items()
        if resource["Type"] == "AWS::Lambda::Function"
    }
    return {name: by_handler[f"{name}.handler.lambda_handler"] for name in FUNCTIONS}


@pytest.fixture(scope="session")
def cli_assembly(tmp_path_factory) -> Path:
    """The cloud assembly `make synth` writes: the CLI adds the asset metadata SAM CLI reads."""
    outdir = tmp_path_factory.mktemp("cli-cdk.out")
    output = cdk_cli.synth(outdir)
    assert "end-of-life" not in output  # `npx cdk synth` is quiet on the Node we state
    return outdir
