"""Local stand-in for Cognito: ID tokens signed with a development RSA key, and its JWKS.

Tokens are RS256 JWTs (joserfc) shaped like Cognito ID tokens (``iss``, ``aud`` = the app client,
``token_use = id``, ``custom:*``, ``cognito:groups``). The local gateway serves the public key at
/.well-known/jwks.json, as Cognito serves a pool's, and the API's own authorizer
(functions/authorizer) verifies tokens against it like any other JWKS.

The key pair is DEVELOPMENT ONLY: generated on first use into .local/dev-token-key.json (ignored by
git; LOCAL_TOKEN_KEY_FILE moves it), so tokens from `make token` keep verifying across restarts
until `make reset` deletes it. No deployed stack trusts it.

A user's token carries the ``sub`` of their sign-in, which the authorizer compares with the one
stored on their user item (functions/authorizer). Without a user pool (make run), the API stores a
new random subject each time it creates a user, as Cognito makes a new ``sub`` for every user it
creates: ``for_user`` reads it from the table, so it mints tokens for users who exist, and a user
deleted and re-created gets tokens that the first one's are not. ``issue`` mints any claims (the
tests' refused tokens; operators, who have no item).

    python -m local.tokens --role operator
    python -m local.tokens --org acme --user alice    # alice's token: her subject and role, from make run's table
    python -m local.tokens --demo           # export lines: API, and make seed's demo org's OPS, ADMIN, MEMBER
"""

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from joserfc import jwt
from joserfc.jwk import RSAKey

from controlplane.logic.access import ADMIN, MEMBER
from local import ROOT, running
from local.apigw import OPERATOR, claims
from local.demo import DEMO_ORG, demo_users

ISSUER = "control-plane-local"
AUDIENCE = "control-plane-local-client"  # the app client id, as Cognito puts it in an ID token's aud
JWKS_PATH = "/.well-known/jwks.json"
LIFETIME_SECONDS = 12 * 60 * 60
KEY_BITS = 2048


def key_file() -> Path:
    return Path(os.environ.get("LOCAL_TOKEN_KEY_FILE") or ROOT / ".local" / "dev-token-key.json")


def signing_key() -> RSAKey:
    """The development key pair, made on first use. Written whole to a temporary file, then linked
    into place only if no other process got there first: two processes starting at once use one key."""
    path = key_file()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        key = RSAKey.generate_key(KEY_BITS, private=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(key.as_dict(private=True, kid=key.thumbprint())))
        os.chmod(temporary, 0o600)
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
        finally:
            temporary.unlink()
    return RSAKey.import_key(json.loads(path.read_text()))


def jwks() -> dict[str, Any]:
    """The public half, as a JWKS document like Cognito's."""
    key = signing_key()
    return {"keys": [{**key.as_dict(private=False), "kid": key.kid, "alg": "RS256", "use": "sig"}]}


def issue(
    role: str,
    org_id: str | None = None,
    user_id: str | None = None,
    lifetime: int = LIFETIME_SECONDS,
    **overrides: Any,
) -> str:
    """An ID token for an operator, or for ``user_id`` of ``org_id`` with ``role``. ``overrides``
    replace claims (the tests' wrong issuers, audiences and token uses)."""
    now = int(time.time())
    key = signing_key()
    payload = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "token_use": "id",
        "iat": now,
        "exp": now + lifetime,
        **claims(role, org_id, user_id),
        **overrides,
    }
    if role == OPERATOR:
        if "." in str(payload["cognito:username"]):  # as ops.operators refuses to create one
            raise ValueError("an operator's username may not contain a dot (reserved for <org_id>.<user_id>)")
        payload["cognito:groups"] = [payload["cognito:groups"]]  # a list in a real ID token
    return jwt.encode({"alg": "RS256", "kid": key.kid}, payload, key)


