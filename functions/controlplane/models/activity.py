"""An org's activity log as the API answers it: the lifecycle events it kept (docs/ACTIVITY.md)."""

from typing import Any, Final, Literal

from pydantic import BaseModel, Field

from controlplane.models.resources import Page, Timestamp


class ActivityResource(BaseModel):
    kind: Literal["organization", "user", "ticket", "unit"]
    id: str = Field(description="Its org_id, user_id, ticket_id or unit_id", examples=["alice"])
    subject: str | None = Field(
        None, description="A ticket's subject as the change left it (as it was, for a delete); null for others"
    )


class ActivityEntry(BaseModel):
    """One change of the org: the lifecycle event it published (docs/EVENTS.md), the most telling one
    where the change published two."""

    event_id: str = Field(description="The event's event_id: the stream record it came from")
    type: str = Field(description="The event's detail-type", examples=["User Role Changed"])
    occurred_at: Timestamp
    actor: str | None = Field(description="The `sub` of the caller who made the change; null where none is known")
    resource: ActivityResource
    changes: dict[str, Any] | None = Field(
        description="{field: {old, new}} for every field an update changed; null for other events", examples=[None]
    )

    def seen_by(self, operator: bool) -> "ActivityEntry | None":
        """The entry as a caller may see it: as on the org itself, the suspension's reason is for
        operators only, so its change is left out of an admin's entry, and an entry that changed
        nothing else (a new reason for an org suspended already) is none of theirs: None. Kept, it
        was an ``Organization Updated`` of no change, which told them the reason was reworded."""
        if operator or not self.changes or not _OPERATORS_ONLY & self.changes.keys():
            return self
        kept = {k: v for k, v in self.changes.items() if k not in _OPERATORS_ONLY}
        return self.model_copy(update={"changes": kept}) if kept else None


# Org fields whose value only operators see (resources.Org.seen_by), in entries' changes too.
_OPERATORS_ONLY: Final = frozenset({"suspension_reason"})


class ActivityPage(Page):
    items: list[ActivityEntry] = Field(description="Newest first")
