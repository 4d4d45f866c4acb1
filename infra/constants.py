"""Names, sizes and permissions of the infrastructure, in one place."""

import re
from pathlib import Path

from aws_cdk import Duration
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from cfnlint.rules.resources.lmbd.SnapStartSupported import SnapStartSupported

from controlplane.http.routes import ORGANIZATIONS, TICKETS, USERS
from controlplane.logic.import_job import IMPORT_SIGNINS_PER_SECOND, USER_CREATION_PER_SECOND

ROOT = Path(__file__).resolve().parent.parent
FUNCTIONS_DIR = ROOT / "functions"
CONSOLE_DIR = ROOT / "console"  # the console's static files, deployed as they are: no build step
SHARED_PACKAGE = "controlplane"  # imported by every function, so shipped in every asset

STACK_NAME = "ControlPlane"  # the deployed stack is "ControlPlane-<stage>"
PROTECTED_STAGES = frozenset({"prod"})  # deletion protection, resources retained on stack delete
SERVICE_NAME = "control-plane"
METRICS_NAMESPACE = "ControlPlane"
LOG_LEVEL = "INFO"

RUNTIME = lambda_.Runtime.PYTHON_3_13
ARCHITECTURE = lambda_.Architecture.ARM_64
# Lambda gives CPU in proportion to memory: one vCPU at 1,769 MB, so 512 MB is 29% of one. What the
# functions do with CPU is the same on every call (parse the event, validate, serialize: about 1 ms
# at a full vCPU, `make bench` section 6) plus a cold start's imports (about 0.4 s at a full vCPU);
# the rest is waiting on DynamoDB. CPU-bound time costs the same GB-seconds at any size below one
# vCPU (twice the memory, half the time), while waiting costs in proportion to memory. So: the
# smallest size whose per-call CPU stays well under DynamoDB's own latency, more where a function
# does more CPU work per call.
# Lifecycle events (controlplane.lifecycle.contract): the events function reads the table's stream and publishes
# to the bus "controlplane-<stage>". It serves no route, so it is not in routes.FUNCTIONS.
EVENTS_FUNCTION = "events"
# The API's Lambda authorizer (functions/authorizer): no route, so not in routes.FUNCTIONS either.
AUTHORIZER_FUNCTION = "authorizer"
# What it needs beyond boto3, as a layer built offline at synth from the wheels `make install`
# downloads into WHEELHOUSE for Lambda's platform (ARCHITECTURE) and runtime (RUNTIME).
AUTHORIZER_REQUIREMENTS = FUNCTIONS_DIR / AUTHORIZER_FUNCTION / "requirements.txt"
WHEELHOUSE = ROOT / ".venv" / "lambda-wheels"
LAMBDA_PLATFORM = {"arm64": "manylinux2014_aarch64", "x86_64": "manylinux2014_x86_64"}[ARCHITECTURE.name]
DEFAULT_AUTHORIZER_TTL_SECONDS = 60  # how long API Gateway caches a decision: suspension takes effect within it
MAX_AUTHORIZER_TTL_SECONDS = 300
# The tenant-keys consumer (controlplane.logic.tenant_keys): org events from the bus, through a queue,
# to each org's API key in its plan's usage plan. Serves no route either.
TENANT_KEYS_FUNCTION = "tenantkeys"
# CreateApiKey and DeleteApiKey allow 5 a second per account (not adjustable): at most 2 consumers at
# once, each pacing its writes (controlplane.dal.api_keys.WRITES_PER_SECOND), so a burst of sign-ups
# waits in the queue rather than meeting TooManyRequests. 5 messages (up to 10 paced writes, 5 s; up to
# 3 times that for an org that changes while its key is put, controlplane.logic.tenant_keys.PASSES) a
# batch leave the 28 s timeout room for botocore's retries; a batch that times out is retried whole.
TENANT_KEYS_MAX_CONCURRENCY = 2  # Lambda's least for an SQS event source
TENANT_KEYS_BATCH_SIZE = 5
# The rule's delivery to the queue: EventBridge retries a failed one (the queue throttled, a KMS or
# policy error) for up to a day, then sends the event to the dead-end queue rather than dropping it.
RULE_RETRY_ATTEMPTS = 185  # EventBridge's maximum, for a rule that feeds a consumer's queue
RULE_MAX_EVENT_AGE = Duration.hours(24)  # EventBridge's maximum
# Then the message waits in the dead-end queue. API Gateway allows 5 CreateApiKey (and DeleteApiKey) a
# second per account: a burst of sign-ups is throttled and retried through the queue's redelivery.
TENANT_KEYS_MAX_RECEIVE_COUNT = 8
TENANT_KEY_SECRET_LENGTH = 64
# Revocations (functions/revocations): the events that change access (controlplane.lifecycle.access),
# through a queue, to a flush of the stage's authorizer cache. Two invocations at once at most (an SQS
# event source's least), each at least a second long: about two flushes a second at most, whatever the
# burst. 10 messages a batch, with no batching window (a window would add its length to every
# revocation). A failed flush is retried after the visibility timeout (twice the function's timeout:
# no redelivery while an invocation runs), then lands in the dead-end queue.
REVOCATIONS_FUNCTION = "revocations"
REVOCATIONS_MAX_CONCURRENCY = 2
REVOCATIONS_BATCH_SIZE = 10
REVOCATIONS_MAX_RECEIVE_COUNT = 5
# A web ACL on the stage (infra.waf): a per-IP rate-based rule, on in protected stages (context key
# waf). WAF counts each client IP's requests over the last WAF_EVALUATION_WINDOW_SECONDS (60, 120, 300
# or 600) and blocks it above the limit (10 at least): 6,000 a minute is 100 a second on average, a
# pro plan's rate, so an abuser needs 100 addresses to fill the stage's 10,000 a second.
WAF_EVALUATION_WINDOW_SECONDS = 60
DEFAULT_WAF_RATE_LIMIT = 6_000
WAF_MIN_RATE_LIMIT = 10
# What a blocked address is told to wait (Retry-After): WAF checks the rate often, over the last
# window, so a caller that pauses is let back in within it. At most cpctl's longest wait, 30 s, which
# takes a longer one for the daily quota and stops retrying.
WAF_RETRY_AFTER_SECONDS = WAF_EVALUATION_WINDOW_SECONDS // 2
OPERATORS_KEY_LENGTH = 40  # an API key value: 20 to 128 characters

