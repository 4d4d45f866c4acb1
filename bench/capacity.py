"""Write units from stream records: what each change costs the table and every global secondary index,
and on which partition key it lands. Pure arithmetic on DynamoDB attribute values, no I/O.

Item size, per DynamoDB's "Item sizes and formats" (developer guide, CapacityUnitCalculations): the
sum over attributes of the UTF-8 bytes of the name plus the value's size. A string is its UTF-8 bytes,
a number about one byte per two significant digits plus one, a binary its raw bytes, a null or a
Boolean one byte; a list or a map 3 bytes plus its elements, each element one byte more (a map's
elements count their names). A set is the sum of its elements.

A write unit covers 1 KB, rounded up, at least one per write. A put or an update costs the larger of
the item before and after it; a delete the item it deleted. The indexes (developer guide, "Global
secondary indexes", provisioned throughput considerations): an item enters an index when it has all
of the index's key attributes, and leaves it when it loses one; an update that changes an index key
is two index writes, a delete of the old entry and a put of the new; an update that leaves the index
entry as it was (only non-projected, non-key attributes changed) costs the index nothing. An entry is
the table's key, the index's key and the projected attributes: ALL projects the whole item.
"""

import math
from decimal import Decimal
from typing import Any, NamedTuple

from controlplane.dal.schema import TABLE_SCHEMA

KB = 1024
TABLE = "table"  # the label of the base table among the indexes


def number_size(text: str) -> int:
    digits = Decimal(text).normalize().as_tuple().digits
    significant = len(digits) if any(digits) else 1
    return (significant + 1) // 2 + 1


def value_size(value: dict[str, Any]) -> int:
    """The size of one attribute value, in DynamoDB's typed form (``{"S": "..."}``)."""
    (kind, data), *_ = value.items()
    if kind == "S":
        return len(data.encode())
    if kind == "N":
        return number_size(data)
    if kind == "B":
        return len(data)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(element.encode()) for element in data)
    if kind == "NS":
        return sum(number_size(element) for element in data)
    if kind == "BS":
        return sum(len(element) for element in data)
    if kind == "L":
        return 3 + sum(value_size(element) + 1 for element in data)
    if kind == "M":
        return 3 + sum(len(name.encode()) + value_size(element) + 1 for name, element in data.items())
    raise ValueError(f"unknown attribute type {kind!r}")


def item_size(item: dict[str, dict]) -> int:
    return sum(len(name.encode()) + value_size(value) for name, value in item.items())


def write_units(size: int) -> int:
    return max(1, math.ceil(size / KB))


class Index(NamedTuple):
    name: str
    hash_key: str
    range_key: str | None
    projection: str  # ALL, KEYS_ONLY or INCLUDE
    included: tuple[str, ...] = ()


def _keys(schema: list[dict]) -> tuple[str, str | None]:
    by_type = {key["KeyType"]: key["AttributeName"] for key in schema}
    return by_type["HASH"], by_type.get("RANGE")


def indexes(schema: dict = TABLE_SCHEMA) -> tuple[Index, ...]:
    """The base table (projecting everything) and each global secondary index of a CreateTable schema."""
    found = [Index(TABLE, *_keys(schema["KeySchema"]), "ALL")]
    for gsi in schema.get("GlobalSecondaryIndexes", []):
        projection = gsi["Projection"]
        found.append(
            Index(
                gsi["IndexName"],
                *_keys(gsi["KeySchema"]),
                projection["ProjectionType"],
                tuple(projection.get("NonKeyAttributes", ())),
            )
        )
    return tuple(found)


class Write(NamedTuple):
    index: str
    partition: str  # the partition key's value
    units: int


def entry(index: Index, table: Index, item: dict | None) -> dict | None:
    """The index's entry for ``item``, or None when the item lacks one of the index's keys."""
    if not item or index.hash_key not in item or (index.range_key and index.range_key not in item):
        return None
    if index.projection == "ALL":
        return item
    names = {table.hash_key, table.range_key, index.hash_key, index.range_key} - {None}
    if index.projection == "INCLUDE":
        names |= set(index.included)
    return {name: value for name, value in item.items() if name in names}


def _partition(item: dict, index: Index) -> str:
    return str(next(iter(item[index.hash_key].values())))


def writes(record: dict, schema: dict = TABLE_SCHEMA) -> list[Write]:
    """The writes one stream record (NEW_AND_OLD_IMAGES) made, in the table and in every index."""
    change = record["dynamodb"]
    old, new = change.get("OldImage"), change.get("NewImage")
    table, *_ = all_indexes = indexes(schema)
    found = []
    for index in all_indexes:
        before, after = entry(index, table, old), entry(index, table, new)
        if before is None and after is None:
            continue
        if before is None or after is None:  # entered or left the index
            present = before if after is None else after
            found.append(Write(index.name, _partition(present, index), write_units(item_size(present))))
            continue
        key = [index.hash_key, index.range_key]
        if [before.get(name) for name in key] != [after.get(name) for name in key]:  # a move: delete + put
            found.append(Write(index.name, _partition(before, index), write_units(item_size(before))))
            found.append(Write(index.name, _partition(after, index), write_units(item_size(after))))
        elif before != after or index.name == TABLE:
            units = write_units(max(item_size(before), item_size(after)))
            found.append(Write(index.name, _partition(after, index), units))
    return found
