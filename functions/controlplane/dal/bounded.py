"""Clients for a caller that keeps its own time budget (the authorizer): each call is one request,
ended by its connect and read timeouts. botocore's retries are off (``total_max_attempts`` counts
the first), since their backoff (a retry-after header can add 5 s) would not keep to a budget;
the caller sends again itself, if there is time. The authorizer's cold start imports it, and boto3
with it, at init.
"""

from typing import Any, Literal

import boto3
from botocore.config import Config


def one_attempt_client(
    service: Literal["dynamodb", "secretsmanager"], connect_seconds: float, read_seconds: float
) -> Any:
    config = Config(
        retries={"mode": "standard", "total_max_attempts": 1},
        connect_timeout=connect_seconds,
        read_timeout=read_seconds,
    )
    return boto3.client(service, config=config)
