"""Each org's API key follows its org item: events only say which org to look at.

The event's own content is not trusted for the state: the org item, read consistently, is. So a
replay, a duplicate or events out of order (a Plan Changed after the Deleted, a Created delivered
twice) all end with the key where the org is now: in its current plan's usage plan, or gone.
"""

from controlplane import config
from controlplane.dal import api_keys, keys, tenant_keys
from controlplane.dal.table import Table
from controlplane.lifecycle import contract
from controlplane.observability import logger

_ORG = next(kind for kind in contract.KINDS if kind.entity == keys.ORG)
# What the consumer acts on, named by the contract: every other detail-type of the bus is no business of it.
EVENTS = (_ORG.created, _ORG.changed, _ORG.deleted)


def reconcile(org_id: str, table: Table | None = None, keyring: api_keys.ApiKeys | None = None) -> str:
    """Put the org's key where its org item says; returns the plan, or ``deleted``. The table and the
    keys are the consumer's (from its environment) unless given (ops.tenant_keys)."""
    table = table or Table(config.dynamodb(), config.table_name())
    keyring = keyring or api_keys.api_keys()
    org = table.get(keys.org_key(org_id), consistent=True)
    if org is None:
        removed = keyring.delete(org_id)
        logger.info("Tenant key deleted", extra={"org_id": org_id, "existed": removed})
        # An org of that id created while the key went (another consumer may have put its key, the
        # same value, just before): it keeps one.
        org = table.get(keys.org_key(org_id), consistent=True)
        if org is None:
            return "deleted"
    plan = str(org["plan"])
    key_id = keyring.put(org_id, tenant_keys.tenant_key(org_id), plan)
    logger.info("Tenant key in its plan", extra={"org_id": org_id, "plan": plan, "key_id": key_id})
    return plan
