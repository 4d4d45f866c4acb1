"""Cascade deletes that outgrow one API request (29 s) finish from a queue.

``DELETE /orgs/{org_id}`` works until little time is left (or an outage stops it once the org is
marked), then puts the org on the deletions queue (SQS) and answers 202. The organizations
function also consumes that queue: each message continues the (resumable) delete and, if its own
time runs short, queues the org again. Where no queue is configured (the local run) the delete
simply runs to the end within the request; one an outage stops once the org is marked answers 202
all the same, and the org's next GET runs it on (``organizations.get_org``).

The queue also carries the jobs that bring an org's sign-ins in line with its status (``signins``):
a message with ``"kind": "sign-ins"``, or the lifecycle event of a status change that starts one
(EventBridge's envelope, told by its ``detail-type``, sent by a rule on the bus); the moves of units
too big for a request (``moves``), ``"kind": "unit-move"`` with the move's ``move_id``; the user
imports' jobs (``imports``), ``"kind": "user-import"``; and the sweep of a deleted user's tickets
once GSI1 has caught up (``cascade``), ``"kind": "ticket-sweep"``, sent by the users function. One
with neither a kind nor a detail-type is a delete.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from controlplane import config
from controlplane.dal.outage import is_outage
from controlplane.logic import cascade, import_job, move_queue, moves, signins
from controlplane.models.errors import ServiceUnavailable
from controlplane.observability import logger

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from controlplane.logic.access import Caller

# API Gateway gives up on an integration after 29 s.
REQUEST_SECONDS = 29.0


def delete_org(org_id: str, version: int | None, lambda_context: LambdaContext, caller: Caller | None = None) -> bool:
    """True when the org is gone; False when the rest was handed over (queued; with no queue, left
    to the org's next GET)."""
    actor = caller.subject if caller else None
    queue = bool(config.settings().deletions_queue_url)
    deadline = time.monotonic() + REQUEST_SECONDS
    try:
        if not queue:  # make run: to the end, within the request
            return cascade.delete_org(org_id, version, actor=actor)
        done = cascade.delete_org(
            org_id, version, lambda: min(deadline - time.monotonic(), _remaining(lambda_context)), actor=actor
        )
    except Exception as failed:  # an outage once the org is marked: the queue finishes it, as one out of time
        if not (isinstance(failed, ServiceUnavailable) or is_outage(failed)) or not _handed_over(org_id, queue):
            raise
        return False
    if not done:
        _enqueue(org_id, cascade.deletion_mark(org_id))
    return done


def handle_queue(event: dict[str, Any], lambda_context: LambdaContext) -> PartialItemFailureResponse:
    # Imported here: the batch utility costs ~50 ms of cold start that API requests never need.
    from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response

    return process_partial_response(
        event=event,
        record_handler=lambda record: _continue(record, lambda_context),
        processor=BatchProcessor(event_type=EventType.SQS),
        context=lambda_context,
    )


def _continue(record: SQSRecord, lambda_context: LambdaContext) -> None:
    message = json.loads(record.body)
    job = signins.job(message)
    if job is not None:
        signins.resume(job, lambda: _remaining(lambda_context))
        return
    if message.get("kind") == move_queue.KIND:
        # (a message sent before messages named their move has none: whatever move holds the lock)
        move_id = message.get("move_id", "")
        if not moves.resume(message["org_id"], lambda: _remaining(lambda_context), only=move_id):
            move_queue.enqueue(message["org_id"], move_id)  # the rest, in a message of its own
        return
    if message.get("kind") == import_job.KIND:
        import_job.resume(message, lambda: _remaining(lambda_context))
        return
    if message.get("kind") == cascade.SWEEP_KIND:
        if not cascade.sweep_user(message["org_id"], message["user_id"], lambda: _remaining(lambda_context)):
            cascade.schedule_sweep(message["org_id"], message["user_id"])  # the rest, in a message of its own
        return
    org_id = message["org_id"]
    # The delete it continues: one message is never another org's of the same id (sent before the
    # mark was in messages: the org's delete under way, if any).
    mark = message.get("deleting_since") or cascade.deletion_mark(org_id)
    if mark is None:
        return  # the org is gone, or was created again and is no one's to delete
    if not cascade.continue_delete(org_id, mark, time_left=lambda: _remaining(lambda_context)):
        _enqueue(org_id, mark)


def _handed_over(org_id: str, queue: bool) -> bool:
    """Queue the rest of a delete whose run in its request met an outage, if the org is marked (its
    delete began): a half-deleted org then waits for no one to ask for its delete again. With no
    ``queue`` (make run), the org's next GET runs it on (``organizations.get_org``), as the 202 asks
    for. False if it is not marked, or the read or the queue fails too (the outage's 503 stands)."""
    try:
        mark = cascade.deletion_mark(org_id)
        if mark is not None and queue:
            _enqueue(org_id, mark)
    except Exception:
        logger.warning("Org delete: its rest could not be queued", org_id=org_id, exc_info=True)
        return False
    return mark is not None


def _remaining(lambda_context: LambdaContext) -> float:
    return lambda_context.get_remaining_time_in_millis() / 1000


def _enqueue(org_id: str, mark: str | None) -> None:
    if mark is None:  # another run finished the delete meanwhile
        return
    message = {"org_id": org_id, "deleting_since": mark}
    config.sqs().send_message(QueueUrl=config.deletions_queue(), MessageBody=json.dumps(message))
