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
locally. Import-light on purpose: the authorizer's cold start imports it.
"""

import hashlib
import hmac
import os
from functools import cache


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
        import boto3

        return str(boto3.client("secretsmanager").get_secret_value(SecretId=arn)["SecretString"]).encode()
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"environment variable {name} (or {name}_ARN) is not set")
    return value.encode()


def reset() -> None:
    """Forget the secrets read (tests that change them)."""
    _secret.cache_clear()
