"""The sign-in side of a user: their Cognito user, kept in step with the table.

The token's claims (``custom:org_id``, ``custom:user_id``, ``custom:role``) come from these
attributes, so this is what authorization trusts. The username is ``<org_id>.<user_id>``: slugs
have no dots, so it is unique across orgs and never ambiguous.
"""

from contextlib import contextmanager

from botocore.exceptions import ClientError

from controlplane.errors import AlreadyExists, ServiceUnavailable
from controlplane.observability import tracer

_THROTTLING = {"TooManyRequestsException", "LimitExceededException"}


def username(org_id: str, user_id: str) -> str:
    return f"{org_id}.{user_id}"


@contextmanager
def _translate(exists: AlreadyExists | None = None):
    try:
        yield
    except ClientError as error:
        code = error.response["Error"]["Code"]
        if code in _THROTTLING:
            raise ServiceUnavailable() from None
        if code == "UsernameExistsException" and exists:
            raise exists from None
        raise


class Directory:
    def __init__(self, client, user_pool_id: str):
        self.client = client
        self.pool = user_pool_id

    @tracer.capture_method
    def create(self, org_id: str, user_id: str, email: str, role: str) -> None:
        """Create the sign-in; Cognito e-mails the invitation with a temporary password."""
        attributes = {"email": email, "custom:org_id": org_id, "custom:user_id": user_id, "custom:role": role}
        with _translate(exists=AlreadyExists(f"A sign-in {username(org_id, user_id)} is left over; DELETE the user")):
            self.client.admin_create_user(
                UserPoolId=self.pool,
                Username=username(org_id, user_id),
                UserAttributes=[{"Name": name, "Value": value} for name, value in attributes.items()],
                DesiredDeliveryMediums=["EMAIL"],
            )

    @tracer.capture_method
    def role(self, org_id: str, user_id: str) -> str | None:
        with _translate():
            user = self.client.admin_get_user(UserPoolId=self.pool, Username=username(org_id, user_id))
        return next((a["Value"] for a in user["UserAttributes"] if a["Name"] == "custom:role"), None)

    @tracer.capture_method
    def set_role(self, org_id: str, user_id: str, role: str) -> None:
        with _translate():
            self.client.admin_update_user_attributes(
                UserPoolId=self.pool,
                Username=username(org_id, user_id),
                UserAttributes=[{"Name": "custom:role", "Value": role}],
            )

    @tracer.capture_method
    def delete(self, org_id: str, user_id: str) -> None:
        """Remove the sign-in; one that is already gone is fine (a retried delete)."""
        try:
            with _translate():
                self.client.admin_delete_user(UserPoolId=self.pool, Username=username(org_id, user_id))
        except ClientError as error:
            if error.response["Error"]["Code"] != "UserNotFoundException":
                raise
