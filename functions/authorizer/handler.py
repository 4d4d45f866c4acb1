"""The API's Lambda authorizer (TOKEN type): who is calling, and is their organization active?

A TOKEN authorizer, not a REQUEST one: the decision depends on the Authorization header alone (the
token, then the org it names), so API Gateway's cache key, the header, is exactly the decision's
input. One decision then serves every route for ``authorizer_ttl_seconds``.

- The ID token is verified as Cognito's authorizer did: RS256 against the pool's JWKS (fetched once
  per container, again for an unknown ``kid`` at most every ``JWKS_REFETCH_SECONDS``), ``iss``,
  ``aud`` (the app client), ``token_use = id`` and ``exp``. Anything else is ``Unauthorized`` (401).
- A caller in an org: one GetItem of the org's status and plan. Suspended is a Deny (403
  ``org_suspended``); a missing org too (deleted, or its token outlived it). Operators read nothing.
- The Allow covers every method of the stage: the decision is cached per token and reused on other
  routes, whose records (``controlplane.http.routes``) stay the only fine-grained rules.
- Fail closed: a JWKS or DynamoDB outage raises, which API Gateway answers with its
  AUTHORIZER_FAILURE gateway response (503 service_unavailable), never an Allow.

- The Allow names the caller's usage plan key (``usageIdentifierKey``, controlplane.dal.tenant_keys).

Imports on purpose: boto3 (the runtime's), joserfc (bundled with ``cryptography``), the standard
library, ``controlplane.dal.keys`` and ``controlplane.dal.tenant_keys``: no pydantic, no
Powertools, for a short cold start.
"""

import base64
import binascii
import json
import logging
import os
import time
import urllib.request
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.config import Config
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import RSAKey
from joserfc.jwt import JWTClaimsRegistry

from controlplane.dal import tenant_keys
from controlplane.dal.keys import org_key

OPERATORS_GROUP = "operators"  # controlplane.http.auth.OPERATORS_GROUP; not imported, for the cold start
SUSPENDED = "suspended"
JWKS_REFETCH_SECONDS = 30.0  # the least time between two fetches for unknown kids: a flood of bogus kids fetches once
JWKS_TIMEOUT_SECONDS = 2.0
_LOCAL_HOSTS = ("http://127.0.0.1:", "http://localhost:", "http://host.docker.internal:")  # sam local: the host
ALGORITHM = "RS256"  # Cognito's; ``none`` and HS256 (signed with the public key as a secret) never pass

logger = logging.getLogger("authorizer")
logger.setLevel(os.environ.get("LOG_LEVEL", "INFO"))


class Unauthorized(Exception):
    """The token is missing, malformed or invalid: API Gateway answers 401 (UNAUTHORIZED)."""


@dataclass
class _Jwks:
    keys: dict[str, RSAKey]
    fetched_at: float


_jwks: _Jwks | None = None
_dynamodb: Any = None


def reset() -> None:
    """Forget the JWKS and the DynamoDB client (tests, and the local gateway on a new environment)."""
    global _jwks, _dynamodb
    _jwks = _dynamodb = None


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    try:
        claims = verify(event.get("authorizationToken") or "")
    except Unauthorized as refused:
        logger.info("Unauthorized: %s", refused)
        raise Exception("Unauthorized") from None  # the exact message API Gateway turns into a 401
    return decide(claims, event["methodArn"])


def verify(authorization: str) -> dict[str, Any]:
    """The verified claims of ``Bearer <token>`` (the scheme in any case, RFC 7235) or a bare token."""
    scheme, _, rest = authorization.strip().partition(" ")
    token = rest.strip() if scheme.lower() == "bearer" else authorization.strip()
    if not token or " " in token:
        raise Unauthorized("no token")
    key = _key_for(_header(token))
    try:
        decoded = jwt.decode(token, key, algorithms=[ALGORITHM])
        _claims_registry().validate(decoded.claims)
    except (JoseError, ValueError) as error:
        raise Unauthorized(f"invalid token: {error}") from None
    if not decoded.claims.get("sub"):
        raise Unauthorized("no subject")
    return decoded.claims


def _header(token: str) -> dict[str, Any]:
    try:
        segment = token.split(".")[0]
        header = json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    except (ValueError, binascii.Error):
        raise Unauthorized("malformed token") from None
    if not isinstance(header, dict) or header.get("alg") != ALGORITHM or not isinstance(header.get("kid"), str):
        raise Unauthorized("not an RS256 token with a kid")
    return header


