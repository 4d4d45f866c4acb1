"""Which lifecycle events change who may call the API, derived from the contract's catalogue
(``contract.KINDS``): after any of them, a decision the authorizer cached before it may be wrong, so
the stage's authorizer cache is flushed (functions/revocations in the cloud, the local gateway's
cache locally). Deny decisions are cached too, so a reactivation is one of them.

- an org's status moves (its transitions: Suspended, Reactivated), its delete starts, it is deleted;
- a user is deleted, or their role changes (the kind's watched field).

A user id or org id deleted and re-created needs no event of its own: the delete flushed, and the
new user's sign-in has a new subject, which the old tokens do not carry.
"""

from controlplane.dal import keys
from controlplane.lifecycle.contract import DELETION_STARTED, KINDS

_ORG = next(kind for kind in KINDS if kind.entity == keys.ORG)
_USER = next(kind for kind in KINDS if kind.entity == keys.USER)
ROLE = "role"  # the user's field whose change sends ``_USER.changed``; tests/unit checks it is the watched one

ACCESS_CHANGES: tuple[str, ...] = (
    *(transition.detail_type for transition in _ORG.transitions),
    DELETION_STARTED,
    _ORG.deleted,
    _USER.deleted,
    _USER.changed,
)