def for_user(
    org_id: str,
    user_id: str,
    lifetime: int = LIFETIME_SECONDS,
    *,
    dynamodb: Any = None,
    table: str | None = None,
    role: str | None = None,
) -> str:
    """The ID token of the user ``user_id`` of ``org_id`` as they exist now: their sign-in's subject
    and role, read (consistently) from the table the functions' environment names (or ``table``
    through the client ``dynamodb``: another process's server). LookupError if they do not exist, if
    ``role`` is given and is not theirs, or if the table cannot be read."""
    from controlplane import config
    from controlplane.dal import keys, stamps
    from controlplane.dal.codec import item as plain

    key = {name: {"S": value} for name, value in keys.user_key(org_id, user_id).items()}
    client, name = dynamodb or config.dynamodb(), table or config.settings().table_name
    try:
        found = client.get_item(TableName=name, Key=key, ConsistentRead=True)
    except (BotoCoreError, ClientError) as error:  # no DynamoDB there, or no table
        raise LookupError(
            f"Cannot read {user_id} of {org_id} from table {name} ({error}): is `make run` running?"
        ) from None
    user = plain(found.get("Item") or {})
    if not user.get(stamps.SIGN_IN_SUBJECT):
        raise LookupError(f"No user {user_id} in organization {org_id} (create them first, e.g. make seed)")
    if role is not None and role != user["role"]:
        raise LookupError(
            f"{user_id} of {org_id} has the role {user['role']}, not {role}: their token carries their item's role"
            " (leave ROLE out, or change theirs first: cpctl users update)"
        )
    return issue(str(user["role"]), org_id, user_id, lifetime, sub=str(user[stamps.SIGN_IN_SUBJECT]))


def use_make_run_dynamodb(url: str | None = None) -> None:
    """For the command line: the DynamoDB and table of the ``make run`` serving now, as its record says
    (``local.running``), unless ``url`` names another server; otherwise the functions' local
    environment and DynamoDB Local on DYNAMODB_PORT, unless AWS_ENDPOINT_URL_DYNAMODB names another."""
    from local import environment, running

    record = running.running_record() or {}
    if record.get("dynamodb") and record.get("table") and url in (None, record["url"]):
        os.environ |= {"AWS_ENDPOINT_URL_DYNAMODB": record["dynamodb"], "TABLE_NAME": record["table"]}
    environment.use_defaults()
    port = os.environ.get("DYNAMODB_PORT", "8000")
    os.environ.setdefault("AWS_ENDPOINT_URL_DYNAMODB", f"http://127.0.0.1:{port}")


def decode(token: str) -> dict[str, Any]:
    """A token's claims, its signature checked against the development key (for the tests)."""
    return dict(jwt.decode(token, signing_key(), algorithms=["RS256"]).claims)


def environment(jwks_url: str) -> dict[str, str]:
    """What the authorizer reads to trust these tokens: the local JWKS, issuer and audience."""
    return {"JWKS_URL": jwks_url, "TOKEN_ISSUER": ISSUER, "TOKEN_AUDIENCES": AUDIENCE}


def demo_exports(org_id: str | None = None) -> str:
    """Shell lines that set API to the running ``make run``'s URL (whatever its PORT; API_URL wins), and
    OPS, ADMIN and MEMBER to tokens for the org ``make seed`` fills."""
    org_id = org_id or DEMO_ORG
    admin, member = demo_users()
    lines = [
        (f"export API={running.api_url(os.environ.get('API_URL'))}", "make run's API"),
        (f"export OPS={issue(OPERATOR)}", "an operator"),
        (f"export ADMIN={for_user(org_id, admin)}", f"{admin}, admin of {org_id}"),
        (f"export MEMBER={for_user(org_id, member)}", f"{member}, member of {org_id}"),
    ]
    return "\n".join(f"{line}  # {who}" for line, who in lines)


def main() -> None:
    parser = argparse.ArgumentParser(description="Print a local ID token.")
    parser.add_argument(
        "--role", choices=[OPERATOR, ADMIN, MEMBER], default=OPERATOR, help="a user's comes from their item"
    )
    parser.add_argument("--org", help="org_id (admins and members)")
    parser.add_argument("--user", help="user_id (admins and members)")
    parser.add_argument("--demo", action="store_true", help="export lines for the demo org's three roles")
    args = parser.parse_args()
    a_user = bool(args.org and args.user)
    if not args.demo and bool(args.org) != bool(args.user):  # not an operator's token, with every right
        parser.error(
            "a user's token names both --org and --user (make token ORG=acme USER=alice); an operator's, neither"
        )
    if args.role != OPERATOR and not (args.demo or a_user):
        parser.error(f"a {args.role} needs --org and --user")
    if not (args.demo or a_user):
        print(issue(OPERATOR))
        return
    use_make_run_dynamodb()
    try:
        role = None if args.role == OPERATOR else args.role  # given: it must be the user's own
        print(demo_exports(args.org) if args.demo else for_user(args.org, args.user, role=role))
    except LookupError as error:
        parser.exit(1, f"{error}\n")


if __name__ == "__main__":
    main()
