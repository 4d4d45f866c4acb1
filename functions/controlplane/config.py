"""Configuration and AWS clients: read once per cold start, never at import time. The one module of
the functions that reads their environment (the authorizer keeps its own light reads, for its cold
start: functions/authorizer, dal/tenant_keys.py).

Tests and the local server change the environment and then call ``reset()``. With SnapStart, the
clients are made before the snapshot (their service models then load from it) and made again after
each restore (see the hooks at the end).
"""

import json
import os
import random
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

import boto3
from botocore.config import Config

if TYPE_CHECKING:  # the stub packages are for the type checker only, never in Lambda
    from types_boto3_dynamodb import DynamoDBClient
    from types_boto3_events import EventBridgeClient
    from types_boto3_sqs import SQSClient

    from controlplane.dal.directory import Directory


@dataclass(frozen=True)
class Settings:
    table_name: str
    cursor_secret: bytes
    # How long after a user's deletion a cascade looks again for tickets GSI1 showed late.
    gsi1_settle_seconds: float = 5.0
    # Where the rest of a cascade delete that outgrew its request goes (SQS); None runs it in line.
    deletions_queue_url: str | None = None

    @classmethod
    def from_environment(cls) -> "Settings":
        return cls(
            table_name=table_name(),
            cursor_secret=_cursor_secret(),
            gsi1_settle_seconds=float(os.environ.get("GSI1_SETTLE_SECONDS", "5")),
            deletions_queue_url=os.environ.get("DELETIONS_QUEUE_URL") or None,
        )


def table_name() -> str:
    """The single table (every function's); ``settings()`` also reads the cursor secret, which the
    events and tenant-keys functions have no business reading."""
    return _required("TABLE_NAME")


def event_bus_name() -> str:
    """The bus the events function publishes to."""
    return _required("EVENT_BUS_NAME")


def activity_retention_days() -> int | None:
    """ACTIVITY_RETENTION_DAYS, the stack's ``activity_retention_days``; None when unset."""
    days = os.environ.get("ACTIVITY_RETENTION_DAYS")
    return int(days) if days else None


def usage_plans() -> tuple[dict[str, str], str]:
    """The tenant-keys consumer's USAGE_PLAN_IDS (JSON, plan -> id) and API_KEY_NAME_PREFIX."""
    return json.loads(os.environ["USAGE_PLAN_IDS"]), os.environ["API_KEY_NAME_PREFIX"]


def cors_allow_origins() -> list[str]:
    """CORS_ALLOW_ORIGINS: comma-separated, or unset for none."""
    return [origin.strip() for origin in os.environ.get("CORS_ALLOW_ORIGINS", "").split(",") if origin.strip()]


def _required(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"environment variable {name} is not set")
    return value


def _cursor_secret() -> bytes:
    """``CURSOR_SECRET`` locally and in tests; ``CURSOR_SECRET_ARN`` (Secrets Manager) in the cloud."""
    if arn := os.environ.get("CURSOR_SECRET_ARN"):
        from aws_lambda_powertools.utilities.parameters import SecretsProvider

        # With the functions' client settings: Powertools' default client waits 60 s per socket operation,
        # five times, where this read must fail (503) within the request's time.
        return str(SecretsProvider(boto_config=CLIENT_CONFIG).get(arn)).encode()
    return _required("CURSOR_SECRET").encode()


# Standard mode retries throttling and 5xx with exponential backoff and jitter. ``max_attempts`` is
# botocore's count of retries (it becomes ``total_max_attempts`` = 4, in this dict, once a client is
# made). Short timeouts turn a stuck connection into a retry; DynamoDB and Cognito answer in
# milliseconds, and an outage (a refused connection) is answered 503 within 10 s.
CLIENT_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 3},
    connect_timeout=1,
    read_timeout=2,
)
# The events function's EventBridge client tries once: lifecycle.publisher retries a call itself and
# starts none it may not finish (PUT_SECONDS). botocore's retries, throttled and slowed further by
# x-amz-retry-after, could hold one call past the function's 28 s, which Lambda retries whole.
EVENTS_CLIENT_CONFIG = Config(retries={"mode": "standard", "total_max_attempts": 1}, connect_timeout=1, read_timeout=2)


