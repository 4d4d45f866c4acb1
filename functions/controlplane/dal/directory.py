"""The sign-in side of a user: their Cognito user, kept in step with the table.

The token's claims (``custom:org_id``, ``custom:user_id``, ``custom:role``) come from these
attributes, so this is what authorization trusts. The username is ``<org_id>.<user_id>``: slugs
have no dots, so it is unique across orgs and never ambiguous.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from controlplane.models.errors import AlreadyExists, InvalidRequest, ServiceUnavailable
from controlplane.observability import tracer

if TYPE_CHECKING:
    from types_boto3_cognito_idp import CognitoIdentityProviderClient

_THROTTLING = {"TooManyRequestsException", "LimitExceededException"}


# The API's fields that are also sign-in attributes (the invitation and password resets use email).
SYNCED = {"role": "custom:role", "email": "email"}
# Set with every address the API writes. The pool recovers accounts by e-mail only, and Cognito sends a
# reset code only to a verified address, while invited users never verify theirs: the admin who creates
# or edits the user vouches for it (docs/SECURITY.md). Without it in the same call, Cognito would also
# mark a changed address unverified.
VERIFIED_EMAIL = {"email_verified": "true"}


def username(org_id: str, user_id: str) -> str:
    return f"{org_id}.{user_id}"


def subject_of(attributes: list[Any]) -> str:
    """The ``sub`` among a Cognito user's attributes; a user without one is an error, never a blank."""
    subject = next((a["Value"] for a in attributes if a["Name"] == "sub"), "")
    if not subject:
        raise RuntimeError("Cognito returned a user without a sub")
    return str(subject)


@contextmanager
def _translate(exists: AlreadyExists | None = None) -> Iterator[None]:
    try:
        yield
    except ClientError as error:
        code = error.response["Error"]["Code"]
        if code in _THROTTLING:
            raise ServiceUnavailable("The sign-in directory is busy; retry later") from None
        if code == "UsernameExistsException" and exists:
            raise exists from None
        if code == "InvalidParameterException":  # what was sent (an address Cognito will not take): a 422
            message = error.response["Error"].get("Message", "")
            raise InvalidRequest(f"The sign-in directory refused this user: {message}") from None
        raise


class NoSignIn(Exception):
    """The user has no sign-in: an import has not made it yet, or Cognito refused it."""


class SignInRefused(Exception):
    """Cognito refused a sign-in for a reason of the request's own (a bad address, the e-mail
    quota...): for a job, the row's outcome, in Cognito's words."""


