"""Revocations: the lifecycle events that change who may call the API (controlplane.lifecycle.access)
in, through an EventBridge rule and a queue; the stage's authorizer cache flushed out
(FlushStageAuthorizersCache), so the next request of every token is decided again, from the table.

One flush per batch, however many events it holds, and each invocation lasts at least
``MIN_SECONDS_BETWEEN_FLUSHES``: with the event source's two concurrent invocations at most
(infra.revocations), a burst of changes (an org's cascade deleting a thousand users) flushes about
twice a second at most, never once per event. A batch with no access change flushes nothing. A
failed flush fails the batch, which the queue delivers again (its dead-end queue after that).

Every batch that flushed for a change also queues one ``FLUSH_AGAIN`` message for itself, delivered
``AGAIN_AFTER_SECONDS`` later, which flushes once more and queues nothing. API Gateway caches a
decision when it arrives: one that read the items just before the change and answered just after
the first flush would be served until its TTL. It began before the change, so the authorizer's
timeout (infra AUTHORIZER_TIMEOUT) has ended it by the second flush.
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
FLUSH_AGAIN = "Authorizer Cache Flush Again"  # the message a flush queues for itself; no event's detail-type
AGAIN_AFTER_SECONDS = 9  # more than the authorizer's timeout, 7 s (tests/infra holds it to that)
_CONFIG = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=1, read_timeout=2)
_apigateway: Any = None
_sqs: Any = None


def apigateway() -> Any:
    global _apigateway
    if _apigateway is None:
        _apigateway = boto3.client("apigateway", config=_CONFIG)
    return _apigateway


def sqs() -> Any:
    global _sqs
    if _sqs is None:
        _sqs = boto3.client("sqs", config=_CONFIG)
    return _sqs


def _detail_type(record: dict[str, Any]) -> Any:
    return json.loads(record["body"]).get("detail-type")


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    started = time.monotonic()
    records = event.get("Records") or []
    detail_types = [_detail_type(record) for record in records]  # each body parsed once
    changes = sum(detail_type in ACCESS_CHANGES for detail_type in detail_types)
    again = FLUSH_AGAIN in detail_types
    if changes or again:
        apigateway().flush_stage_authorizers_cache(restApiId=os.environ["REST_API_ID"], stageName=os.environ["STAGE"])
        if changes:  # sent after the flush: a failed send fails the batch, whose retry flushes again
            body = json.dumps({"detail-type": FLUSH_AGAIN})
            sqs().send_message(QueueUrl=os.environ["QUEUE_URL"], MessageBody=body, DelaySeconds=AGAIN_AFTER_SECONDS)
        logger.info("Authorizer cache flushed", extra={"changes": changes, "again": again, "records": len(records)})
        time.sleep(max(0.0, MIN_SECONDS_BETWEEN_FLUSHES - (time.monotonic() - started)))
    return {"batchItemFailures": []}