@cache
def settings() -> Settings:
    return Settings.from_environment()


def deletions_queue() -> str:
    """The deletions queue's URL, for a job that queues itself or its rest. Every job checks that
    there is a queue before it stops early (without one, it runs to its end in line), so none here is
    a bug: one place refuses it, for every job."""
    queue_url = settings().deletions_queue_url
    if not queue_url:
        raise RuntimeError("DELETIONS_QUEUE_URL is not set")
    return queue_url


@cache
def directory() -> "Directory | None":
    """The Cognito user pool that holds the users' sign-ins, or None where there is none
    (the local run, whose tokens come from a development key instead)."""
    pool = os.environ.get("USER_POOL_ID")
    if not pool:
        return None
    from controlplane.dal.directory import Directory

    return Directory(boto3.client("cognito-idp", config=CLIENT_CONFIG), pool)


@cache
def dynamodb() -> "DynamoDBClient":
    """The DynamoDB client. boto3 honours AWS_ENDPOINT_URL_DYNAMODB (DynamoDB Local) by itself."""
    return boto3.client("dynamodb", config=CLIENT_CONFIG)


class Bus(Protocol):
    """What the events function publishes with: EventBridge's client, or the local run's sink."""

    def put_events(self, *, Entries: Any) -> Any: ...


_bus: Bus | None = None  # instead of EventBridge: the local run's sink, a test's recorder


def use_bus(bus: Bus | None) -> None:
    """Publish to ``bus`` (anything with ``put_events``) instead of EventBridge; None undoes it."""
    global _bus
    _bus = bus


def eventbridge() -> Bus:
    """The EventBridge client the events function publishes with."""
    return _bus or _eventbridge()


@cache
def _eventbridge() -> "EventBridgeClient":
    return boto3.client("events", config=EVENTS_CLIENT_CONFIG)


@cache
def sqs() -> "SQSClient":
    """The deletions queue's client (organizations only, and only when a delete outgrows its request)."""
    return boto3.client("sqs", config=CLIENT_CONFIG)


@cache
def apigateway() -> Any:
    """API Gateway's control API, for the tenant-keys consumer only (untyped: no stubs pinned for it)."""
    return boto3.client("apigateway", config=CLIENT_CONFIG)


def reset() -> None:
    settings.cache_clear()
    reset_clients()


def reset_clients() -> None:
    dynamodb.cache_clear()
    directory.cache_clear()
    _eventbridge.cache_clear()
    sqs.cache_clear()
    apigateway.cache_clear()


# SnapStart. Checked for state that a snapshot would freeze and share between the environments
# restored from it:
# - the clients above: their pooled connections are dead after a restore, and they hold the
#   credentials of the moment they were made. Made again after a restore; botocore's loader keeps the
#   service models it read before the snapshot, so that costs a few ms, not the model's JSON again.
# - ``random``'s generator (the backoff jitter in table.py, and botocore's retry jitter): every
#   restored environment would draw the same sequence, and retry in lockstep. Reseeded from the OS.
# - not affected: ``ids.new_ulid`` reads the clock and os.urandom on every call (its monotonic floor
#   only ever rises, and nothing makes an id before the snapshot); cursors are signed with the secret
#   ``settings()`` reads on the first request, after the restore; uuid4 (request ids) uses os.urandom;
#   timestamps read the clock per call.
def _before_snapshot() -> None:
    dynamodb()  # loads botocore's DynamoDB model, endpoint rules and retry config into the snapshot


def _after_restore() -> None:
    reset_clients()
    random.seed()


try:
    # Part of Lambda's Python runtimes (3.12+), not of the function's asset; absent locally unless
    # installed (requirements.txt pins it for the tests), where no snapshot is ever taken.
    from snapshot_restore_py import register_after_restore, register_before_snapshot  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - every test environment has it
    pass
else:
    register_before_snapshot(_before_snapshot)
    register_after_restore(_after_restore)
