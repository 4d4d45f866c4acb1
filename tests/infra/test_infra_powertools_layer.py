"""A Powertools upgrade reaches a deployed stack: the pin in requirements.txt is read at synth, so a new
pin changes what every function runs, and in prod the version each alias invokes. Synthesized twice, the
second time with another pin, and compared."""

import re

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from infra import constants
from infra.config import StageConfig
from infra.stack import ControlPlaneStack
from tests.infra.conftest import CDK_CONTEXT

UPGRADE = "9.9.9"  # never a real release: only the template is looked at


def _of_type(template: dict, resource_type: str) -> dict[str, dict]:
    return {k: r["Properties"] for k, r in template["Resources"].items() if r["Type"] == resource_type}


def _by_handler(template: dict) -> dict[str, dict]:
    return {p["Handler"]: p for p in _of_type(template, "AWS::Lambda::Function").values()}


def _uses_powertools(template: dict, function: dict) -> bool:
    """Its layers include one from outside the stack (the authorizer's own is a LayerVersion in it)."""
    own = [{"Ref": layer_id} for layer_id in _of_type(template, "AWS::Lambda::LayerVersion")]
    return any(layer not in own for layer in function.get("Layers", []))


def _versions(template: dict) -> dict[str, str]:
    """{handler of the function: logical id of the version it publishes}."""
    handlers = {k: p["Handler"] for k, p in _of_type(template, "AWS::Lambda::Function").items()}
    return {handlers[p["FunctionName"]["Ref"]]: k for k, p in _of_type(template, "AWS::Lambda::Version").items()}


@pytest.fixture(scope="module")
def upgraded(tmp_path_factory) -> dict[str, dict]:
    """dev and prod synthesized with requirements.txt pinning Powertools to UPGRADE."""
    requirements = tmp_path_factory.mktemp("pin") / "requirements.txt"
    pin = re.compile(r"^(aws-lambda-powertools(\[[^\]]*\])?)==\S+", re.MULTILINE)
    requirements.write_text(pin.sub(rf"\g<1>=={UPGRADE}", constants.REQUIREMENTS.read_text()))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(constants, "REQUIREMENTS", requirements)
        app = cdk.App(outdir=str(tmp_path_factory.mktemp("cdk.out")), context=CDK_CONTEXT)
        stacks = {stage: ControlPlaneStack(app, config=StageConfig(stage=stage)) for stage in ("dev", "prod")}
        app.synth()
        return {stage: Template.from_stack(stack).to_json() for stage, stack in stacks.items()}


@pytest.mark.parametrize("stage", ["dev", "prod"])
def test_a_new_pin_changes_every_powertools_functions_layer_and_nothing_else(templates, upgraded, stage):
    # Given the stage synthesized with today's pin, and again with another
    template = templates[stage].to_json()
    before, after = _by_handler(template), _by_handler(upgraded[stage])
    users = [handler for handler, function in before.items() if _uses_powertools(template, function)]
    assert len(users) >= 4  # the three API functions and the events function, at least

    for handler in users:
        # Then each function names the new version's layer, where it named the old one
        old, new = before[handler], after[handler]
        assert constants.POWERTOOLS_VERSION in str(old["Layers"]) and UPGRADE not in str(old["Layers"])
        assert f"/{UPGRADE}}}}}" in str(new["Layers"]), handler
        # and the rest of the function is what it was
        assert {k: v for k, v in old.items() if k != "Layers"} == {k: v for k, v in new.items() if k != "Layers"}


def test_a_new_pin_publishes_new_versions_that_the_aliases_invoke_in_prod(templates, upgraded):
    # Given prod (SnapStart: each alias invokes the version the deploy published)
    before, after = templates["prod"].to_json(), upgraded["prod"]
    functions = _by_handler(before)

    for handler, version_id in _versions(before).items():
        new_version = _versions(after)[handler]
        if _uses_powertools(before, functions[handler]):
            # Then a function on Powertools publishes a new version (a new logical id), as CloudFormation
            # only publishes a Version it has not got, and its alias moves to it
            assert new_version != version_id, handler
            [alias] = [a for a in _of_type(after, "AWS::Lambda::Alias").values() if new_version in str(a)]
            assert alias["FunctionVersion"] == {"Fn::GetAtt": [new_version, "Version"]}
        else:
            # while one without it keeps its version: the pin is what moved the others
            assert new_version == version_id, handler
