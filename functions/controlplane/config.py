"""Configuration and AWS clients: read once per cold start, never at import time.

Tests and the local server change the environment and then call ``reset()``.
"""

import os
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import boto3
from botocore.config import Config

if TYPE_CHECKING:  # the stub packages are for the type checker only, never in Lambda
    from types_boto3_dynamodb import DynamoDBClient

    from controlplane.directory import Directory


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
            table_name=_required("TABLE_NAME"),
            cursor_secret=_cursor_secret(),
            gsi1_settle_seconds=float(os.environ.get("GSI1_SETTLE_SECONDS", "5")),
            deletions_queue_url=os.environ.get("DELETIONS_QUEUE_URL") or None,
        )


def _required(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"environment variable {name} is not set")
    return value


def _cursor_secret() -> bytes:
    """``CURSOR_SECRET`` locally and in tests; ``CURSOR_SECRET_ARN`` (Secrets Manager) in the cloud."""
    if arn := os.environ.get("CURSOR_SECRET_ARN"):
        from aws_lambda_powertools.utilities.parameters import get_secret

        return str(get_secret(arn)).encode()
    return _required("CURSOR_SECRET").encode()


# Standard mode retries throttling and 5xx with exponential backoff and jitter (at most 1 s, then
# 2 s). Short timeouts turn a stuck connection into a retry: at worst 3 x 2 s + 3 s of backoff, so
# an outage is answered 503 within 10 s. DynamoDB and Cognito answer in milliseconds.
CLIENT_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 3},
    connect_timeout=1,
    read_timeout=2,
)


@cache
def settings() -> Settings:
    return Settings.from_environment()


@cache
def directory() -> "Directory | None":
    """The Cognito user pool that holds the users' sign-ins, or None where there is none
    (the local run, whose tokens come from a development key instead)."""
    pool = os.environ.get("USER_POOL_ID")
    if not pool:
        return None
    from controlplane.directory import Directory

    return Directory(boto3.client("cognito-idp", config=CLIENT_CONFIG), pool)


@cache
def dynamodb() -> "DynamoDBClient":
    """The DynamoDB client. boto3 honours AWS_ENDPOINT_URL_DYNAMODB (DynamoDB Local) by itself."""
    return boto3.client("dynamodb", config=CLIENT_CONFIG)


def reset() -> None:
    settings.cache_clear()
    dynamodb.cache_clear()
    directory.cache_clear()