MEMORY_MB = {
    # Cascade deletes serialize and send 1,000-item pages in batches of 25 against a 29 s budget:
    # twice the CPU moves twice the items before the rest goes to the queue, at the same GB-seconds.
    ORGANIZATIONS: 1024,
    # Chosen by `make bench` section 10: the cheapest size whose routes' p50 is within 1.25x of the
    # fastest size's. users at 512 MB took 1.28x (creates validate and write a transaction), so 1024;
    # tickets at 512 MB took 1.13x, and 512 is cheaper.
    USERS: 1024,
    TICKETS: 512,
    # Up to 100 stream records a batch, turned into events and sent 10 at a time: a few ms of CPU,
    # the rest waiting on EventBridge.
    EVENTS_FUNCTION: 512,
    # A cache miss verifies one RS256 signature (well under a ms) and reads one item; the memory
    # buys CPU for the cold start's imports (boto3, cryptography), which the caller waits on.
    AUTHORIZER_FUNCTION: 512,
    # A handful of API Gateway control calls per org event; waiting, not computing.
    TENANT_KEYS_FUNCTION: 256,
    REVOCATIONS_FUNCTION: 256,  # one control call per batch
}
LAMBDA_FULL_VCPU_MB = 1769  # the memory size at which a function gets one whole vCPU
TIMEOUT = Duration.seconds(28)  # just under API Gateway's 29 s integration timeout
# The authorizer's decision has 5 s (functions/authorizer, DECISION_SECONDS) and ends itself; Lambda
# ends it at 7 s whatever it waits on (its JWKS fetch and reads are bounded per socket operation only): inside
# the 10 s AWS documents for a Lambda authorizer's response (HTTP APIs; the REST API quotas name none).
AUTHORIZER_TIMEOUT = Duration.seconds(7)
LOG_RETENTION = logs.RetentionDays.ONE_MONTH