def _key_for(header: dict[str, Any]) -> RSAKey:
    """The JWKS key the token names: a new ``kid`` (key rotation) fetches the JWKS again, rate-bounded."""
    global _jwks
    kid = header["kid"]
    now = time.monotonic()
    if _jwks is None or (kid not in _jwks.keys and now - _jwks.fetched_at >= JWKS_REFETCH_SECONDS):
        _jwks = _Jwks(_fetch_jwks(), now)
    try:
        return _jwks.keys[kid]
    except KeyError:
        raise Unauthorized(f"unknown kid {kid!r}") from None


def _fetch_jwks() -> dict[str, RSAKey]:
    """Raises (an outage: the decision fails, 503) when the JWKS cannot be read."""
    url = os.environ["JWKS_URL"]
    if not url.startswith(("https://", *_LOCAL_HOSTS)):  # plain HTTP only to make run's gateway
        raise RuntimeError(f"JWKS_URL must be https: {url}")
    with urllib.request.urlopen(url, timeout=JWKS_TIMEOUT_SECONDS) as response:
        document = json.load(response)
    return {
        key["kid"]: RSAKey.import_key(key)
        for key in document["keys"]
        if key.get("kty") == "RSA" and key.get("kid") and key.get("use", "sig") == "sig"
    }


def _claims_registry() -> JWTClaimsRegistry:
    return JWTClaimsRegistry(
        iss={"essential": True, "value": os.environ["TOKEN_ISSUER"]},
        aud={"essential": True, "value": os.environ["TOKEN_AUDIENCE"]},
        token_use={"essential": True, "value": "id"},
        exp={"essential": True},
        sub={"essential": True},
    )


def decide(claims: dict[str, Any], method_arn: str) -> dict[str, Any]:
    groups = claims.get("cognito:groups") or []
    groups = groups.split(",") if isinstance(groups, str) else [str(group) for group in groups]
    operator = OPERATORS_GROUP in groups
    org_id = "" if operator else str(claims.get("custom:org_id") or "")
    context = {
        "sub": str(claims["sub"]),
        "org_id": org_id,
        "user_id": "" if operator else str(claims.get("custom:user_id") or ""),
        "role": "" if operator else str(claims.get("custom:role") or ""),
        "groups": ",".join(groups),
        "plan": "",
    }
    if org_id:
        org = _read_org(org_id)
        if org is None:
            return _policy("Deny", context, method_arn, "forbidden", f"Organization {org_id} does not exist")
        if org.get("status", {}).get("S") == SUSPENDED:
            return _policy("Deny", context, method_arn, "org_suspended", f"Organization {org_id} is suspended")
        context["plan"] = org.get("plan", {}).get("S", "")
    policy = _policy("Allow", context, method_arn)
    # The caller's usage plan key (API key source AUTHORIZER): the org's, or the operators'.
    if key := tenant_keys.usage_identifier_key(org_id or None, operator):
        policy["usageIdentifierKey"] = key
    return policy


def _read_org(org_id: str) -> dict[str, Any] | None:
    """The org's status and plan: one GetItem. Any error propagates (fail closed: 503)."""
    response = dynamodb().get_item(
        TableName=os.environ["TABLE_NAME"],
        Key={name: {"S": value} for name, value in org_key(org_id).items()},
        ProjectionExpression="#status, #plan",
        ExpressionAttributeNames={"#status": "status", "#plan": "plan"},
    )
    item: dict[str, Any] | None = response.get("Item")
    return item


def dynamodb() -> Any:
    """The authorizer's client, made on first use (tests reset it with ``reset()``)."""
    global _dynamodb
    if _dynamodb is None:
        # Two quick attempts: API Gateway waits at most 10 s for a decision, and a caller retries a 503.
        config = Config(retries={"mode": "standard", "max_attempts": 2}, connect_timeout=1, read_timeout=2)
        _dynamodb = boto3.client("dynamodb", config=config)
    return _dynamodb


def _policy(effect: str, context: dict[str, str], method_arn: str, code: str = "", message: str = "") -> dict[str, Any]:
    """``effect`` on every method and path of the stage ``method_arn`` is in:
    ``arn:aws:execute-api:<region>:<account>:<api>/<stage>/<method>/<path>`` -> ``.../<api>/<stage>/*/*``."""
    api_and_stage = "/".join(method_arn.split("/")[:2])
    if effect == "Deny":  # what the ACCESS_DENIED gateway response puts in the error contract
        context = {**context, "error_code": code, "error_message": message}
    return {
        "principalId": context["sub"],
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [{"Action": "execute-api:Invoke", "Effect": effect, "Resource": f"{api_and_stage}/*/*"}],
        },
        "context": context,
    }
