"""Write conditions: what a stored item must hold for a write to apply (its version for If-Match,
a count below its limit...), as DynamoDB condition expressions, and which error a failed one means."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from controlplane.dal.schema import PARTITION_KEY
from controlplane.models.errors import ApiError, PreconditionFailed

# A stored item, deserialized. Any: an attribute holds whatever DynamoDB stores (str, Decimal,
# list, set, map...), and each resource module knows its own items' attributes.
Item = dict[str, Any]
# Request parameters shared by several operations (condition, names, values), spread into the call.
Params = dict[str, Any]

Refusal = ApiError | Callable[[Item], ApiError]


@dataclass(frozen=True)
class Expect:
    """A write condition beyond existence: the stored ``attribute`` must equal ``value`` (or, with
    ``at_most``, be at most ``value`` where it is stored at all), else ``error``: an error, or a
    function of the stored item that makes one (to say by how much it failed)."""

    attribute: str
    value: object
    error: Refusal
    at_most: bool = False

    def met_by(self, stored: Item) -> bool:
        if self.at_most:
            return self.attribute not in stored or stored[self.attribute] <= self.value
        return stored.get(self.attribute) == self.value

    def clause(self, name: str, value: str) -> str:
        return f"(attribute_not_exists({name}) OR {name} <= {value})" if self.at_most else f"{name} = {value}"


def version_is(version: int | None) -> tuple[Expect, ...]:
    """The If-Match condition: the stored version must be the one the client last saw."""
    if version is None:
        return ()
    return (Expect("version", version, _version_changed(version)),)


def check_version(item: Item, version: int | None) -> None:
    """The same check, for the cascade deletes, before their first write."""
    if version is not None and item["version"] != version:
        raise _version_changed(version)


def _version_changed(version: int) -> PreconditionFailed:
    return PreconditionFailed(f"The resource changed; its version is no longer {version}")


def refused(missing: ApiError, expects: tuple[Expect, ...], stored: Item | None) -> ApiError:
    """Why a write whose condition failed was refused: the first expectation the stored item
    fails, else ``missing`` (no item, or none returned)."""
    failed = (
        e.error if isinstance(e.error, ApiError) else e.error(stored)
        for e in expects
        if stored and not e.met_by(stored)
    )
    return next(failed, missing)


def condition(expects: tuple[Expect, ...]) -> Params:
    """``attribute_exists(PK)`` and every expectation, as request parameters."""
    names: dict[str, str] = {"#pk": PARTITION_KEY}
    values: dict[str, object] = {}
    clauses = ["attribute_exists(#pk)"]
    for i, expect in enumerate(expects):
        names[f"#e{i}"] = expect.attribute
        values[f":e{i}"] = expect.value
        clauses.append(expect.clause(f"#e{i}", f":e{i}"))
    request: Params = {"ConditionExpression": " AND ".join(clauses), "ExpressionAttributeNames": names}
    if expects:
        request["ExpressionAttributeValues"] = values
        request["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return request
