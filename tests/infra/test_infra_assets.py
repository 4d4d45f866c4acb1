"""What `cdk synth` writes for deployment and for `sam local invoke`: one lean asset per function."""

import json

import pytest

from controlplane.http.routes import FUNCTIONS

STACK = "ControlPlane-dev"  # the stack app.py synthesizes without context


@pytest.fixture(scope="session")
def cli_template(cli_assembly) -> dict:
    return json.loads((cli_assembly / f"{STACK}.template.json").read_text())


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_asset_holds_only_its_package_and_the_shared_one(cli_assembly, cli_template, name):
    # Given the template the CLI wrote, as sam local invoke reads it
    [function] = [
        r
        for r in cli_template["Resources"].values()
        if r["Type"] == "AWS::Lambda::Function" and r["Properties"]["Handler"] == f"{name}.handler.lambda_handler"
    ]

    # When following the function's asset metadata to its folder
    metadata = function["Metadata"]
    asset = cli_assembly / metadata["aws:asset:path"]

    # Then the folder is the function's package plus controlplane/, without caches, tests or infra
    assert metadata["aws:asset:property"] == "Code"
    assert metadata["SamResourceId"] == name  # sam local invoke <name>
    assert sorted(entry.name for entry in asset.iterdir()) == sorted([name, "controlplane"])
    assert (asset / name / "handler.py").is_file()
    assert (asset / "controlplane" / "__init__.py").is_file()
    assert not [path for path in asset.rglob("*") if path.name == "__pycache__" or path.suffix == ".pyc"]
