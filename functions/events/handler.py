"""Lifecycle events: the table's stream in, the control plane's EventBridge bus out.

The contract is controlplane.lifecycle.contract; how a batch is published, in order and each record once, is
controlplane.lifecycle.publisher. Powertools' batch processor turns the outcome into the partial batch
response (ReportBatchItemFailures).
"""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from controlplane.lifecycle import publisher
from controlplane.observability import logger, metrics, tracer


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    outcome = publisher.publish(event["Records"], lambda: context.get_remaining_time_in_millis() / 1000)
    metrics.add_metric(name="EventsPublished", unit=MetricUnit.Count, value=outcome.published)

    def confirm(record: DynamoDBRecord) -> None:
        if record.dynamodb is not None and record.dynamodb.sequence_number in outcome.failed:
            raise publisher.NotPublished(record.event_id)

    # Reported, not raised, when every record failed: Lambda then retries from the first one all the same.
    processor = BatchProcessor(event_type=EventType.DynamoDBStreams, raise_on_entire_batch_failure=False)
    response = process_partial_response(event=event, record_handler=confirm, processor=processor, context=context)
    return dict(response)
