"""The user pool: invited users only, the claims the functions authorize with, the operators group."""

from controlplane.logic.access import OPERATORS_GROUP

CLAIMS = {"custom:org_id", "custom:user_id", "custom:role"}  # what controlplane.http.auth reads from the ID token


def _only(template: dict, resource_type: str) -> tuple[str, dict]:
    """The one resource of that type; of the app clients, the API's (the console has its own: test_infra_console)."""
    [(logical_id, resource)] = [
        (k, r) for k, r in template["Resources"].items() if r["Type"] == resource_type and "ConsoleClient" not in k
    ]
    return logical_id, resource


def test_user_pool_has_the_three_custom_attributes_and_a_required_email(dev):
    _, pool = _only(dev, "AWS::Cognito::UserPool")

    schema = {attribute["Name"]: attribute for attribute in pool["Properties"]["Schema"]}

    assert schema["email"]["Required"] is True
    for name in ("org_id", "user_id", "role"):
        assert schema[name]["AttributeDataType"] == "String"
        assert schema[name]["Mutable"] is True


def test_only_admins_create_users_who_sign_in_by_username(dev):
    _, pool = _only(dev, "AWS::Cognito::UserPool")
    properties = pool["Properties"]

    assert properties["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"] is True  # no self sign-up
    # <org_id>.<user_id>, not the e-mail, which may belong to users of two orgs
    assert "UsernameAttributes" not in properties
    assert "AliasAttributes" not in properties
    assert properties["UsernameConfiguration"] == {"CaseSensitive": False}


def test_passwords_are_strong_mfa_is_offered_and_recovery_is_by_email(dev):
    _, pool = _only(dev, "AWS::Cognito::UserPool")
    properties = pool["Properties"]

    policy = properties["Policies"]["PasswordPolicy"]
    assert policy["MinimumLength"] >= 12
    assert all(policy[key] for key in ("RequireLowercase", "RequireUppercase", "RequireNumbers", "RequireSymbols"))
    assert properties["MfaConfiguration"] == "OPTIONAL"
    assert properties["EnabledMfas"] == ["SOFTWARE_TOKEN_MFA"]
    assert properties["AccountRecoverySetting"]["RecoveryMechanisms"] == [{"Name": "verified_email", "Priority": 1}]


def test_operators_group_is_in_the_pool(dev):
    pool_id, _ = _only(dev, "AWS::Cognito::UserPool")
    _, group = _only(dev, "AWS::Cognito::UserPoolGroup")

    assert group["Properties"]["GroupName"] == OPERATORS_GROUP == "operators"
    assert group["Properties"]["UserPoolId"] == {"Ref": pool_id}


def test_app_client_is_public_signs_in_with_srp_or_iam_and_has_no_oauth(dev):
    pool_id, _ = _only(dev, "AWS::Cognito::UserPool")
    _, client = _only(dev, "AWS::Cognito::UserPoolClient")
    properties = client["Properties"]

    assert properties["UserPoolId"] == {"Ref": pool_id}
    assert properties["GenerateSecret"] is False
    assert properties["AllowedOAuthFlowsUserPoolClient"] is False
    assert set(properties["ExplicitAuthFlows"]) == {
        "ALLOW_USER_SRP_AUTH",
        "ALLOW_ADMIN_USER_PASSWORD_AUTH",  # needs IAM credentials: operators' scripts
        "ALLOW_REFRESH_TOKEN_AUTH",
    }
    assert properties["PreventUserExistenceErrors"] == "ENABLED"


def test_id_token_carries_the_claims_and_users_cannot_write_them(dev):
    _, client = _only(dev, "AWS::Cognito::UserPoolClient")
    properties = client["Properties"]

    assert set(properties["ReadAttributes"]) >= CLAIMS | {"email"}
    # Not empty (Cognito reads [] as "every attribute") and no custom attribute: no one picks their own role
    assert properties["WriteAttributes"]
    assert not [name for name in properties["WriteAttributes"] if name.startswith("custom:")]


def test_prod_user_pool_is_deletion_protected_and_retained(prod):
    _, pool = _only(prod, "AWS::Cognito::UserPool")

    assert pool["Properties"]["DeletionProtection"] == "ACTIVE"
    assert pool["DeletionPolicy"] == "Retain"  # even after a failed first create: it cannot be deleted
    assert pool["UpdateReplacePolicy"] == "Retain"


def test_outputs_name_the_user_pool_and_its_client(dev):
    pool_id, _ = _only(dev, "AWS::Cognito::UserPool")
    client_id, _ = _only(dev, "AWS::Cognito::UserPoolClient")

    assert dev["Outputs"]["UserPoolId"]["Value"] == {"Ref": pool_id}
    assert dev["Outputs"]["UserPoolClientId"]["Value"] == {"Ref": client_id}
