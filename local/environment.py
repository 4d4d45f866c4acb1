"""The functions' environment off Lambda, defined once for ``make run``, the tests, the benchmarks and
events/env.json: the variables the deployed stack sets (infra/stack.py), with local stand-ins for
what it wires in (a cursor secret instead of Secrets Manager, DynamoDB Local or moto instead of AWS).
"""

import os

LOCAL = {
    "TABLE_NAME": "control-plane-local",
    "CURSOR_SECRET": "local-development-cursor-secret",
    "TENANT_KEY_SECRET": "local-development-tenant-key-secret",  # controlplane.dal.tenant_keys
    "OPERATORS_KEY": "local-development-operators-key",
    "AWS_ACCESS_KEY_ID": "local",
    "AWS_SECRET_ACCESS_KEY": "local",
    "AWS_DEFAULT_REGION": "us-east-1",
    "POWERTOOLS_SERVICE_NAME": "control-plane",
    "POWERTOOLS_METRICS_NAMESPACE": "ControlPlane",
    "POWERTOOLS_TRACE_DISABLED": "true",  # no X-Ray daemon to send to
    "POWERTOOLS_METRICS_DISABLED": "true",  # else every create prints an EMF blob between the request lines
    "LOG_LEVEL": "WARNING",  # the handlers' warnings and errors; LOG_LEVEL=INFO shows more
    "RATE_LIMITS": "on",  # the local gateway's per-org limits (local/limits.py); the tests turn them off
    "GSI1_SETTLE_SECONDS": "0",  # DynamoDB Local and moto update GSI1 synchronously: org deletes need not wait
}
# What a developer's shell may hold that must not reach the tests or the benchmarks: a real session,
# an endpoint, Powertools' dev mode.
_FROM_THE_SHELL = ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_DYNAMODB", "POWERTOOLS_DEV")


def use_defaults() -> None:
    """``make run``: the LOCAL values, except where the shell sets its own (LOG_LEVEL=INFO make run)."""
    for name, value in LOCAL.items():
        os.environ.setdefault(name, value)


def isolate(**overrides: str) -> None:
    """The tests and the benchmarks: the LOCAL values with ``overrides``, whatever the shell had."""
    for name in _FROM_THE_SHELL:
        os.environ.pop(name, None)
    os.environ.update(LOCAL | overrides)
