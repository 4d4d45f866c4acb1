"""Write conditions: what a stored item must hold for a write to apply (its version for If-Match,
a count below its limit...), as DynamoDB condition expressions, and the report of a failed one,
with the item DynamoDB returned (``logic.refusals`` says what it means)."""

from dataclasses import dataclass
from typing import Any

from controlplane.dal.schema import PARTITION_KEY

# A stored item, deserialized. Any: an attribute holds whatever DynamoDB stores (str, Decimal,
# list, set, map...), and each resource module knows its own items' attributes.
Item = dict[str, Any]
# Request parameters shared by several operations (condition, names, values), spread into the call.
Params = dict[str, Any]


ABSENT = object()  # an Expect's value: the attribute must not be stored


@dataclass(frozen=True)
class Expect:
    """A write condition beyond existence: the stored ``attribute`` must equal ``value`` (or, with
    ``at_most``, be at most ``value`` where it is stored at all; with ``at_least``, be stored and at
    least ``value``); ``ABSENT``: must not be stored."""

    attribute: str
    value: object
    at_most: bool = False
    at_least: bool = False

    def met_by(self, stored: Item) -> bool:
        if self.value is ABSENT:
            return self.attribute not in stored
        if self.at_most:
            return self.attribute not in stored or stored[self.attribute] <= self.value
        if self.at_least:
            return self.attribute in stored and stored[self.attribute] >= self.value
        return stored.get(self.attribute) == self.value

    def clause(self, name: str, value: str) -> str:
        if self.value is ABSENT:
            return f"attribute_not_exists({name})"
        if self.at_least:
            return f"{name} >= {value}"
        return f"(attribute_not_exists({name}) OR {name} <= {value})" if self.at_most else f"{name} = {value}"


class ConditionFailed(Exception):
    """A write's condition failed: the data layer reports it, logic says what it means.

    ``item`` is the stored item as DynamoDB returned it (``ReturnValuesOnConditionCheckFailure``),
    None where it returned none (there is no item, or the write asked for none); ``action`` is the
    index of the refused action in a transaction (0 for a single write)."""

    def __init__(self, item: Item | None, action: int = 0):
        super().__init__(f"condition failed on action {action}")
        self.item = item
        self.action = action


def condition(expects: tuple[Expect, ...]) -> Params:
    """``attribute_exists(PK)`` and every expectation, as request parameters."""
    names: dict[str, str] = {"#pk": PARTITION_KEY}
    values: dict[str, object] = {}
    clauses = ["attribute_exists(#pk)"]
    for i, expect in enumerate(expects):
        names[f"#e{i}"] = expect.attribute
        if expect.value is not ABSENT:
            values[f":e{i}"] = expect.value
        clauses.append(expect.clause(f"#e{i}", f":e{i}"))
    request: Params = {"ConditionExpression": " AND ".join(clauses), "ExpressionAttributeNames": names}
    if values:
        request["ExpressionAttributeValues"] = values
    if expects:
        request["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return request
