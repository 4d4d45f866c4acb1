"""Where ``cpctl`` keeps its ID token, and the two ways to get one: the local development key, or a
Cognito sign-in with a username and password.

The token file is ``$CPCTL_CONFIG_DIR/token``, else ``$XDG_CONFIG_HOME/cpctl/token``, else
``~/.config/cpctl/token``; it is readable by its owner only (0600, in a 0700 folder).
"""

import base64
import json
import os
from pathlib import Path

TOKEN_FILE = "token"


def config_dir() -> Path:
    if configured := os.environ.get("CPCTL_CONFIG_DIR"):
        return Path(configured)
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "cpctl"


def token_path() -> Path:
    return config_dir() / TOKEN_FILE


def save_token(token: str) -> Path:
    path = token_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Created 0600 from the start, so the token is never readable by others, not even briefly.
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(token + "\n")
    path.chmod(0o600)  # an older file may have been created with wider permissions
    return path


def load_token() -> str | None:
    try:
        return token_path().read_text().strip() or None
    except FileNotFoundError:
        return None


def forget_token() -> bool:
    try:
        token_path().unlink()
        return True
    except FileNotFoundError:
        return False


def local_token(role: str, org_id: str | None = None, user_id: str | None = None, url: str | None = None) -> str:
    """A token for ``make run``'s gateway (at ``url``), signed with the local development key. A
    user's is read from that server's table, as ``make token ORG=... USER=...`` does: LookupError if
    they do not exist there, or it cannot be read."""
    from local import tokens  # the local stack only: joserfc and the development key

    if org_id and user_id:  # a user's token carries their sign-in's subject, from the table
        tokens.use_make_run_dynamodb(url)
        return tokens.for_user(org_id, user_id)
    return tokens.issue(role, org_id, user_id)


def role_of(token: str) -> str | None:
    """The role a user's token names (``custom:role``): read, not verified (the API verifies it)."""
    try:
        payload = token.split(".")[1]
        role = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))).get("custom:role")
    except (IndexError, ValueError, AttributeError):
        return None
    return str(role) if role else None


class SignInError(Exception):
    pass


def cognito_token(
    username: str,
    password: str,
    client_id: str,
    user_pool_id: str | None = None,
    region: str | None = None,
    new_password: str | None = None,
    cognito=None,
) -> str:
    """The ID token of a Cognito sign-in.

    With ``user_pool_id``: AdminInitiateAuth with ADMIN_USER_PASSWORD_AUTH, which needs AWS
    credentials allowed ``cognito-idp:AdminInitiateAuth`` (the flow the stack's app client enables).
    Without: InitiateAuth with USER_PASSWORD_AUTH, which needs no AWS credentials but only works
    if the app client allows that flow. A first sign-in answers NEW_PASSWORD_REQUIRED: pass
    ``new_password`` to set it.
    """
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    if cognito is None:
        region = region or (user_pool_id.split("_", 1)[0] if user_pool_id else None)
        cognito = boto3.client("cognito-idp", region_name=region)
    credentials = {"USERNAME": username, "PASSWORD": password}
    try:
        if user_pool_id:
            answer = cognito.admin_initiate_auth(
                UserPoolId=user_pool_id,
                ClientId=client_id,
                AuthFlow="ADMIN_USER_PASSWORD_AUTH",
                AuthParameters=credentials,
            )
        else:
            answer = cognito.initiate_auth(
                ClientId=client_id, AuthFlow="USER_PASSWORD_AUTH", AuthParameters=credentials
            )
        if answer.get("ChallengeName") == "NEW_PASSWORD_REQUIRED" and new_password:
            responses = {"USERNAME": username, "NEW_PASSWORD": new_password}
            common = {"ClientId": client_id, "ChallengeName": "NEW_PASSWORD_REQUIRED", "Session": answer["Session"]}
            if user_pool_id:
                answer = cognito.admin_respond_to_auth_challenge(
                    UserPoolId=user_pool_id, ChallengeResponses=responses, **common
                )
            else:
                answer = cognito.respond_to_auth_challenge(ChallengeResponses=responses, **common)
    except ClientError as error:
        raise SignInError(f"{error.response['Error']['Code']}: {error.response['Error']['Message']}") from None
    except BotoCoreError as error:
        raise SignInError(str(error)) from None
    if challenge := answer.get("ChallengeName"):
        hint = " (pass --new-password)" if challenge == "NEW_PASSWORD_REQUIRED" else ""
        raise SignInError(f"Cognito asks for {challenge}{hint}; cpctl cannot answer it")
    return answer["AuthenticationResult"]["IdToken"]
