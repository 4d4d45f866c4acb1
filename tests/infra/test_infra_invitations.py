"""Invitations and password resets over SES (context key ``ses_identity``): the pool sends through the
identity, with its quota; prod without one warns at synth, naming the quota Cognito's own e-mail hits."""

import aws_cdk as cdk
import pytest
from aws_cdk import RemovalPolicy
from aws_cdk.assertions import Annotations, Match, Template

from infra.config import StageConfig
from infra.constants import COGNITO_DEFAULT_EMAILS_PER_DAY
from infra.identity import EMAIL_QUOTA_WARNING, Identity
from tests.infra.iam_policy import ACCOUNT, REGION, resolve


def _email_configuration(template: dict) -> dict | None:
    [pool] = [r["Properties"] for r in template["Resources"].values() if r["Type"] == "AWS::Cognito::UserPool"]
    return pool.get("EmailConfiguration")


def _identity_stack(*, protected: bool, ses_identity: str | None = None, ses_region: str | None = None) -> cdk.Stack:
    stack = cdk.Stack(cdk.App())
    Identity(
        stack,
        "Identity",
        protected=protected,
        stage="prod" if protected else "dev",
        removal_policy=RemovalPolicy.DESTROY,
        ses_identity=ses_identity,
        ses_region=ses_region,
    )
    return stack


def _quota_warnings(stack: cdk.Stack) -> list:
    return Annotations.from_stack(stack).find_warning(
        "*", Match.string_like_regexp(f"at most {COGNITO_DEFAULT_EMAILS_PER_DAY} ")
    )


def test_a_domain_identity_sends_through_ses_from_no_reply_at_the_domain(templates):
    # Given a stage deployed with -c ses_identity=example.com
    configuration = _email_configuration(templates["shared"].to_json())

    # Then Cognito sends with SES, from the verified domain, in the stack's region
    assert configuration["EmailSendingAccount"] == "DEVELOPER"
    assert configuration["From"] == "no-reply@example.com"
    assert resolve({}, configuration["SourceArn"]) == f"arn:aws:ses:{REGION}:{ACCOUNT}:identity/example.com"


def test_an_address_identity_in_another_region_sends_from_that_address():
    stack = _identity_stack(protected=True, ses_identity="invites@example.org", ses_region="us-east-1")

    configuration = _email_configuration(Template.from_stack(stack).to_json())

    assert configuration["From"] == "invites@example.org"
    assert resolve({}, configuration["SourceArn"]) == f"arn:aws:ses:us-east-1:{ACCOUNT}:identity/invites@example.org"


def test_without_an_identity_the_pool_uses_cognitos_own_email(dev):
    assert _email_configuration(dev) in (None, {"EmailSendingAccount": "COGNITO_DEFAULT"})


def test_prod_without_an_identity_warns_at_synth_naming_the_quota(stacks):
    [warning] = _quota_warnings(stacks["prod"])

    assert warning.id.endswith("/Identity/UserPool")
    assert "ses_identity" in warning.entry.data and EMAIL_QUOTA_WARNING in warning.entry.data


@pytest.mark.parametrize("stack", ["dev", "shared"])
def test_no_quota_warning_outside_prod(stacks, stack):
    assert _quota_warnings(stacks[stack]) == []


def test_no_quota_warning_for_prod_with_an_identity():
    assert _quota_warnings(_identity_stack(protected=True, ses_identity="example.com")) == []


@pytest.mark.parametrize(
    ("context", "expected"),
    [
        ({"ses_identity": "example.com"}, "example.com"),
        ({"stage": "prod", "ses_identity": {"prod": "mail.example.com", "dev": "dev.example.com"}}, "mail.example.com"),
        ({"ses_identity": {"prod": "mail.example.com"}}, None),  # dev has none
        ({}, None),
    ],
)
def test_ses_identity_context_key_may_differ_by_stage(context, expected):
    assert StageConfig.from_context(cdk.App(context=context).node).ses_identity == expected


@pytest.mark.parametrize(
    "context",
    [
        {"ses_identity": "not an identity"},
        {"ses_identity": "example.com", "ses_region": "Ireland"},
        {"ses_region": "eu-west-1"},  # a region for no identity
    ],
)
def test_a_bad_ses_setting_is_refused_at_synth(context):
    with pytest.raises(ValueError, match="ses_"):
        StageConfig.from_context(cdk.App(context=context).node)
