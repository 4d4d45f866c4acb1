"""When a change was made, for its events' ``occurred_at`` (the rules: ``contract``'s docstring)."""

from datetime import UTC, datetime
from typing import Any

from controlplane.dal import stamps


def occurred_at(old: dict[str, Any], new: dict[str, Any], recorded_at: datetime) -> datetime:
    """When the change was made (see the module's docstring): the write's own stamp, exact; for a
    delete, the later of the record's rounded time and the item's last stamp."""
    if not new:
        last = [instant(old[name]) for name in ("updated_at", stamps.DELETING) if isinstance(old.get(name), str)]
        return max([recorded_at, *last])
    if not old:
        stamp = new.get("created_at")
    elif stamps.DELETING in new and stamps.DELETING not in old:
        stamp = new[stamps.DELETING]
    else:  # a write that moved no stamp sends no event; the record's time all the same
        stamp = new.get("updated_at") if new.get("updated_at") != old.get("updated_at") else None
    return instant(stamp) if isinstance(stamp, str) else recorded_at


def instant(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp).astimezone(UTC)
