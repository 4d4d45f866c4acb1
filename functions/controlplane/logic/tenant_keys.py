"""Each org's API key follows its org item: events only say which org to look at.

The event's own content is not trusted for the state: the org item, read consistently, is. So a
replay, a duplicate or events out of order (a Plan Changed after the Deleted, a Created delivered
twice), or two consumers at once, all end with the key where the org is now: in its current plan's
usage plan, or gone.
"""

from controlplane import config
from controlplane.dal import api_keys, keys, tenant_keys
from controlplane.dal.table import Table
from controlplane.lifecycle import contract
from controlplane.observability import logger

_ORG = next(kind for kind in contract.KINDS if kind.entity == keys.ORG)
# What the consumer acts on, named by the contract: every other detail-type of the bus is no business of it.
EVENTS = (_ORG.created, _ORG.changed, _ORG.deleted)
PASSES = 3  # a change, and as many again as the org changes meanwhile; then the message is retried


def reconcile(org_id: str, table: Table | None = None, keyring: api_keys.ApiKeys | None = None) -> str:
    """Put the org's key where its org item says; returns the plan, or ``deleted``. The table and the
    keys are the consumer's (from its environment) unless given (ops.tenant_keys)."""
    table = table or Table(config.dynamodb(), config.table_name())
    keyring = keyring or api_keys.api_keys()
    org = table.get(keys.org_key(org_id), consistent=True)
    # After each change the org is read again: another consumer may have applied a newer change (an
    # org created again, a plan changed, the org deleted) before this one's, from what it read later.
    for _ in range(PASSES):
        if org is None:
            removed = keyring.delete(org_id)
            logger.info("Tenant key deleted", extra={"org_id": org_id, "existed": removed})
            done = "deleted"
        else:
            done = str(org["plan"])
            key_id = keyring.put(org_id, tenant_keys.tenant_key(org_id), done)
            logger.info("Tenant key in its plan", extra={"org_id": org_id, "plan": done, "key_id": key_id})
        org = table.get(keys.org_key(org_id), consistent=True)
        if done == ("deleted" if org is None else str(org["plan"])):
            return done
    raise RuntimeError(f"Org {org_id} kept changing while its key was put; the queue delivers the event again")