CURSOR_SECRET_LENGTH = 64

# The stage-wide throttle caps all tenants together (each tenant has its own usage plan: models/plans.py).
# Derived from the account's regional API Gateway throttle, shared by every API of the account in the
# region: 10,000 requests per second by default (a Service Quotas increase raises it; the context key
# account_rps_limit says so), with a burst API Gateway sets at half of it, at most 5,000.
DEFAULT_ACCOUNT_RPS_LIMIT = 10_000
ACCOUNT_BURST_CAP = 5_000
CORS_REQUEST_HEADERS = ("If-Match", "Idempotency-Key")  # the API's own headers, beyond CORS's defaults

# The custom attributes controlplane.dal.directory writes, which the ID token carries as ``custom:<name>``.
USER_ATTRIBUTES = ("org_id", "user_id", "role")
PASSWORD_MIN_LENGTH = 12
TEMPORARY_PASSWORD_VALIDITY = Duration.days(7)  # how long an invitation's password works
# What Cognito's own e-mail (EmailSendingAccount COGNITO_DEFAULT) sends a day for the whole account:
# invitations and password-reset codes together. Past it, AdminCreateUser fails with LimitExceededException
# ("Exceeded daily email limit for the operation or the account") and the user is rolled back. The figure
# of Cognito's quotas page ("Quotas in Amazon Cognito"), as users who hit it report
# (cds-snc/platform-forms-client#1104).
COGNITO_DEFAULT_EMAILS_PER_DAY = 50
INVITATION_SENDER = "no-reply"  # the local part of the From address when ses_identity is a domain
# The console's sign-in domain is the prefix domain <SIGN_IN_DOMAIN>-<stage>-<account id>. Cognito refuses a
# prefix that contains one of these ("Domain cannot contain reserved word: aws"), so a stage may not.
SIGN_IN_DOMAIN = "controlplane"
COGNITO_RESERVED_WORDS = ("aws", "amazon", "cognito")

