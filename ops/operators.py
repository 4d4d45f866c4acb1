"""Create an operator's sign-in: a Cognito user in the ``operators`` group, refused if its username
breaks the sign-in naming rule. Org users' usernames are ``<org_id>.<user_id>``
(controlplane.dal.directory.username), so an operator's has no dot: one with a dot could pass for an
org user's, and the authorizer refuses an operator's token whose username has one.

    make operator USERNAME=ops-alice EMAIL=alice@example.com USER_POOL_ID=<the stack's UserPoolId>

Cognito e-mails the invitation with a temporary password, as for org users.
"""

import argparse
import re
import sys

import boto3

from controlplane import config
from controlplane.dal.directory import subject_of
from controlplane.http.auth import OPERATORS_GROUP

# Cognito's own username rule, less the dot, which is reserved for <org_id>.<user_id>.
USERNAME = re.compile(r"^[A-Za-z0-9_+=,@-]{1,128}$")


def refusal(username: str) -> str | None:
    """Why ``username`` may not be an operator's, or None."""
    if "." in username:
        return f"{username!r}: an operator's username may not contain a dot (reserved for <org_id>.<user_id>)"
    if not USERNAME.match(username):
        return f"{username!r}: letters, digits and _+=,@- only, 1 to 128 of them"
    return None


def create(cognito, pool_id: str, username: str, email: str) -> str:
    """The operator's sign-in, in the operators group; returns its ``sub``. ValueError if refused.
    Safe to run again: a sign-in of that name and address made by a run that stopped before the
    group add is put in the group; one of another address is someone else's, and refused."""
    if why := refusal(username):
        raise ValueError(why)
    try:
        created = cognito.admin_create_user(
            UserPoolId=pool_id,
            Username=username,
            UserAttributes=[{"Name": "email", "Value": email}, {"Name": "email_verified", "Value": "true"}],
            DesiredDeliveryMediums=["EMAIL"],
        )["User"].get("Attributes", [])
    except cognito.exceptions.UsernameExistsException:
        created = cognito.admin_get_user(UserPoolId=pool_id, Username=username)["UserAttributes"]
        if next((a["Value"] for a in created if a["Name"] == "email"), None) != email:
            raise ValueError(f"{username!r} exists already, with another e-mail: not made an operator") from None
    cognito.admin_add_user_to_group(UserPoolId=pool_id, Username=username, GroupName=OPERATORS_GROUP)
    return subject_of(created)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--user-pool-id", required=True)
    parser.add_argument("--username", required=True)
    parser.add_argument("--email", required=True)
    args = parser.parse_args(argv)
    # make operator passes "" for a variable left off its command line: refused here, not by botocore's traceback.
    given = (("--user-pool-id", args.user_pool_id), ("--username", args.username), ("--email", args.email))
    for option, value in given:
        if not value:
            parser.error(f"{option} is empty (make operator USERNAME=... EMAIL=... USER_POOL_ID=...)")
    try:
        create(boto3.client("cognito-idp", config=config.CLIENT_CONFIG), args.user_pool_id, args.username, args.email)
    except ValueError as refused:
        parser.exit(2, f"{refused}\n")
    print(f"Operator {args.username} created; Cognito e-mails the invitation.", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
