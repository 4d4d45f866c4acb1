"""Local stand-in for Cognito: ID tokens signed with a development key, and their verification.

The local gateway verifies the bearer token as API Gateway's Cognito authorizer does (signature,
expiry, ``token_use``) and hands the handlers the same claims. Tokens are JWTs (HS256, joserfc)
shaped like Cognito ID tokens. The key is for development only: set LOCAL_TOKEN_KEY to change it.

    python -m local.tokens --role operator
    python -m local.tokens --org acme --user alice --role admin
    python -m local.tokens --demo           # export lines for make seed's demo org: OPS, ADMIN, MEMBER
"""

import argparse
import os
import time

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import OctKey
from joserfc.jwt import JWTClaimsRegistry

from controlplane.http.auth import ADMIN, MEMBER
from local.apigw import OPERATOR, claims

ISSUER = "control-plane-local"
LIFETIME_SECONDS = 12 * 60 * 60
_DEVELOPMENT_KEY = "local-development-key-never-use-in-the-cloud"
_CLAIMS = JWTClaimsRegistry(
    iss={"essential": True, "value": ISSUER},
    exp={"essential": True},
    sub={"essential": True},
    token_use={"essential": True, "value": "id"},
)


def _key() -> OctKey:
    return OctKey.import_key(os.environ.get("LOCAL_TOKEN_KEY", _DEVELOPMENT_KEY))


def issue(role: str, org_id: str | None = None, user_id: str | None = None, lifetime: int = LIFETIME_SECONDS) -> str:
    """An ID token for an operator, or for ``user_id`` of ``org_id`` with ``role``."""
    now = int(time.time())
    who = claims(role, org_id, user_id)
    return jwt.encode(
        {"alg": "HS256"}, {"iss": ISSUER, "token_use": "id", "iat": now, "exp": now + lifetime, **who}, _key()
    )


def verify(authorization: str | None) -> dict[str, str] | None:
    """The claims API Gateway's authorizer would pass on for this Authorization header (the raw
    token, or ``Bearer <token>``), or None when it would answer 401."""
    scheme, _, rest = (authorization or "").strip().partition(" ")
    token = rest.strip() if scheme.lower() == "bearer" else (authorization or "").strip()  # any case: RFC 7235
    if not token:
        return None
    try:
        decoded = jwt.decode(token, _key(), algorithms=["HS256"])
        _CLAIMS.validate(decoded.claims)
    except (JoseError, ValueError):
        return None
    # API Gateway passes every claim as a string; the groups claim as "a,b".
    return {name: ",".join(value) if isinstance(value, list) else str(value) for name, value in decoded.claims.items()}


def demo_exports(org_id: str | None = None) -> str:
    """Shell lines that set OPS, ADMIN and MEMBER to tokens for the org ``make seed`` fills."""
    from local.seed import DEMO_ORG, demo_users  # the seed decides who is who; imported here, as it imports us

    org_id = org_id or DEMO_ORG
    admin, member = demo_users()
    lines = [
        (f"export OPS={issue(OPERATOR)}", "an operator"),
        (f"export ADMIN={issue(ADMIN, org_id, admin)}", f"{admin}, admin of {org_id}"),
        (f"export MEMBER={issue(MEMBER, org_id, member)}", f"{member}, member of {org_id}"),
    ]
    return "\n".join(f"{line}  # {who}" for line, who in lines)


def main() -> None:
    parser = argparse.ArgumentParser(description="Print a local ID token.")
    parser.add_argument("--role", choices=[OPERATOR, ADMIN, MEMBER], default=OPERATOR)
    parser.add_argument("--org", help="org_id (admins and members)")
    parser.add_argument("--user", help="user_id (admins and members)")
    parser.add_argument("--demo", action="store_true", help="export lines for the demo org's three roles")
    args = parser.parse_args()
    if args.demo:
        print(demo_exports(args.org))
        return
    if args.role != OPERATOR and not (args.org and args.user):
        parser.error(f"a {args.role} needs --org and --user")
    print(issue(args.role, args.org, args.user))


if __name__ == "__main__":
    main()
