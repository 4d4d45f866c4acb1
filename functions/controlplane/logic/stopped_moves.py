"""Where no queue finishes a move (make run), one that an outage stopped half-way through its request
answers ``202`` as in the cloud, its lock noted ``stopped`` (``move_queue.handed_over``), and the
next request on the org's units that meets it runs it on first, as the queue's job would have run it
in the cloud: a GET of a unit it moves (its ``202`` says to GET the unit until ``moving`` is false),
a unit's create or delete, a listing, the next move (``moves._abandoned``), and a user import's job
run in line (``imports``)."""

from collections.abc import Callable
from typing import TypeVar

from controlplane import config
from controlplane.dal import keys, tree
from controlplane.dal.outage import is_outage
from controlplane.dal.table import api_table
from controlplane.logic import moves, tree_reads, units
from controlplane.logic.access import Caller
from controlplane.models.errors import MoveInProgress, ServiceUnavailable
from controlplane.models.resources import UserPage
from controlplane.models.units import Unit, UnitCreate, UnitPage
from controlplane.observability import logger

T = TypeVar("T")


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


def _after_stopped_move(org_id: str, action: Callable[[], T]) -> T:
    """``action``, again once the org's stopped move has run on, if a move under way refused it."""
    try:
        return action()
    except MoveInProgress:
        if not run_stopped(org_id):
            raise
    return action()


def get_unit(org_id: str, unit_id: str) -> Unit:
    unit = units.get_unit(org_id, unit_id)
    if unit.moving and run_stopped(org_id):
        return units.get_unit(org_id, unit_id)
    return unit


def create_unit(org_id: str, body: UnitCreate, caller: Caller) -> Unit:
    return _after_stopped_move(org_id, lambda: units.create_unit(org_id, body, caller))


def delete_unit(org_id: str, unit_id: str, version: int | None) -> None:
    _after_stopped_move(org_id, lambda: units.delete_unit(org_id, unit_id, version))


def list_units(org_id: str, under: str, limit: int, token: str | None) -> UnitPage:
    return _after_stopped_move(org_id, lambda: tree_reads.list_units(org_id, under, limit, token))


def list_unit_users(org_id: str, unit_id: str, direct: bool, limit: int, token: str | None) -> UserPage:
    return _after_stopped_move(org_id, lambda: tree_reads.list_unit_users(org_id, unit_id, direct, limit, token))
