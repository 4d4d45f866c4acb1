"""What a write stamps on an item besides the client's fields: when (``created_at``, ``updated_at``),
which version, by whom (``created_by``, ``updated_by``); and the marks of an org's delete.

Who wrote an item last, and who started an org's delete, is the ``sub`` of the caller, so that the
lifecycle events (controlplane.lifecycle.contract) can name their actor. Never part of a response.
"""

import uuid
from datetime import UTC, datetime
from typing import Any

CREATED_BY, UPDATED_BY, DELETED_BY = "created_by", "updated_by", "deleted_by"
DELETING = "deleting_since"  # set on an org whose cascade delete has begun
# On a user: the ``sub`` of the sign-in made for them (Cognito's, from AdminCreateUser). The authorizer
# allows a token only if its ``sub`` is this one, so a token outlives neither its user nor its user id.
SIGN_IN_SUBJECT = "sign_in_sub"


def local_sign_in_subject() -> str:
    """A user's sign-in subject where there is no user pool (make run): new per creation, as Cognito's."""
    return f"local-{uuid.uuid4()}"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso(epoch: float) -> str:
    """``epoch`` (seconds) as ``now`` writes a time: fixed width, so that text order is time order."""
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_item(
    item_keys: dict[str, str], entity: str, attributes: dict[str, Any], actor: str | None = None
) -> dict[str, Any]:
    stamp = now()
    item = {**item_keys, "entity": entity, **attributes, "created_at": stamp, "updated_at": stamp, "version": 1}
    if actor:
        item |= {CREATED_BY: actor, UPDATED_BY: actor}
    return item


def written_by(changes: dict[str, Any], actor: str) -> dict[str, Any]:
    """A client's changes plus who made them, as one UpdateItem writes them."""
    return {**changes, UPDATED_BY: actor}
