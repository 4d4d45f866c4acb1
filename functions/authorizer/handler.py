"""The API's Lambda authorizer (TOKEN type): who is calling, and is their organization active?

A TOKEN authorizer: the decision depends on the Authorization header alone (the token, then the org
it names), API Gateway's cache key; one decision serves every route for ``authorizer_ttl_seconds``.

- The ID token is verified as Cognito's authorizer did: RS256 against the pool's JWKS (fetched once per
  container, again for an unknown ``kid`` at most every ``JWKS_REFETCH_SECONDS``), ``iss``, ``aud`` (one of
  ``TOKEN_AUDIENCES``: the app clients that sign users in), ``token_use = id``, ``exp``, and the claims read of
  Cognito's types (``_STRING_CLAIMS`` strings, the groups a list of them). Anything else is ``Unauthorized``.
- A caller in an org: ONE BatchGetItem, strongly consistent and projected, of the org item and the caller's own
  user item. The caller's access is what the table says now, not what the token said when it was issued: a Deny
  (403, cached like an Allow) that ends the session (``session_ended``, one message) when the org is missing or
  being deleted, when the user item is missing, when its stored sign-in subject (``stamps.SIGN_IN_SUBJECT``) is
  not the token's ``sub`` (a deleted and re-created user id, or org id, has a new sign-in, so a new ``sub``; an
  item without a subject is refused too); and a Deny ``org_suspended`` when the org is suspended (its users get
  back in once it is reactivated). The role handed to the functions is the item's, never the token's, with
  its ``created_at``: a ticket older than it under the user's id is a deleted namesake's (controlplane.logic.tickets).
- Operators (the ``operators`` group) read nothing; an operator username with a dot, which could pass for a
  tenant's ``<org_id>.<user_id>``, is refused. A token in no group without an org and a user is refused.
- The Allow covers every method of the stage: the decision is cached per token and reused on other
  routes, whose records (``controlplane.http.routes``) stay the only fine-grained rules.
- Fail closed: a JWKS, Secrets Manager or DynamoDB outage raises, which the stack's gateway responses answer 503
  service_unavailable (infra/api.py), never an Allow.
- Bounded: one invocation has ``DECISION_SECONDS``. The JWKS fetch waits at most ``JWKS_TIMEOUT_SECONDS`` per
  socket operation (connect, read), a container's first read of the usage plan key's secret at most
  ``tenant_keys.READ_SECONDS`` (one request). A BatchGetItem request (one botocore attempt) is started only if a whole
  one, ``REQUEST_SECONDS`` (its connect and read timeouts), ends by the deadline, ``READS`` at most, each resend
  after a random pause (at most ``PAUSE_SECONDS``, doubled each time: throttling). Then it raises, as an outage
  does; Lambda's timeout (infra AUTHORIZER_TIMEOUT) ends the invocation whatever it waits on. AWS documents a limit
  for HTTP APIs only, "Timeout for Lambda authorizer response: 10000 ms"
  (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html); its REST API
  quotas (.../api-gateway-execution-service-limits-table.html) name none: the budget is well inside.
- The Allow names the caller's usage plan key (``usageIdentifierKey``, controlplane.dal.tenant_keys).

Imports on purpose: boto3 (the runtime's), joserfc (bundled with ``cryptography``), the standard
library, ``controlplane.dal`` keys and tenant keys, and the domain errors (``controlplane.models.errors``,
which import nothing): no pydantic, no Powertools, no module more than these, for a short cold start.
"""

import base64
import binascii
import json
import logging
import os
import random
import time
import urllib.request
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import RSAKey
from joserfc.jwt import JWTClaimsRegistry

from controlplane.dal import stamps, tenant_keys
from controlplane.dal.bounded import one_attempt_client
from controlplane.dal.keys import org_key, user_key
from controlplane.dal.schema import SORT_KEY
from controlplane.models.errors import ApiError, Forbidden, session_ended, suspended_session

