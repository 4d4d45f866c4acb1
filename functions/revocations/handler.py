"""Revocations: the lifecycle events that change who may call the API (controlplane.lifecycle.access)
in, through an EventBridge rule and a queue; the stage's authorizer cache flushed out
(FlushStageAuthorizersCache), so the next request of every token is decided again, from the table.

One flush per batch, however many events it holds, and each invocation lasts at least
``MIN_SECONDS_BETWEEN_FLUSHES``: with the event source's two concurrent invocations at most
(infra.revocations), a burst of changes (an org's cascade deleting a thousand users) flushes about
twice a second at most, never once per event. A batch with no access change flushes nothing. A
failed flush fails the batch, which the queue delivers again (its dead-end queue after that).
"""

import json
import os
import time
from typing import Any

import boto3
from botocore.config import Config

from controlplane.lifecycle.access import ACCESS_CHANGES
from controlplane.observability import logger

MIN_SECONDS_BETWEEN_FLUSHES = 1.0
_CONFIG = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=1, read_timeout=2)
_apigateway: Any = None


def apigateway() -> Any:
    global _apigateway
    if _apigateway is None:
        _apigateway = boto3.client("apigateway", config=_CONFIG)
    return _apigateway


def changes_access(record: dict[str, Any]) -> bool:
    return json.loads(record["body"]).get("detail-type") in ACCESS_CHANGES


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    started = time.monotonic()
    records = event.get("Records") or []
    changes = sum(changes_access(record) for record in records)
    if changes:
        apigateway().flush_stage_authorizers_cache(restApiId=os.environ["REST_API_ID"], stageName=os.environ["STAGE"])
        logger.info("Authorizer cache flushed", extra={"changes": changes, "records": len(records)})
        time.sleep(max(0.0, MIN_SECONDS_BETWEEN_FLUSHES - (time.monotonic() - started)))
    return {"batchItemFailures": []}
