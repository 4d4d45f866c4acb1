"""Tenant keys: the lifecycle events of organizations in (EventBridge rule -> SQS queue), each org's
API Gateway key in its plan's usage plan out. A message that fails goes back to the queue and is
retried; after the queue's attempts it lands in the dead-end queue, whose alarm calls a person."""

import json
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from controlplane.logic import tenant_keys
from controlplane.observability import logger, metrics, tracer


def handle(record: SQSRecord) -> None:
    event = json.loads(record.body)
    if event.get("detail-type") not in tenant_keys.EVENTS:
        logger.warning("Not an event of ours", extra={"detail_type": event.get("detail-type")})
        return
    tenant_keys.reconcile(event["detail"]["org_id"])


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    processor = BatchProcessor(event_type=EventType.SQS)
    return dict(process_partial_response(event=event, record_handler=handle, processor=processor, context=context))
