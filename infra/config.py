"""What may differ between deployments, read from CDK context (``-c key=value`` or cdk.json)."""

import os
import re
from dataclasses import dataclass

from constructs import Node

from controlplane.lifecycle.activity import DEFAULT_RETENTION_DAYS
from controlplane.models import plans
from infra.constants import (
    ACCOUNT_BURST_CAP,
    COGNITO_RESERVED_WORDS,
    DEFAULT_ACCOUNT_RPS_LIMIT,
    DEFAULT_AUTHORIZER_TTL_SECONDS,
    DEFAULT_EVENTS_ARCHIVE_DAYS,
    DEFAULT_WAF_RATE_LIMIT,
    MAX_AUTHORIZER_TTL_SECONDS,
    PROTECTED_STAGES,
    SNAP_START_REGIONS,
    STACK_NAME,
    WAF_MIN_RATE_LIMIT,
)

_STAGE_PATTERN = re.compile(r"^[a-z][a-z0-9]{0,15}$")  # a valid API Gateway stage and stack name suffix
_EMAIL_PATTERN = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_DOMAIN_PATTERN = re.compile(r"^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
_REGION_PATTERN = re.compile(r"^[a-z]{2}(-[a-z]+)+-[0-9]$")


@dataclass(frozen=True)
class StageConfig:
    stage: str = "dev"
    # The account's regional API Gateway throttle, which the stage's throttle is derived from.
    account_rps_limit: int = DEFAULT_ACCOUNT_RPS_LIMIT
    cors_allow_origins: tuple[str, ...] = ()  # none: no CORS preflight
    events_archive_days: int = DEFAULT_EVENTS_ARCHIVE_DAYS  # retention of the event bus's archive
    activity_retention_days: int = DEFAULT_RETENTION_DAYS  # the TTL of the orgs' activity log entries
    # How long API Gateway caches an authorizer decision: a suspension or reactivation takes effect
    # within it. 0 asks the authorizer on every request (one GetItem each).
    authorizer_ttl_seconds: int = DEFAULT_AUTHORIZER_TTL_SECONDS
    # Declare the local-only variables (DynamoDB endpoint, cursor secret) so that `sam local invoke
    # --env-vars` can set them: SAM only overrides variables the template declares. Never deploy this.
    sam_local: bool = False
    # SnapStart: publish a version per deploy, snapshotted after init, and route everything through
    # the alias ``live``. None: on where the stage is protected (prod) and the region has SnapStart.
    snap_start: bool | None = None
    # The region the CLI deploys to, when it knows it (CDK_DEFAULT_REGION); None: decided at deploy time.
    region: str | None = None
    # API Gateway writes access logs with a role set once per account and region. True: this stack sets
    # it (a role kept when the stack is deleted, since the setting outlives it). False where the region
    # already has one: another stack owns the setting.
    api_gateway_account_role: bool = True
    alarm_email: str | None = None  # subscribed to the alarm topic; it confirms by e-mail
    # A web ACL with a per-IP rate-based rule on the stage (infra.waf). None: on where the stage is
    # protected (prod). Its cost is in infra/waf.py and docs/SECURITY.md.
    waf: bool | None = None
    waf_rate_limit: int = DEFAULT_WAF_RATE_LIMIT  # one client IP's requests per WAF_EVALUATION_WINDOW_SECONDS
    # A verified SES identity that the user pool sends its e-mail through (invitations, password resets):
    # a domain (sent from no-reply@<domain>) or an address (sent from it). None: Cognito's own e-mail,
    # capped at COGNITO_DEFAULT_EMAILS_PER_DAY for the account, which prod warns about at synth.
    ses_identity: str | None = None
    # The identity's region, where it is not the stack's (Cognito allows a few: README, Deploy).
    ses_region: str | None = None

    def __post_init__(self):
        if not _STAGE_PATTERN.match(self.stage):
            raise ValueError(f"stage {self.stage!r} must match {_STAGE_PATTERN.pattern}")
        if any(word in self.stage for word in COGNITO_RESERVED_WORDS):
            # The sign-in domain's prefix carries the stage: the deploy would fail on it, halfway.
            raise ValueError(
                f"stage {self.stage!r} must not contain aws, amazon or cognito: the console's Cognito domain "
                "prefix carries the stage, and Cognito refuses those words in it"
            )
        # A plan's burst above the stage's is only capped by it (regions whose account default is 2,500
        # a second, burst 1,250); a plan's rate above the account's is a promise the region cannot keep.
        plan, biggest = max(plans.usage_plans().items(), key=lambda item: item[1].per_second)
        if self.account_rps_limit < biggest.per_second:
            raise ValueError(
                f"account_rps_limit {self.account_rps_limit} is below the {plan} plan's own rate "
                f"({biggest.per_second} requests per second): request an increase of API Gateway's throttle "
                "quota in this region (Service Quotas), then deploy with -c account_rps_limit=<the new limit>"
            )
        if self.events_archive_days < 1:
            raise ValueError(f"events_archive_days must be at least 1, not {self.events_archive_days}")
        if self.activity_retention_days < 1:
            raise ValueError(f"activity_retention_days must be at least 1, not {self.activity_retention_days}")
        if not 0 <= self.authorizer_ttl_seconds <= MAX_AUTHORIZER_TTL_SECONDS:
            raise ValueError(
                f"authorizer_ttl_seconds must be 0 to {MAX_AUTHORIZER_TTL_SECONDS}, not {self.authorizer_ttl_seconds}"
            )
        if self.snap_start and self.region and self.region not in SNAP_START_REGIONS:
            raise ValueError(
                f"Lambda SnapStart is not available in {self.region} (cfn-lint E2530's list): "
                "deploy with -c snap_start=false"
            )
        if self.waf_rate_limit < WAF_MIN_RATE_LIMIT:
            raise ValueError(
                f"waf_rate_limit must be at least {WAF_MIN_RATE_LIMIT} (AWS WAF's least), not {self.waf_rate_limit}"
            )
        if self.alarm_email is not None and not _EMAIL_PATTERN.match(self.alarm_email):
            raise ValueError(f"alarm_email {self.alarm_email!r} is not an e-mail address")
        if self.ses_identity is not None and not (
            _EMAIL_PATTERN.match(self.ses_identity) or _DOMAIN_PATTERN.match(self.ses_identity)
        ):
            raise ValueError(f"ses_identity {self.ses_identity!r} is neither a domain nor an e-mail address")
        if self.ses_region is not None and not _REGION_PATTERN.match(self.ses_region):
            raise ValueError(f"ses_region {self.ses_region!r} is not a region name")
        if self.ses_region and not self.ses_identity:
            raise ValueError("ses_region without ses_identity: name the identity too")

    @property
    def stack_name(self) -> str:
        return f"{STACK_NAME}-{self.stage}"

    @property
    def throttle_rate_limit(self) -> int:
        """The whole stage, all tenants together: the account's regional limit. The plans' rates
        add up to more (they are ceilings per tenant, not reservations), so this is what protects
        the account's other APIs and the table when many tenants peak at once."""
        return self.account_rps_limit

    @property
    def throttle_burst_limit(self) -> int:
        """The account's burst: half its rate, at most 5,000 (1,250 where the rate is 2,500). It may
        be below a plan's burst: that plan's tenants then burst to this at most (docs/LIMITS.md)."""
        return min(ACCOUNT_BURST_CAP, self.account_rps_limit // 2)

    @property
    def protected(self) -> bool:
        return self.stage in PROTECTED_STAGES

    @property
    def waf_enabled(self) -> bool:
        return self.protected if self.waf is None else self.waf

    @property
    def snap_start_enabled(self) -> bool:
        if self.snap_start is not None:
            return self.snap_start
        return self.protected and (self.region is None or self.region in SNAP_START_REGIONS)

    @classmethod
    def from_context(cls, node: Node) -> "StageConfig":
        """Context keys: stage, account_rps_limit, cors_allow_origins (a list
        in cdk.json, comma-separated on the command line, where every value is a string),
        events_archive_days, activity_retention_days, authorizer_ttl_seconds, sam_local, snap_start
        (``true``/``false``; unset: on for prod where the region has it), api_gateway_account_role
        (``true``/``false``; unset: true), alarm_email, waf (``true``/``false``; unset: on for prod),
        waf_rate_limit, ses_identity and ses_region (each a string, or in cdk.json an object by stage:
        ``{"prod": "example.com"}``). The region is the CDK CLI's
        (``CDK_DEFAULT_REGION``: the profile's or ``AWS_REGION``)."""
        defaults = cls()
        stage = node.try_get_context("stage") or defaults.stage
        origins = node.try_get_context("cors_allow_origins") or ()
        if isinstance(origins, str):
            origins = origins.split(",")
        return cls(
            stage=stage,
            account_rps_limit=int(_or_default(node.try_get_context("account_rps_limit"), defaults.account_rps_limit)),
            cors_allow_origins=tuple(origin.strip() for origin in origins if origin.strip()),
            events_archive_days=int(
                _or_default(node.try_get_context("events_archive_days"), defaults.events_archive_days)
            ),
            activity_retention_days=int(
                _or_default(node.try_get_context("activity_retention_days"), defaults.activity_retention_days)
            ),
            authorizer_ttl_seconds=int(
                _or_default(node.try_get_context("authorizer_ttl_seconds"), defaults.authorizer_ttl_seconds)
            ),
            sam_local=str(node.try_get_context("sam_local")).lower() == "true",
            snap_start=_flag(node.try_get_context("snap_start")),
            region=os.environ.get("CDK_DEFAULT_REGION") or None,
            api_gateway_account_role=_flag(node.try_get_context("api_gateway_account_role")) is not False,
            alarm_email=node.try_get_context("alarm_email") or None,
            waf=_flag(node.try_get_context("waf")),
            waf_rate_limit=int(_or_default(node.try_get_context("waf_rate_limit"), defaults.waf_rate_limit)),
            ses_identity=_for_stage(node.try_get_context("ses_identity"), stage) or None,
            ses_region=_for_stage(node.try_get_context("ses_region"), stage) or None,
        )


def _for_stage(value, stage: str):
    """A value that may differ by stage: as it is, or an object's entry for ``stage``."""
    return value.get(stage) if isinstance(value, dict) else value


def _or_default(value, default):
    """``value`` unless unset: a 0 is a setting, not an absence."""
    return default if value is None or value == "" else value


def _flag(value) -> bool | None:
    """A boolean context value: JSON true/false in cdk.json, the strings on the command line."""
    if value is None or isinstance(value, bool):
        return value
    if str(value).lower() not in ("true", "false"):
        raise ValueError(f"expected true or false, got {value!r}")
    return str(value).lower() == "true"
