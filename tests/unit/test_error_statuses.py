"""Errors know no transport; the http layer maps each error code to its status in one table."""

import re
from pathlib import Path

from controlplane.http import errors as http_errors
from controlplane.http.errors import STATUS, headers_of, status_of
from controlplane.models import errors
from controlplane.models.errors import ApiError, MethodNotAllowed, QuotaExceeded, ServiceUnavailable


def _error_classes() -> list[type[ApiError]]:
    found, pending = [], [ApiError]
    while pending:
        error = pending.pop()
        found.append(error)
        pending += error.__subclasses__()
    return found


def test_every_code_a_domain_error_carries_has_a_status():
    missing = {error.__name__: error.code for error in _error_classes() if error.code not in STATUS}

    assert missing == {}


def test_every_code_the_resolver_answers_by_name_has_a_status():
    # Given the codes the resolver's own handlers name (validation, media type, our bugs)
    source = (Path(http_errors.__file__).parent / "resolver.py").read_text()
    named = set(re.findall(r'error\("([a-z_]+)"', source))

    assert named and named <= set(STATUS)


def test_statuses_are_errors_and_each_error_has_one_status():
    assert all(400 <= status < 600 for status in STATUS.values())
    assert status_of(errors.org_missing("acme")) == 404
    assert status_of(QuotaExceeded("users", 5, 5, "free")) == 409
    assert status_of(errors.TooDeep("too deep")) == 400


def test_retry_hints_and_allowed_methods_become_headers_and_nothing_else_does():
    assert headers_of(ServiceUnavailable("busy", retry_after=30)) == {"Retry-After": "30"}
    assert headers_of(ServiceUnavailable("busy")) == {"Retry-After": "1"}
    assert headers_of(MethodNotAllowed("no", ["GET", "PATCH"])) == {"Allow": "GET, PATCH"}
    assert headers_of(errors.Forbidden("no")) == {}


def test_no_domain_error_knows_a_status_or_a_header():
    assert not any(hasattr(error, "status") for error in _error_classes())
    assert not hasattr(errors.Conflict("x"), "headers")
