"""A unit move's job on the deletions queue (``moves``): a move too big for its request goes on
from there, as does one whose run in its request failed half-way on an outage."""

import json

from controlplane import config
from controlplane.dal.outage import is_outage
from controlplane.models.errors import ServiceUnavailable
from controlplane.observability import logger

KIND = "unit-move"


def enqueue(org_id: str) -> None:
    body = json.dumps({"kind": KIND, "org_id": org_id})
    config.sqs().send_message(QueueUrl=config.deletions_queue(), MessageBody=body)


def handed_over(org_id: str, failed: Exception) -> bool:
    """Whether the queue took the rest of a move whose run in its request ``failed`` on an outage
    (DynamoDB failing or busy), so that its lock waits for no one to ask for a move again: the
    org's unit creates and deletes, and its marked units' new users, wait for it. False where there
    is no queue (make run), for any other error, or when the queue fails too."""
    if not config.settings().deletions_queue_url or not (isinstance(failed, ServiceUnavailable) or is_outage(failed)):
        return False
    try:
        enqueue(org_id)
    except Exception:  # the 503 stands: the next move of the org once the lock is abandoned finishes it
        logger.warning("Move: its rest could not be queued either", org_id=org_id, exc_info=True)
        return False
    logger.warning("Move: failed in its request, the queue finishes it", org_id=org_id, exc_info=failed)
    return True
