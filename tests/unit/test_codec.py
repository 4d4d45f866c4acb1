"""The lean deserializer returns exactly what boto3's TypeDeserializer returns, type for type."""

from decimal import Decimal

from boto3.dynamodb.types import Binary, TypeDeserializer
from hypothesis import given
from hypothesis import strategies as st

from controlplane.dal import codec, keys
from controlplane.logic import tickets
from controlplane.models.resources import TicketCreate

_NUMBERS = st.one_of(
    st.integers(min_value=-(10**38) + 1, max_value=10**38 - 1).map(str),
    st.decimals(min_value=-(10**9), max_value=10**9, places=8, allow_nan=False).map(str),
    st.sampled_from(["0", "-0", "1E+2", "1.5e-3", "0.000", "123456789012345678901234567890.12345678"]),
)
_TEXT = st.text(max_size=20)
_SCALARS = st.one_of(
    _TEXT.map(lambda s: {"S": s}),
    _NUMBERS.map(lambda n: {"N": n}),
    st.binary(max_size=20).map(lambda b: {"B": b}),
    st.booleans().map(lambda b: {"BOOL": b}),
    st.just({"NULL": True}),
    st.lists(_TEXT, min_size=1, max_size=5, unique=True).map(lambda v: {"SS": v}),
    st.lists(_NUMBERS, min_size=1, max_size=5).map(lambda v: {"NS": v}),
    st.lists(st.binary(max_size=8), min_size=1, max_size=5, unique=True).map(lambda v: {"BS": v}),
)
ATTRIBUTE_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda v: {"L": v}),
        st.dictionaries(_TEXT, inner, max_size=4).map(lambda v: {"M": v}),
    ),
    max_leaves=12,
)
ITEMS = st.dictionaries(st.text(min_size=1, max_size=10), ATTRIBUTE_VALUES, max_size=8)


def _typed(value):
    """A value with the type of every part spelled out, so that 1 == Decimal(1) cannot pass."""
    if isinstance(value, dict):
        return ("dict", {name: _typed(v) for name, v in value.items()})
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    if isinstance(value, set | frozenset):
        return (type(value).__name__, sorted((_typed(v) for v in value), key=repr))
    if isinstance(value, Decimal):
        return ("Decimal", str(value))  # keeps the exponent: Decimal("1E+2") is not Decimal("100")
    return (type(value).__name__, value)


@given(ITEMS)
def test_items_deserialize_as_boto3_does(item):
    expected = {name: TypeDeserializer().deserialize(value) for name, value in item.items()}

    assert _typed(codec.item(item)) == _typed(expected)


def test_a_stored_ticket_deserializes_as_boto3_does():
    # Given a ticket item exactly as the tickets module stores it, in DynamoDB's wire format
    from boto3.dynamodb.types import TypeSerializer

    stored = tickets.ticket_item("acme", "alice", TicketCreate(subject="Printer", tags=["a", "b"]))
    wire = {name: TypeSerializer().serialize(value) for name, value in stored.items()}

    # When both deserialize it
    lean, reference = codec.item(wire), {name: TypeDeserializer().deserialize(v) for name, v in wire.items()}

    # Then the values and their types agree (the version is a Decimal, as boto3 returns it)
    assert _typed(lean) == _typed(reference)
    assert isinstance(lean["version"], Decimal) and lean["tags"] == ["a", "b"]
    assert codec.item({k: {"S": v} for k, v in keys.org_key("acme").items()}) == keys.org_key("acme")


def test_binary_values_are_boto3_binaries():
    assert codec.item({"b": {"B": b"\x00"}}) == {"b": Binary(b"\x00")}


def test_a_malformed_attribute_value_is_a_type_error():
    import pytest

    for bad in ({}, {"X": "1"}):
        with pytest.raises(TypeError):
            codec.item({"a": bad})


_PYTHON_VALUES = st.dictionaries(
    st.text(min_size=1, max_size=10),
    st.one_of(
        _TEXT,
        st.integers(min_value=-(10**38) + 1, max_value=10**38 - 1),  # DynamoDB's numbers: boto3 refuses more
        st.booleans(),
        st.none(),
        st.decimals(min_value=-(10**9), max_value=10**9, places=4, allow_nan=False),
        st.lists(_TEXT, max_size=3),
        st.dictionaries(_TEXT, _TEXT, max_size=3),
    ),
    max_size=6,
)


@given(_PYTHON_VALUES)
def test_values_serialize_as_boto3_does(values):
    from boto3.dynamodb.types import TypeSerializer

    expected = {name: TypeSerializer().serialize(value) for name, value in values.items()}

    assert codec.to_dynamo(values) == expected
