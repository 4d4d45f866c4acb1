"""The merged OpenAPI document tells the truth: no two functions describe one thing two ways."""

import copy
import json

import pytest
from aws_lambda_powertools.event_handler.openapi.exceptions import OpenAPIMergeError

from local import openapi


def _conflicts(parts: dict[str, dict]) -> list[str]:
    """Schema names that two functions define differently (OpenAPIMerge would keep the last)."""
    definitions: dict[str, set[str]] = {}
    for part in parts.values():
        for name, schema in part.get("components", {}).get("schemas", {}).items():
            definitions.setdefault(name, set()).add(json.dumps(schema, sort_keys=True))
    return sorted(name for name, found in definitions.items() if len(found) > 1)


def _shared(parts: dict[str, dict]) -> set[str]:
    names = [set(part.get("components", {}).get("schemas", {})) for part in parts.values()]
    return set.intersection(*names)


def test_schemas_the_functions_share_are_defined_the_same_way_by_each():
    parts = openapi.parts()

    assert _shared(parts)  # the error bodies at least: the check has something to compare
    assert _conflicts(parts) == []


def test_a_schema_defined_differently_by_two_functions_is_found():
    parts = copy.deepcopy(openapi.parts())
    name = sorted(_shared(parts))[0]
    first = next(iter(parts))
    parts[first]["components"]["schemas"][name]["description"] = "not what the others say"

    assert _conflicts(parts) == [name]


def test_a_route_described_by_two_functions_is_refused():
    part = next(iter(openapi.parts().values()))

    with pytest.raises(OpenAPIMergeError):
        openapi.merged([part, copy.deepcopy(part)])