# The deletions queue (controlplane.logic.deletions): AWS's advice for a Lambda consumer is a visibility timeout
# of at least six times the function's timeout, so a message is not redelivered while it is in work.
DELETIONS_VISIBILITY_TIMEOUT = Duration.seconds(6 * TIMEOUT.to_seconds())
DELETIONS_MAX_RECEIVE_COUNT = 5  # then the message waits in the dead-letter queue for a person
# The queue's jobs that run at once: each user import creates sign-ins at IMPORT_SIGNINS_PER_SECOND, so
# the imports together take at most 4 x 10 = 40 of Cognito's 50 UserCreation requests a second, and
# interactive user creates keep the rest. Deletes and status changes beyond it wait in the queue.
DELETIONS_MAX_CONCURRENCY = int(USER_CREATION_PER_SECOND * 0.8 // IMPORT_SIGNINS_PER_SECOND)
DEAD_LETTER_RETENTION = Duration.days(14)  # SQS's maximum

EVENT_BUS_PREFIX = "controlplane"
DEFAULT_EVENTS_ARCHIVE_DAYS = 30  # how long the bus's archive keeps events for replay
EVENTS_BATCH_SIZE = 100  # stream records per invocation; PutEvents takes them 10 entries at a time
EVENTS_RETRY_ATTEMPTS = 10  # then the failed records' position goes to the on-failure queue
# A record older than this goes to the on-failure queue too. The stream keeps records for 24 hours, so
# an operator has about 18 hours to replay what the queue names before DynamoDB drops it.
EVENTS_MAX_RECORD_AGE = Duration.hours(6)


# The regions where Lambda offers SnapStart, from the list cfn-lint's rule E2530 checks templates
# against: requirements.txt pins cfn-lint, so the default and the lint cannot disagree.
SNAP_START_REGIONS: frozenset[str] = frozenset(SnapStartSupported().regions)


REQUIREMENTS = ROOT / "requirements.txt"


def pinned(package: str) -> str:
    """The version REQUIREMENTS pins ``package`` to, read when called: the functions run the layer of
    that version."""
    pattern = re.compile(rf"^{re.escape(package)}(\[[^\]]*\])?==(?P<version>\S+)", re.MULTILINE)
    match = pattern.search(REQUIREMENTS.read_text())
    if not match:
        raise RuntimeError(f"{REQUIREMENTS.name} does not pin {package}")
    return match["version"]


POWERTOOLS_PACKAGE = "aws-lambda-powertools"
POWERTOOLS_VERSION = pinned(POWERTOOLS_PACKAGE)


def powertools_layer_parameter() -> str:
    """A public parameter AWS publishes in every region: its value is the ARN of the official layer of
    the pinned version for this architecture and runtime, so a runtime upgrade moves the layer with it."""
    return f"/aws/service/powertools/python/{ARCHITECTURE.name}/{RUNTIME.name}/{pinned(POWERTOOLS_PACKAGE)}"


# The DynamoDB actions each function's code performs (functions/controlplane/dal/, and Powertools
# Idempotency on every create: PutItem, GetItem, UpdateItem, DeleteItem), granted on the table, and on its
# indexes to a function that queries (infra.table). TransactWriteItems has no IAM action of its own: IAM
# authorizes each ConditionCheck and Put inside it. Never Scan. tests/infra/test_infra_permissions.py
# records what the handlers really send.
_READ_WRITE = ("dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem")
DYNAMODB_ACTIONS: dict[str, tuple[str, ...]] = {
    # cascade delete: mark, sweep markers, batches; units (issue 27): the org, tree and unit read together
    # (BatchGetItem), created in a transaction with their parent checked (ConditionCheckItem); a user
    # import's job: which rows exist (BatchGetItem), its users with one check of the org (ConditionCheck)
    ORGANIZATIONS: (
        *_READ_WRITE,
        "dynamodb:BatchWriteItem",
        "dynamodb:BatchGetItem",
        "dynamodb:ConditionCheckItem",
    ),
    # delete tickets; a create checks the org (ConditionCheck) and counts its seat (Update of the
    # counter); a user's unit is checked (ConditionCheckItem)
    USERS: (*_READ_WRITE, "dynamodb:BatchWriteItem", "dynamodb:ConditionCheckItem"),
    TICKETS: (*_READ_WRITE, "dynamodb:ConditionCheckItem"),  # create only if the user exists
    # Is the org of a removed user or ticket being deleted? And the orgs' activity logs, in batches.
    EVENTS_FUNCTION: ("dynamodb:GetItem", "dynamodb:BatchWriteItem"),
    TENANT_KEYS_FUNCTION: ("dynamodb:GetItem",),  # the org item is the truth the key follows
}

# The Cognito actions each function's code performs on the user pool (controlplane.dal.directory).
COGNITO_ACTIONS: dict[str, tuple[str, ...]] = {
    ORGANIZATIONS: (
        "cognito-idp:AdminDeleteUser",  # the cascade delete removes its users' sign-ins
        "cognito-idp:ListUsers",  # and then any sign-in of the org no user item names (a failed create's)
        # suspension disables and signs out its users' sign-ins, reactivation enables them (logic/signins.py)
        "cognito-idp:AdminDisableUser",
        "cognito-idp:AdminUserGlobalSignOut",
        "cognito-idp:AdminEnableUser",
        # a user import's job creates its users' sign-ins; one that exists already is read to tell
        # this job's own (before a crash) from a leftover (logic/import_job.py)
        "cognito-idp:AdminCreateUser",
        "cognito-idp:AdminGetUser",
    ),
    USERS: (
        "cognito-idp:AdminCreateUser",
        "cognito-idp:AdminGetUser",
        "cognito-idp:AdminUpdateUserAttributes",
        "cognito-idp:AdminDeleteUser",
    ),
    TICKETS: (),
}
