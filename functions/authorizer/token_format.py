"""What an Authorization header must look like before the authorizer is asked: API Gateway's
identity validation expression for the TOKEN authorizer (infra.api), which the local gateway
honours too (local.authorizer). A header that does not match is 401 without a Lambda invocation, so
a flood of junk headers costs no authorizer call.

``Bearer`` in any case (RFC 7235: the scheme is case-insensitive), or no scheme at all, then a JWT:
three base64url segments. The signature segment is not empty, so ``alg: none`` stops here too.
Written with character classes, not inline flags: the same text is a Java regular expression (API
Gateway's) and a Python one, with the same meaning in both. API Gateway matches the whole header.
"""

import re

IDENTITY_VALIDATION_EXPRESSION = r"^(?:[Bb][Ee][Aa][Rr][Ee][Rr] +)?[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$"
_PATTERN = re.compile(IDENTITY_VALIDATION_EXPRESSION)


def well_formed(authorization: str) -> bool:
    return _PATTERN.fullmatch(authorization) is not None
