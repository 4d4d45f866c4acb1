"""DynamoDB's attribute values to Python and back. To Python, for the items we read: the same
values boto3's TypeDeserializer returns (numbers as ``Decimal`` in DynamoDB's own decimal context, sets as sets,
binary as ``Binary``), at a quarter of its cost per item (3 µs for a ticket, not 12).

TypeDeserializer formats a method name and looks it up with ``getattr`` for every value. Our items
are strings and numbers with one list of strings (a ticket's tags), so those are answered inline in
one comprehension and every other type goes through ``_value``. ``tests/unit/test_codec.py`` checks it
against TypeDeserializer on every shape DynamoDB can return.
"""

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.types import DYNAMODB_CONTEXT, Binary, TypeSerializer

if TYPE_CHECKING:  # the stub packages are for the type checker only, never in Lambda
    from types_boto3_dynamodb.type_defs import AttributeValueTypeDef

_decimal = DYNAMODB_CONTEXT.create_decimal
_serializer = TypeSerializer()


def item(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """One item (or key) as DynamoDB returns it, as plain Python values."""
    return {
        name: value["S"] if "S" in value else _decimal(value["N"]) if "N" in value else _value(value)
        for name, value in attributes.items()
    }


def _value(attribute: Mapping[str, Any]) -> Any:
    if len(attribute) == 1:
        [(tag, raw)] = attribute.items()
        if tag == "S":
            return raw
        if tag == "N":
            return _decimal(raw)
        if tag == "L":
            return [_value(value) for value in raw]
        if tag == "M":
            return item(raw)
        convert = _OTHERS.get(tag)
        if convert is not None:
            return convert(raw)
    raise TypeError(f"Not a DynamoDB attribute value: {attribute!r}")


_OTHERS: dict[str, Callable[[Any], Any]] = {
    "BOOL": lambda raw: raw,
    "NULL": lambda raw: None,
    "B": Binary,
    "SS": set,
    "NS": lambda raw: set(map(_decimal, raw)),
    "BS": lambda raw: set(map(Binary, raw)),
}


def to_dynamo(values: Mapping[str, Any]) -> dict[str, "AttributeValueTypeDef"]:
    """An item, key or expression's values as DynamoDB takes them: boto3's TypeSerializer, with a
    string (every key attribute of ours) answered inline, as it answers it, without its type probes."""
    return {
        name: {"S": value} if type(value) is str else _serializer.serialize(value) for name, value in values.items()
    }


from_dynamo = item  # what the data layer calls it, beside to_dynamo
