"""Where no queue finishes a move (make run), one that an outage stopped half-way through its request
answers ``202`` as in the cloud, its lock noted ``stopped`` (``move_queue.handed_over``), and the
next request that meets it runs it on first, as the queue's job would have run it in the cloud: a
GET of a unit it moves (its ``202`` says to GET the unit until ``moving`` is false), any request it
refused ``move_in_progress`` (asked again after, by the resolver: a unit's create or delete, a
listing, a user created in or moved to a unit it marked), the next move (``moves._abandoned``), and
a user import's job run in line (``imports``)."""

from controlplane import config
from controlplane.dal import keys, tree
from controlplane.dal.outage import is_outage
from controlplane.dal.table import api_table
from controlplane.logic import moves, units
from controlplane.models.errors import ServiceUnavailable
from controlplane.models.units import Unit
from controlplane.observability import logger


def run_stopped(org_id: str) -> bool:
    """Run on the org's move whose run in its request stopped, if there is no queue to do it; True
    if one ran to its end. Stopped again by an outage, it stays noted for the next request."""
    if config.settings().deletions_queue_url:
        return False
    try:
        held = (api_table().get(keys.tree_key(org_id), consistent=True) or {}).get(tree.MOVE)
        if held is None or not held.get(tree.STOPPED):
            return False
        moves.resume(org_id)
    except Exception as failed:
        if not (isinstance(failed, ServiceUnavailable) or is_outage(failed)):
            raise
        logger.warning("Move: stopped again; the next request on its units runs it on", org_id=org_id, exc_info=failed)
        return False
    return True


def get_unit(org_id: str, unit_id: str) -> Unit:
    unit = units.get_unit(org_id, unit_id)
    if unit.moving and run_stopped(org_id):
        return units.get_unit(org_id, unit_id)
    return unit
