"""A move whose lock no run holds any more (``moves.abandoned``) is run on by the next request that
meets it, within that request's time, and the request is then answered as after it:

- where no queue finishes a move (make run), one that an outage stopped half-way through its request
  answers ``202`` as in the cloud, its lock noted ``stopped`` (``move_queue.handed_over``), and is run
  on at once, as the queue's job would have run it in the cloud;
- anywhere, one whose request died (a timeout, a crash: no note, no message) is run on once its lock
  is older than any request lives.

The requests that run it on: a GET of a unit it moves (its ``202`` says to GET the unit until
``moving`` is false), any request it refused ``move_in_progress`` (asked again after, by the
resolver: a unit's create or delete, a listing, a user created in or moved to a unit it marked, the
next move), and a user import's job run in line (``imports``). A live lock is left to its run: those
requests are ``409 move_in_progress`` as before."""

import math
from collections.abc import Callable

from controlplane.dal import keys, tree
from controlplane.dal.outage import is_outage
from controlplane.dal.table import api_table
from controlplane.logic import moves, units
from controlplane.models.errors import ServiceUnavailable
from controlplane.models.units import Unit
from controlplane.observability import logger


def run_stopped(org_id: str, time_left: Callable[[], float] = lambda: math.inf) -> bool:
    """Run on the org's move that no run holds (``moves.abandoned``), if there is one; True if it
    ran to its end. Stopped again by an outage, or short of time (``time_left``, in seconds: no step
    is begun that could outlive the request), it stays for the next request."""
    try:
        held = (api_table().get(keys.tree_key(org_id), consistent=True) or {}).get(tree.MOVE)
        if held is None or not moves.abandoned(held):
            return False
        return moves.resume(org_id, time_left, only=held["id"])
    except Exception as failed:
        if not (isinstance(failed, ServiceUnavailable) or is_outage(failed)):
            raise
        logger.warning("Move: stopped again; the next request on its units runs it on", org_id=org_id, exc_info=failed)
        return False


def get_unit(org_id: str, unit_id: str, time_left: Callable[[], float] = lambda: math.inf) -> Unit:
    unit = units.get_unit(org_id, unit_id)
    if unit.moving and run_stopped(org_id, time_left):
        return units.get_unit(org_id, unit_id)
    return unit
