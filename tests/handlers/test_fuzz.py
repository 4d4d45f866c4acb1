"""Property-based testing with schemathesis against the local gateway and the committed OpenAPI
document, on both backends, in every phase: the document's examples, coverage (the edges of every
parameter and body the schema defines), fuzzing, and stateful sequences that follow the links
schemathesis infers between operations (a created org's id into its reads, updates and deletes...).

Fixed seed and bounded examples, so the run is repeatable and short. Every response must be non-5xx
and conform to the document: status, content type, headers and body schema.
"""

import pytest
import schemathesis
from hypothesis import HealthCheck, seed, settings
from schemathesis import checks
from schemathesis.config import SchemathesisConfig

from controlplane import config
from local import openapi, server, tokens

CONFIG = SchemathesisConfig.from_dict(
    {"phases": {"examples": {}, "coverage": {}, "fuzzing": {}, "stateful": {"max-steps": 12}}}
)
schema = schemathesis.openapi.from_dict(openapi.document(), config=CONFIG)
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
    checks.response_schema_conformance,
]
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {tokens.issue(tokens.OPERATOR)}"}


@pytest.fixture
def gateway(table):
    """make run's gateway, in a thread, over this test's table."""
    with server.in_thread() as url:
        yield url


def test_the_stateful_phase_has_links_to_follow():
    transitions = [name for name in dir(schema.as_state_machine()) if "___" in name]

    assert any(name.startswith("POST_orgs___201") for name in transitions), transitions
    assert any(name.startswith("POST_orgs_org_id_users_user_id_tickets___201") for name in transitions)


def test_the_schema_the_tests_run_has_every_phase_on():
    # The schema the tests run carries CONFIG: its stateful steps are ours (schemathesis' own are 6),
    # so a schema built without it, or a phase turned off, fails here
    phases = schema.config.phases
    assert phases.stateful.max_steps == 12
    assert all(phases.get_by_name(name=name).enabled for name in ("examples", "coverage", "fuzzing", "stateful"))


@schema.parametrize()
@seed(20261121)
@SETTINGS
def test_api_never_answers_5xx_and_conforms_to_its_document(case, gateway):
    case.call_and_validate(base_url=gateway, headers=_auth(), checks=CHECKS)


def test_sequences_of_calls_never_answer_5xx_and_conform_to_the_document(gateway, table):
    class Sequences(schema.as_state_machine()):  # type: ignore[misc]
        def setup(self):
            """Each scenario starts on an empty table, so that replaying it (hypothesis does, to
            shrink) meets the same answers."""
            _empty(table)

        def get_call_kwargs(self, case):
            return {"base_url": gateway, "headers": _auth()}

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(response, checks=CHECKS)

    Sequences.run(settings=settings(SETTINGS, max_examples=15, stateful_step_count=12))


def _empty(table_name: str) -> None:
    client = config.dynamodb()
    for page in client.get_paginator("scan").paginate(TableName=table_name, ProjectionExpression="PK, SK"):
        for item in page["Items"]:
            client.delete_item(TableName=table_name, Key=item)
