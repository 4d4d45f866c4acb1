"""Why a write was refused. The data layer reports a failed condition as ``ConditionFailed``, with
the item DynamoDB returned; here it becomes the domain error: the error of the first rule the stored
item breaks, else the item's absence."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from controlplane.dal.conditions import ConditionFailed, Expect, Item
from controlplane.models.errors import ApiError, PreconditionFailed

# A write condition, and the error it means when the stored item breaks it (made from that item,
# to say by how much).
Rule = tuple[Expect, Callable[[Item], ApiError]]


def if_match(version: int | None) -> tuple[Rule, ...]:
    """The If-Match rule: the stored version must be the one the client last saw."""
    if version is None:
        return ()
    return ((Expect("version", version), lambda _: _version_changed(version)),)


def check_version(item: Item, version: int | None) -> None:
    """The same rule, for the cascade deletes, before their first write."""
    if version is not None and item["version"] != version:
        raise _version_changed(version)


def expects(rules: tuple[Rule, ...]) -> tuple[Expect, ...]:
    """The conditions of ``rules``, for the data layer."""
    return tuple(expect for expect, _ in rules)


def refusal(failed: ConditionFailed, missing: ApiError, rules: tuple[Rule, ...] = ()) -> ApiError:
    """The error of the first rule the stored item breaks; ``missing`` when there is no item (or
    DynamoDB returned none)."""
    if failed.item is not None:
        for expect, error in rules:
            if not expect.met_by(failed.item):
                return error(failed.item)
    return missing


@contextmanager
def refused_as(missing: ApiError, rules: tuple[Rule, ...] = ()) -> Iterator[None]:
    """A write under ``rules``: a failed condition raises ``refusal``'s error."""
    try:
        yield
    except ConditionFailed as failed:
        raise refusal(failed, missing, rules) from None


def _version_changed(version: int) -> PreconditionFailed:
    return PreconditionFailed(f"The resource is not at version {version}: read it again for its current ETag")
