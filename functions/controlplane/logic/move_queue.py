"""A unit move's job on the deletions queue (``moves``): a move too big for its request goes on
from there, as does one whose run in its request failed half-way on an outage. Where there is no
queue (make run), such a move's lock is noted ``stopped`` instead, and the next request that meets
it runs it on (``stopped_moves.run_stopped``), as the queue's job would have; so does one that meets
a lock whose request died, anywhere, once it is abandoned (``moves.abandoned``)."""

import json
from contextlib import suppress

from controlplane import config
from controlplane.dal import keys, tree
from controlplane.dal.conditions import ConditionFailed
from controlplane.dal.outage import is_outage
from controlplane.dal.table import api_table
from controlplane.models.errors import ServiceUnavailable
from controlplane.observability import logger

KIND = "unit-move"


def enqueue(org_id: str, move_id: str) -> None:
    """The rest of the move ``move_id``: its message runs that move only (``moves.resume``'s ``only``),
    not a newer one that took the lock once another run had finished this one."""
    body = json.dumps({"kind": KIND, "org_id": org_id, "move_id": move_id})
    config.sqs().send_message(QueueUrl=config.deletions_queue(), MessageBody=body)


def handed_over(org_id: str, move_id: str, failed: Exception) -> bool:
    """Whether the rest of the move ``move_id``, whose run in its request ``failed`` on an outage
    (DynamoDB failing or busy), was handed over, so that its lock waits for no one to ask for a move
    again: the org's unit creates and deletes, and its marked units' new users, wait for it. To the
    queue; with none (make run), to the next request that meets the lock, by noting it ``stopped``.
    False for any other error, or when the queue (or the note) fails too."""
    if not (isinstance(failed, ServiceUnavailable) or is_outage(failed)):
        return False
    try:
        if config.settings().deletions_queue_url:
            enqueue(org_id, move_id)
        else:
            with suppress(ConditionFailed):  # the lock is gone: another run finished the move
                tree.note_stopped(api_table(), keys.tree_key(org_id), move_id)
    except Exception:  # the 503 stands: once the lock is abandoned, the next request that meets it finishes it
        logger.warning("Move: its rest could not be handed over either", org_id=org_id, exc_info=True)
        return False
    logger.warning("Move: failed in its request, handed over", org_id=org_id, exc_info=failed)
    return True