class Directory:
    def __init__(self, client: "CognitoIdentityProviderClient", user_pool_id: str):
        self.client = client
        self.pool = user_pool_id

    @tracer.capture_method
    def create(self, org_id: str, user_id: str, email: str, role: str) -> str:
        """Create the sign-in; Cognito e-mails the invitation with a temporary password. Returns its
        ``sub``: Cognito makes a new one for every user it creates, so a sign-in re-created under the
        same username has another, and the tokens of the first are told apart from the second's."""
        attributes = {"email": email, **VERIFIED_EMAIL}
        attributes |= {"custom:org_id": org_id, "custom:user_id": user_id, "custom:role": role}
        with _translate(exists=AlreadyExists(f"A sign-in {username(org_id, user_id)} is left over; DELETE the user")):
            created = self.client.admin_create_user(
                UserPoolId=self.pool,
                Username=username(org_id, user_id),
                UserAttributes=[{"Name": name, "Value": value} for name, value in attributes.items()],
                DesiredDeliveryMediums=["EMAIL"],
            )
        return subject_of(created["User"].get("Attributes", []))

    @tracer.capture_method
    def subject(self, org_id: str, user_id: str) -> str:
        """The ``sub`` of an existing sign-in (the subject backfill, ops/sign_in_subjects.py)."""
        with _translate():
            user = self.client.admin_get_user(UserPoolId=self.pool, Username=username(org_id, user_id))
        return subject_of(user["UserAttributes"])

    def create_or_refusal(self, org_id: str, user_id: str, email: str, role: str) -> str:
        """``create`` (its subject), with Cognito's refusal of this one sign-in as ``SignInRefused``
        (throttling is still 503, an existing sign-in ``AlreadyExists``)."""
        try:
            return self.create(org_id, user_id, email, role)
        except ClientError as error:
            raise SignInRefused(
                f"{error.response['Error']['Code']}: {error.response['Error'].get('Message', '')}"
            ) from None
        except InvalidRequest as refused:
            raise SignInRefused(refused.message) from None

    @tracer.capture_method
    def user_ids(self, org_id: str) -> list[str]:
        """The user ids of every sign-in of the org, found by name (ListUsers on the prefix
        ``<org_id>.``, 60 a page; slugs have no dots, so no other org's), every page read before any
        is acted on: a page token need not survive deletes of the users it lists."""
        found: list[str] = []
        token: dict[str, str] = {}
        while True:
            with _translate():
                page = self.client.list_users(
                    UserPoolId=self.pool, Filter=f'username ^= "{username(org_id, "")}"', Limit=60, **token
                )
            found += [user["Username"].split(".", 1)[1] for user in page["Users"]]
            if not page.get("PaginationToken"):
                return found
            token = {"PaginationToken": page["PaginationToken"]}

    @tracer.capture_method
    def attributes(self, org_id: str, user_id: str) -> dict[str, str]:
        """The sign-in's attributes; ``NoSignIn`` if there is none."""
        try:
            with _translate():
                user = self.client.admin_get_user(UserPoolId=self.pool, Username=username(org_id, user_id))
        except ClientError as error:
            if error.response["Error"]["Code"] == "UserNotFoundException":
                raise NoSignIn(username(org_id, user_id)) from None
            raise
        return {a["Name"]: a["Value"] for a in user["UserAttributes"]}

    @tracer.capture_method
    def set_attributes(self, org_id: str, user_id: str, attributes: dict[str, str]) -> None:
        """Change the sign-in's attributes; ``NoSignIn`` if there is none (its user's delete removed it)."""
        if "email" in attributes:
            attributes = {**attributes, **VERIFIED_EMAIL}
        try:
            with _translate():
                self.client.admin_update_user_attributes(
                    UserPoolId=self.pool,
                    Username=username(org_id, user_id),
                    UserAttributes=[{"Name": name, "Value": value} for name, value in attributes.items()],
                )
        except ClientError as error:
            if error.response["Error"]["Code"] == "UserNotFoundException":
                raise NoSignIn(username(org_id, user_id)) from None
            raise

    @tracer.capture_method
    def delete(self, org_id: str, user_id: str) -> None:
        """Remove the sign-in; one that is already gone is fine (a retried delete)."""
        try:
            with _translate():
                self.client.admin_delete_user(UserPoolId=self.pool, Username=username(org_id, user_id))
        except ClientError as error:
            if error.response["Error"]["Code"] != "UserNotFoundException":
                raise

    @tracer.capture_method
    def disable(self, org_id: str, user_id: str) -> bool:
        """No new sign-in, and every session's refresh tokens revoked (its ID tokens live out their
        hour: the authorizer refuses a suspended org's callers). False if the sign-in is gone."""
        name = username(org_id, user_id)
        return self._present(lambda: self.client.admin_disable_user(UserPoolId=self.pool, Username=name)) and (
            self._present(lambda: self.client.admin_user_global_sign_out(UserPoolId=self.pool, Username=name))
        )

    @tracer.capture_method
    def enable(self, org_id: str, user_id: str) -> bool:
        name = username(org_id, user_id)
        return self._present(lambda: self.client.admin_enable_user(UserPoolId=self.pool, Username=name))

    @staticmethod
    def _present(call: Callable[[], object]) -> bool:
        """Run ``call`` on a sign-in; False if it is gone (its user was deleted meanwhile): disabling
        or enabling it again is then nothing to do. Running twice is harmless, so a job may repeat."""
        try:
            with _translate():
                call()
        except ClientError as error:
            if error.response["Error"]["Code"] != "UserNotFoundException":
                raise
            return False
        return True
