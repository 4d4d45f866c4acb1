"""Each function imports only what its routes need at a cold start: rare paths load when taken, and
nothing loads that did not before http/api.py, dal/table.py and dal/items.py were split (88e65a4)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from controlplane.http.routes import FUNCTIONS, ORGANIZATIONS, TICKETS, USERS

ROOT = Path(__file__).resolve().parents[2]
EVENTS = "events"
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
# The packages outside the standard library that a cold start loaded at 88e65a4, the same for every
# function (recorded with _modules_after_import there); the function's own package comes on top.
THIRD_PARTY = {
    "annotated_types",
    "aws_lambda_powertools",
    "aws_xray_sdk",
    "boto3",
    "botocore",
    "certifi",
    "dateutil",
    "jmespath",
    "pydantic",
    "pydantic_core",
    "s3transfer",
    "six",
    "snapshot_restore_py",
    "typing_extensions",
    "typing_inspection",
    "urllib3",
    "wrapt",
}
# Our modules each cold start loads. At 88e65a4 the API functions loaded http.api and dal.items
# where they now load the modules those became (http.docs, entry, params, resolver, responses;
# dal.stamps, plus dal.transactions and dal.batches where their routes write so); the events
# function no longer loads dal.cursor. Every other module is the same.
_EVERY_API_FUNCTION = {
    "config",
    "observability",
    "dal.codec",
    "dal.conditions",
    "dal.cursor",
    "dal.keys",
    "dal.schema",
    "dal.stamps",
    "dal.table",
    "http.auth",
    "http.docs",
    "http.errors",  # the error contract's statuses and body, out of models.errors and http.responses (#28)
    "logic.access",  # the caller's rules, out of http.auth (#28)
    "logic.refusals",  # what a failed write condition means: dal reports it, logic decides (#28)
    "dal.outage",  # outage detection, out of models.errors (#28)
    "http.examples",  # the error examples of http.docs, split from it (one concern each)
    "models.problems",  # validation problems in plain words (since f23)
    "models.error_body",  # the error body's models for the document, out of models.resources (module size)
    "http.json_body",  # strict JSON bodies: UTF-8, unique names (issue 29)
    "models.text",  # the text patterns: no control characters (issue 29)
    "http.entry",
    "http.params",
    "http.resolver",
    "http.responses",
    "http.routes",
    "models.activity",
    "models.errors",
    "models.imports",  # the user import's models: the route table names them (issue 26)
    "models.ids",
    "models.plans",
    "models.resources",
    "models.units",  # the unit routes' bodies, named by their route records (issue 27)
}
OURS = {
    # The deletions queue also carries the sign-ins jobs of a status change (logic.signins), paced by
    # pacing.Throttle (which left logic.signins when the tenant keys needed it too).
    # The seat counter is an item of its own (dal.seats): an org's create and plan change write it.
    ORGANIZATIONS: _EVERY_API_FUNCTION
    | {
        "dal.batches",
        "dal.directory",  # a user import's job tells Cognito's refusal of a sign-in (SignInRefused)
        "dal.imports",
        "dal.seats",
        "dal.sealing",  # a keyed create completes its idempotency record in its own transaction
        "dal.transactions",
        "logic.activity",
        "logic.imports",
        "logic.import_job",  # a user import's job: in line where no queue is set (make run)
        "logic.import_rows",  # its rows as users: their units, how many a transaction takes
        "logic.cascade",
        "logic.deletions",
        "logic.organizations",
        "logic.signins",
        "pacing",
        # The unit routes (issue 27); a big move runs from the deletions queue too.
        "dal.tree",
        "logic.moves",
        "logic.move_queue",  # its job on the queue
        "logic.stopped_moves",  # with no queue, a move an outage stopped is run on by the next GET of its unit
        "logic.tree_reads",
        "logic.units",
    },
    USERS: _EVERY_API_FUNCTION
    | {
        "dal.batches",
        "dal.directory",
        "dal.seats",
        "dal.sealing",
        "dal.transactions",
        "logic.cascade",
        "logic.organizations",
        "logic.tickets",
        "logic.users",
        "logic.signins",  # a new sign-in follows its org's status, read again after it is made
        "pacing",  # which logic.signins imports for its jobs' pace
        "dal.tree",  # a user's unit (issue 27)
        "logic.units",
    },
    TICKETS: _EVERY_API_FUNCTION | {"dal.sealing", "dal.transactions", "logic.tickets"},
    # The events function also writes each org's activity log, in batches (lifecycle.activity).
    EVENTS: {
        "config",
        "observability",
        "dal.batches",
        "dal.codec",
        "dal.conditions",
        "dal.keys",
        "dal.schema",
        "dal.stamps",
        "dal.table",
        "lifecycle.activity",
        "lifecycle.contract",
        "lifecycle.publisher",
        "lifecycle.timing",  # occurred_at, out of lifecycle.contract to make room for units (issue 27)
        "models.errors",
        "models.ids",
        "models.plans",
        "models.resources",
        "models.text",
        "models.units",  # the unit events' resource (issue 27)
    },
}
LAYERS = {"dal", "http", "lifecycle", "logic", "models"}  # the packages, whose __init__.py are empty


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


@pytest.mark.parametrize("function", [*FUNCTIONS, EVENTS])
def test_a_cold_start_loads_exactly_the_modules_it_loaded_before_the_split(function):
    # When a fresh interpreter imports the function's handler
    loaded = _modules_after_import(function)

    # Then our modules are exactly the function's list, and no package outside the standard library
    # loads that did not before
    ours = {name.removeprefix("controlplane.") for name in loaded if name.startswith("controlplane.")}
    assert ours - LAYERS == OURS[function]
    roots = {name.split(".")[0] for name in loaded} - set(sys.stdlib_module_names)
    others = {root for root in roots if not root.startswith("_")} - {"controlplane", function}
    assert others == THIRD_PARTY


def test_the_authorizers_cold_start_loads_boto3_joserfc_and_two_small_modules_of_ours():
    # When a fresh interpreter imports the authorizer, as its Lambda init does
    loaded = _modules_after_import("authorizer")

    # Then: no pydantic, no Powertools; of ours, only the key builder, the stamps' names, the usage plan
    # keys, the one-attempt client and the domain errors (session_ended; they import nothing)
    ours = {name.removeprefix("controlplane.") for name in loaded if name.startswith("controlplane.")}
    assert ours - LAYERS == {"dal.bounded", "dal.keys", "dal.schema", "dal.stamps", "dal.tenant_keys", "models.errors"}
    roots = {name.split(".")[0] for name in loaded} - set(sys.stdlib_module_names)
    others = {root for root in roots if not root.startswith("_")} - {"controlplane", "authorizer"}
    assert others & {"pydantic", "aws_lambda_powertools", "aws_xray_sdk"} == set()
    assert {"boto3", "botocore", "joserfc", "cryptography"} <= others
