"""Who may call the API: a Cognito user pool of invited users, the operators group, one app client.

Users never sign themselves up: the users function creates each one (``<org_id>.<user_id>``, with
custom ``org_id``, ``user_id`` and ``role``) and Cognito e-mails the invitation. The ID token carries
those attributes as claims; the API's Lambda authorizer verifies it and passes them to the functions.
"""

from aws_cdk import Acknowledgment, Annotations, Aws, RemovalPolicy, Validations
from aws_cdk import aws_cognito as cognito
from constructs import Construct

from controlplane.logic.access import OPERATORS_GROUP
from infra.constants import (
    COGNITO_DEFAULT_EMAILS_PER_DAY,
    INVITATION_SENDER,
    PASSWORD_MIN_LENGTH,
    SIGN_IN_DOMAIN,
    TEMPORARY_PASSWORD_VALIDITY,
    USER_ATTRIBUTES,
)

EMAIL_QUOTA_WARNING = "@controlplane/identity:cognitoEmailQuota"


def ses_email(identity: str, region: str | None) -> cognito.UserPoolEmail:
    """Cognito sends through SES (DEVELOPER), from ``identity`` if it is an address, else from
    no-reply@<identity>, with the identity's quota rather than Cognito's own."""
    domain = None if "@" in identity else identity
    return cognito.UserPoolEmail.with_ses(
        from_email=identity if domain is None else f"{INVITATION_SENDER}@{domain}",
        ses_verified_domain=domain,
        ses_region=region or Aws.REGION,  # the stack's, resolved at deploy time
    )


class Identity(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        protected: bool,
        stage: str,
        removal_policy: RemovalPolicy,
        ses_identity: str | None = None,
        ses_region: str | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self._stage = stage
        self.user_pool = cognito.UserPool(
            self,
            "UserPool",
            self_sign_up_enabled=False,
            # The username, not the e-mail: one address may belong to users of two orgs.
            sign_in_aliases=cognito.SignInAliases(username=True),
            sign_in_case_sensitive=False,
            standard_attributes=cognito.StandardAttributes(
                email=cognito.StandardAttribute(required=True, mutable=True)
            ),
            custom_attributes={name: cognito.StringAttribute(mutable=True) for name in USER_ATTRIBUTES},
            password_policy=cognito.PasswordPolicy(
                min_length=PASSWORD_MIN_LENGTH,
                require_lowercase=True,
                require_uppercase=True,
                require_digits=True,
                require_symbols=True,
                temp_password_validity=TEMPORARY_PASSWORD_VALIDITY,
            ),
            mfa=cognito.Mfa.OPTIONAL,
            mfa_second_factor=cognito.MfaSecondFactor(otp=True, sms=False),
            account_recovery=cognito.AccountRecovery.EMAIL_ONLY,
            email=ses_email(ses_identity, ses_region) if ses_identity else None,
            feature_plan=cognito.FeaturePlan.ESSENTIALS,
            deletion_protection=protected,
            removal_policy=removal_policy,
        )
        if protected and not ses_identity:
            Annotations.of(self.user_pool).add_warning_v2(
                EMAIL_QUOTA_WARNING,
                f"No ses_identity: the user pool sends its e-mail with Cognito's own, which sends at most "
                f"{COGNITO_DEFAULT_EMAILS_PER_DAY} messages a day for the account (invitations and password "
                "resets together). Past it, creating a user fails and is rolled back (503). Verify an SES "
                "identity and deploy with -c ses_identity=<domain or address> (README, Deploy).",
            )
        cognito.UserPoolGroup(
            self,
            "Operators",
            user_pool=self.user_pool,
            group_name=OPERATORS_GROUP,
            description="Operators of the control plane: every route, in every organization",
        )
        self.client = self.user_pool.add_client(
            "Client",
            generate_secret=False,  # public clients (browsers, CLIs) cannot keep one
            disable_o_auth=True,  # no hosted UI: tokens come from InitiateAuth
            # SRP for applications: the password never leaves the client. ADMIN_USER_PASSWORD_AUTH for
            # operators' scripts: it needs IAM credentials (cognito-idp:AdminInitiateAuth), so it
            # opens nothing to the internet. Plain USER_PASSWORD_AUTH is left off.
            auth_flows=cognito.AuthFlow(user_srp=True, admin_user_password=True),
            prevent_user_existence_errors=True,
            read_attributes=cognito.ClientAttributes()
            .with_standard_attributes(email=True, email_verified=True, fullname=True)
            .with_custom_attributes(*USER_ATTRIBUTES),
            # Never the custom attributes: a user who could write custom:role or custom:org_id would
            # choose their own permissions. The list must not be empty either: Cognito reads an empty
            # list as "not set" and then lets users write every attribute. And it holds every attribute
            # the pool requires (email): CreateUserPoolClient refuses a client that cannot write one,
            # "Invalid write attributes specified while creating a client".
            write_attributes=cognito.ClientAttributes().with_standard_attributes(fullname=True, email=True),
        )
        Validations.of(self.user_pool).acknowledge(
            Acknowledgment(
                id="AwsSolutions-COG2",
                reason="MFA is optional (TOTP) rather than required: users arrive by an e-mailed invitation and "
                "would have to enrol an authenticator before their first call; operators are expected to enrol.",
            ),
            Acknowledgment(
                id="AwsSolutions-COG8",
                reason="Essentials, not Plus: threat protection is billed per monthly active user, a cost "
                "decision for production; a strong password policy, optional MFA and no self sign-up apply now.",
            ),
        )

    def add_console_client(self, console_url: str) -> tuple[cognito.UserPoolDomain, cognito.UserPoolClient]:
        """Cognito's managed login for the console: the pool's domain, and a public client with the
        authorization code grant (the console always sends PKCE) that returns only to the console."""
        domain = self.user_pool.add_domain(
            "Domain",
            # Unique per account and stage in the region; lower case, and no reserved word in it (StageConfig).
            cognito_domain=cognito.CognitoDomainOptions(
                domain_prefix=f"{SIGN_IN_DOMAIN}-{self._stage}-{Aws.ACCOUNT_ID}"
            ),
            managed_login_version=cognito.ManagedLoginVersion.NEWER_MANAGED_LOGIN,
        )
        client = self.user_pool.add_client(
            "ConsoleClient",
            generate_secret=False,  # a browser cannot keep a secret: PKCE instead
            auth_flows=cognito.AuthFlow(user_srp=True),
            o_auth=cognito.OAuthSettings(
                flows=cognito.OAuthFlows(authorization_code_grant=True),
                scopes=[cognito.OAuthScope.OPENID, cognito.OAuthScope.EMAIL, cognito.OAuthScope.PROFILE],
                callback_urls=[console_url],
                logout_urls=[console_url],
            ),
            supported_identity_providers=[cognito.UserPoolClientIdentityProvider.COGNITO],
            prevent_user_existence_errors=True,
            read_attributes=cognito.ClientAttributes()
            .with_standard_attributes(email=True, email_verified=True, fullname=True)
            .with_custom_attributes(*USER_ATTRIBUTES),
            write_attributes=cognito.ClientAttributes().with_standard_attributes(fullname=True, email=True),
        )
        # Managed login pages need a style; Cognito's own is enough.
        cognito.CfnManagedLoginBranding(
            self,
            "ConsoleLoginBranding",
            user_pool_id=self.user_pool.user_pool_id,
            client_id=client.user_pool_client_id,
            use_cognito_provided_values=True,
        )
        return domain, client
