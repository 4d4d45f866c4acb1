"""Org units: request and response bodies of the unit routes (issue 27).

A unit's id follows the other ids' rules (a slug); ``root`` is the implicit root of every org's
tree and cannot be created, renamed, moved or deleted.
"""

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field

from controlplane.models.ids import ROOT_UNIT
from controlplane.models.resources import Name, OrgId, Page, Patch, Request, Resource, UnitId

ROOT = ROOT_UNIT
MAX_DEPTH = 10  # the root is depth 0; its children 1
MAX_UNITS = 1_000  # per org
# A move of a subtree with at most this many units and users finishes within its request.
MOVE_IN_REQUEST = 100


def _not_root(unit_id: str) -> str:
    if unit_id == ROOT:
        raise ValueError(f"{ROOT!r} is the implicit root of every organization's tree")
    return unit_id


NewUnitId = Annotated[UnitId, AfterValidator(_not_root)]
ParentId = Annotated[UnitId, Field(description="A unit's id, or `root`")]


def split(path: str) -> tuple[str, ...]:
    """``/eng/platform`` -> ``("eng", "platform")``; the root's ``/`` -> ``()``."""
    return tuple(part for part in path.split("/") if part)


def join(unit_path: tuple[str, ...]) -> str:
    return "/" + "/".join(unit_path)


class UnitCreate(Request):
    unit_id: NewUnitId
    name: Name
    parent_id: ParentId = ROOT


class UnitUpdate(Patch):
    name: Name | None = None
    parent_id: ParentId | None = Field(None, description="Moves the unit, with everything below it, under this one")


class Unit(Resource):
    org_id: OrgId
    unit_id: UnitId
    name: str
    parent_id: UnitId | None = Field(description="null for the root", examples=["eng"])
    path: str = Field(description="The ids from the root down to this unit", examples=["/eng/platform"])
    depth: int = Field(description="0 for the root, 1 for its children...", examples=[2])
    moving: bool = Field(False, description="A move of this unit's subtree is under way")

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> "Unit":
        return cls.model_validate({**item, "moving": "moving" in item})


class UnitPage(Page):
    items: list[Unit] = Field(description="Depth-first: each unit before its children, siblings by id")


class MoveAccepted(BaseModel):
    org_id: OrgId
    unit_id: UnitId
    status: Literal["moving"] = "moving"
    message: str = "The move continues in the background; GET the unit until `moving` is false"
