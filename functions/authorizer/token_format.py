"""What an Authorization header must look like before the authorizer is asked: API Gateway's
identity validation expression for the TOKEN authorizer (infra.api), which the local gateway
honours too (local.authorizer). A header that does not match is 401 without a Lambda invocation, so
a flood of junk headers costs no authorizer call.

``Bearer`` in any case (RFC 7235: the scheme is case-insensitive), or no scheme at all, then a JWT:
three base64url segments. The signature segment is not empty, so ``alg: none`` stops here too.
Written with character classes, not inline flags: the same text is a Java regular expression (API
Gateway's) and a Python one, with the same meaning in both. API Gateway matches the whole header.

Then, once its signature is verified, the claims the authorizer reads have Cognito's types
(``well_typed``): anything else is refused, not turned into a string or a mapping's keys read as groups.
"""

import re
from typing import Any

IDENTITY_VALIDATION_EXPRESSION = r"^(?:[Bb][Ee][Aa][Rr][Ee][Rr] +)?[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$"
_PATTERN = re.compile(IDENTITY_VALIDATION_EXPRESSION)


def well_formed(authorization: str) -> bool:
    return _PATTERN.fullmatch(authorization) is not None


_STRING_CLAIMS = ("sub", "custom:org_id", "custom:user_id", "cognito:username")


def well_typed(claims: dict[str, Any]) -> bool:
    """Strings where the decision reads strings, and the groups a list of strings (or one string)."""
    groups = claims.get("cognito:groups", [])
    listed = isinstance(groups, str) or (isinstance(groups, list) and all(isinstance(g, str) for g in groups))
    return listed and all(isinstance(claims.get(name, ""), str) for name in _STRING_CLAIMS)
