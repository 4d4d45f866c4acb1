"""The value of each tenant's API Gateway key, which puts the org's requests in its plan's usage plan.

Derived, not stored: ``HMAC-SHA256(secret, org_id)`` in hex (64 characters; API Gateway takes 20 to
128). The authorizer returns it as ``usageIdentifierKey`` from the org id it already has, with no
request, and the tenant-keys consumer creates the key with the same value. With the API's key
source ``AUTHORIZER`` a client can never present a key, so a value is an identifier, not a
credential; the secret keeps values unique per stack (two stacks may share an account and region,
where values must be unique) and unguessable from an org id.

The operators share one key, created by the stack with a generated value of its own (the stack
cannot compute an HMAC at deploy, and the operators need their key before any event exists).

Both secrets are read once per container, on first use, never at import: ``TENANT_KEY_SECRET_ARN``
and ``OPERATORS_KEY_ARN`` (Secrets Manager) in the cloud, ``TENANT_KEY_SECRET`` and ``OPERATORS_KEY``
locally. A read is one request of at most ``READ_SECONDS`` (its connect and read timeouts), so that
the authorizer's decision keeps its budget; a failed read raises (an outage: 503) and is not
remembered, so the next call reads again. Import-light on purpose: the authorizer's cold start
imports it.
"""

import hashlib
import hmac
import os
from functools import cache
from typing import Any

from controlplane.dal.bounded import one_attempt_client

CONNECT_SECONDS, READ_TIMEOUT_SECONDS = 1.0, 1.0  # GetSecretValue of one small secret answers in milliseconds
READ_SECONDS = CONNECT_SECONDS + READ_TIMEOUT_SECONDS  # the longest one read waits

_secrets_manager: Any = None


def tenant_key(org_id: str) -> str:
    return hmac.new(_secret("TENANT_KEY_SECRET"), org_id.encode(), hashlib.sha256).hexdigest()


def operators_key() -> str:
    return _secret("OPERATORS_KEY").decode()


def usage_identifier_key(org_id: str | None, operator: bool) -> str | None:
    """What the authorizer returns as ``usageIdentifierKey`` for a caller: None for a caller with
    neither (API Gateway then refuses the request: no key, no usage plan)."""
    if operator:
        return operators_key()
    return tenant_key(org_id) if org_id else None


@cache
def _secret(name: str) -> bytes:
    if arn := os.environ.get(f"{name}_ARN"):
        return str(secrets_manager().get_secret_value(SecretId=arn)["SecretString"]).encode()
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"environment variable {name} (or {name}_ARN) is not set")
    return value.encode()


def secrets_manager() -> Any:
    """The client that reads the secrets, made on first use: one request a read (``dal.bounded``)."""
    global _secrets_manager
    if _secrets_manager is None:
        _secrets_manager = one_attempt_client("secretsmanager", CONNECT_SECONDS, READ_TIMEOUT_SECONDS)
    return _secrets_manager


def reset() -> None:
    """Forget the secrets read and the client (tests that change them)."""
    global _secrets_manager
    _secret.cache_clear()
    _secrets_manager = None