OPERATORS_GROUP = "operators"  # controlplane.http.auth.OPERATORS_GROUP; not imported, for the cold start
SUSPENDED = "suspended"
ROLES = ("admin", "member")  # controlplane.http.auth.ADMIN, MEMBER; not imported, for the cold start
USERNAME_SEPARATOR = "."  # controlplane.dal.directory.username: <org_id>.<user_id>; operators have none
JWKS_REFETCH_SECONDS = 30.0  # the least time between two fetches for unknown kids: a flood of bogus kids fetches once
DECISION_SECONDS = 5.0  # one invocation's budget: half the 10 s AWS documents for HTTP APIs (see above)
JWKS_TIMEOUT_SECONDS = 1.5  # per socket operation; HTTP APIs' own JWT authorizers give a JWKS endpoint 1500 ms
CONNECT_SECONDS, READ_SECONDS = 1.0, 1.0  # a BatchGetItem of two small items answers in milliseconds
REQUEST_SECONDS = CONNECT_SECONDS + READ_SECONDS  # the longest one BatchGetItem request waits
READS = 3  # BatchGetItem requests per decision at most: the first, then again after an error or unprocessed keys
PAUSE_SECONDS = 0.05  # the longest random pause before the first resend, doubled before the next
_LOCAL_HOSTS = ("http://127.0.0.1:", "http://localhost:", "http://host.docker.internal:")  # sam local: the host
_STRING_CLAIMS = ("sub", "custom:org_id", "custom:user_id", "cognito:username")  # what the decision reads
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
_clock, _sleep = time.monotonic, time.sleep  # tests replace them, to count the budget without waiting


def reset() -> None:
    """Forget the JWKS and the DynamoDB client (tests, and the local gateway on a new environment)."""
    global _jwks, _dynamodb
    _jwks = _dynamodb = None


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    deadline = _clock() + DECISION_SECONDS
    try:
        claims = verify(event.get("authorizationToken") or "")
    except Unauthorized as refused:
        logger.info("Unauthorized: %s", refused)
        raise Exception("Unauthorized") from None  # the exact message API Gateway turns into a 401
    return decide(claims, event["methodArn"], deadline)


def verify(authorization: str) -> dict[str, Any]:
    """The verified claims of ``Bearer <token>`` (the scheme in any case, RFC 7235) or a bare token."""
    scheme, _, rest = authorization.strip().partition(" ")
    token = rest.strip() if scheme.lower() == "bearer" else authorization.strip()
    if not token or " " in token or not audiences():  # joserfc would take any audience against none
        raise Unauthorized("no token, or TOKEN_AUDIENCES names no app client")
    key = _key_for(_header(token))
    try:
        decoded = jwt.decode(token, key, algorithms=[ALGORITHM])
        _claims_registry().validate(decoded.claims)
    except (JoseError, ValueError) as error:
        raise Unauthorized(f"invalid token: {error}") from None
    claims = decoded.claims  # of Cognito's types only: no mapping's keys read as groups, no list made an id
    groups = claims.get("cognito:groups", [])  # a list: a string would be split on commas into groups
    typed = isinstance(groups, list) and all(isinstance(g, str) for g in groups)
    if not claims.get("sub") or not typed or not all(isinstance(claims.get(c, ""), str) for c in _STRING_CLAIMS):
        raise Unauthorized("no subject, or a claim of a type Cognito does not sign")
    return claims


def _header(token: str) -> dict[str, Any]:
    try:
        segment = token.split(".")[0]
        header = json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    except (ValueError, binascii.Error, RecursionError):  # RecursionError: JSON nested past Python's limit
        raise Unauthorized("malformed token") from None
    if not isinstance(header, dict) or header.get("alg") != ALGORITHM or not isinstance(header.get("kid"), str):
        raise Unauthorized("not an RS256 token with a kid")
    crit = header.get("crit", [])  # joserfc iterates it before it checks its type: a TypeError, a 503
    if not (isinstance(crit, list) and all(isinstance(name, str) for name in crit)):
        raise Unauthorized("a crit header that is not a list of names")
    return header


def _key_for(header: dict[str, Any]) -> RSAKey:
    """The JWKS key the token names: a new ``kid`` (key rotation) fetches the JWKS again, rate-bounded."""
    global _jwks
    kid = header["kid"]
    now = _clock()
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
        aud={"essential": True, "values": audiences()},
        token_use={"essential": True, "value": "id"},
        exp={"essential": True},
        sub={"essential": True},
    )


def audiences() -> list[str]:
    """The app clients whose ID tokens are accepted (``TOKEN_AUDIENCES``, comma-separated): exactly
    the clients that sign users in (infra.authorizer). Empty accepts nothing."""
    return [audience.strip() for audience in os.environ["TOKEN_AUDIENCES"].split(",") if audience.strip()]


