"""Property-based fuzzing with schemathesis against the local gateway's OpenAPI document.

Fixed seed and a bounded number of examples per operation, so the run is repeatable and short.
Every response must be non-5xx and conform to the document (status, content type, body schema).
"""

import pytest
import schemathesis
from hypothesis import HealthCheck, seed, settings
from schemathesis import checks

from local import openapi, server, tokens

schema = schemathesis.openapi.from_dict(openapi.document())
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
]


@pytest.fixture
def gateway(table):
    """make run's gateway, in a thread, over this test's table."""
    with server.in_thread() as url:
        yield url


@schema.parametrize()
@seed(20261121)
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_api_never_answers_5xx_and_conforms_to_its_document(case, gateway):
    case.call_and_validate(
        base_url=gateway, headers={"Authorization": f"Bearer {tokens.issue(tokens.OPERATOR)}"}, checks=CHECKS
    )
