"""Each function imports only what its routes need at a cold start: rare paths load when taken."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from controlplane.http.routes import FUNCTIONS, ORGANIZATIONS, TICKETS, USERS

ROOT = Path(__file__).resolve().parents[2]
# Loaded on the rare path that needs them: a POST with an Idempotency-Key, a message from the
# deletions queue, the cursor secret from Secrets Manager (the cloud's first request only).
NEVER_AT_IMPORT = {
    "aws_lambda_powertools.utilities.idempotency",
    "aws_lambda_powertools.utilities.batch",
    "aws_lambda_powertools.utilities.parameters",
}
NOT_IN = {
    TICKETS: {
        "controlplane.dal.directory",
        "controlplane.logic.cascade",
        "controlplane.logic.deletions",
    },  # no Cognito, no SQS
    USERS: {"controlplane.logic.deletions"},  # the user cascade runs in the request; no queue
    ORGANIZATIONS: set(),
}


def _modules_after_import(function: str) -> set[str]:
    script = f"import json, sys; import {function}.handler; print(json.dumps(sorted(sys.modules)))"
    environment = {"PYTHONPATH": str(ROOT / "functions"), "AWS_DEFAULT_REGION": "us-east-1", "PATH": ""}
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=environment, capture_output=True, text=True, check=True
    )
    return set(json.loads(result.stdout))


@pytest.mark.parametrize("function", FUNCTIONS)
def test_a_cold_start_imports_no_module_of_a_path_it_does_not_take(function):
    # When a fresh interpreter imports the function's handler, as Lambda's init does
    loaded = _modules_after_import(function)

    # Then it has loaded its routes' code, and none of the rare or other functions' paths
    assert f"controlplane.logic.{function}" in loaded
    assert loaded & (NEVER_AT_IMPORT | NOT_IN[function]) == set()
    assert not any(name.startswith("aws_lambda_powertools.utilities.batch") for name in loaded)