def decide(claims: dict[str, Any], method_arn: str, deadline: float | None = None) -> dict[str, Any]:
    """The policy for verified ``claims``; its reads end by ``deadline`` (``_clock()``'s time; by
    default ``DECISION_SECONDS`` from now)."""
    deadline = _clock() + DECISION_SECONDS if deadline is None else deadline
    groups = claims.get("cognito:groups") or []
    groups = groups.split(",") if isinstance(groups, str) else [str(group) for group in groups]
    operator = OPERATORS_GROUP in groups
    org_id = "" if operator else str(claims.get("custom:org_id") or "")
    user_id = "" if operator else str(claims.get("custom:user_id") or "")
    context = {"sub": str(claims["sub"]), "org_id": org_id, "user_id": user_id, "role": ""}
    context |= {"groups": ",".join(groups) if operator else "", "plan": ""}
    if operator and USERNAME_SEPARATOR in str(claims.get("cognito:username") or ""):
        return _policy("Deny", context, method_arn, "forbidden", "An operator's username may not contain a dot")
    # The caller's usage plan key (API key source AUTHORIZER), before the membership read, which starts only if it
    # can end by the deadline: a container's first reads a secret (one request, tenant_keys.READ_SECONDS at most).
    key = tenant_keys.usage_identifier_key(org_id or None, operator)
    if not operator and (refusal := _membership(context, org_id, user_id, deadline)):
        return _policy("Deny", context, method_arn, refusal.code, refusal.message)
    policy = _policy("Allow", context, method_arn)
    if key:
        policy["usageIdentifierKey"] = key
    return policy


def _membership(context: dict[str, str], org_id: str, user_id: str, deadline: float) -> ApiError | None:
    """Why a tenant caller is refused, or None: then ``context`` has the role, plan and
    user's ``created_at`` the table holds now."""
    if not (org_id and user_id):
        return Forbidden("Your sign-in names no organization and user")
    org, user = read_org_and_user(org_id, user_id, deadline)
    subject = (user or {}).get(stamps.SIGN_IN_SUBJECT, {}).get("S")
    role = (user or {}).get("role", {}).get("S")
    if org is None or stamps.DELETING in org or not subject or subject != context["sub"] or role not in ROLES:
        # The org or the user is gone: whichever, one answer (an org id made again since is another tenant's)
        return session_ended(org_id)
    if org.get("status", {}).get("S") == SUSPENDED:
        return suspended_session(org_id)
    context["role"], context["plan"] = str(role), org.get("plan", {}).get("S", "")
    context["user_created_at"] = (user or {}).get("created_at", {}).get("S", "")  # never changes for a sub: cacheable
    return None


# What each decision reads: the sort key (which is which), the org's status, plan, delete mark, the user's role,
# subject and created_at
_PROJECTION = {"#sk": SORT_KEY, "#status": "status", "#plan": "plan", "#deleting": stamps.DELETING}
_PROJECTION |= {"#role": "role", "#sub": stamps.SIGN_IN_SUBJECT, "#created": "created_at"}


def read_org_and_user(
    org_id: str, user_id: str, deadline: float
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The org item and the user item, projected: ONE BatchGetItem, strongly consistent, so a decision
    made right after a cache flush sees the write that caused the flush. After an error, or with keys
    DynamoDB left unprocessed (throttling), it is sent again: ``READS`` requests at most, each started
    only if it can end by ``deadline``, after a random pause. Then it raises (fail closed: 503)."""
    table = os.environ["TABLE_NAME"]
    org_wanted, user_wanted = org_key(org_id), user_key(org_id, user_id)
    wanted = [{name: {"S": value} for name, value in key.items()} for key in (org_wanted, user_wanted)]
    request = {
        table: {
            "Keys": wanted,
            "ConsistentRead": True,
            "ProjectionExpression": ", ".join(_PROJECTION),
            "ExpressionAttributeNames": _PROJECTION,
        }
    }
    found: list[dict[str, Any]] = []
    failure: Exception | None = None
    for sent in range(READS):
        pause = random.uniform(0, PAUSE_SECONDS * 2 ** (sent - 1)) if sent else 0.0  # "full jitter"
        if _clock() + pause + REQUEST_SECONDS > deadline:
            raise RuntimeError(f"The authorizer's {DECISION_SECONDS:g} s ran out before DynamoDB answered") from failure
        if pause:
            _sleep(pause)
        try:
            response = dynamodb().batch_get_item(RequestItems=request)
        except (BotoCoreError, ClientError) as error:  # throttled, failing, unreachable or too slow
            failure = error
            continue
        found += response.get("Responses", {}).get(table, [])
        request = response.get("UnprocessedKeys") or {}
        if not request:
            by_sort_key = {item[SORT_KEY]["S"]: item for item in found}
            return by_sort_key.get(org_wanted[SORT_KEY]), by_sort_key.get(user_wanted[SORT_KEY])
        failure = RuntimeError("DynamoDB left the authorizer's keys unprocessed")
    raise failure or RuntimeError("DynamoDB was not asked")  # READS >= 1: never


def dynamodb() -> Any:
    """The authorizer's client, made on first use (tests reset it with ``reset()``)."""
    global _dynamodb
    if _dynamodb is None:  # one attempt per call: read_org_and_user sends again, within the decision's budget
        _dynamodb = one_attempt_client("dynamodb", CONNECT_SECONDS, READ_SECONDS)
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
