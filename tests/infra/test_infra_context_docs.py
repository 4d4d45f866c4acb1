"""docs/OPERATIONS.md's table of context keys is StageConfig's: every key the stack reads is listed,
nothing else is, and a number's default is the code's. A key added, dropped or given another
default that forgets the docs fails here."""

import dataclasses
import re

from infra.config import StageConfig
from local import ROOT

OPERATIONS = (ROOT / "docs" / "OPERATIONS.md").read_text()
# Not context keys a person sets: the region is the CDK CLI's, sam_local is make synth-sam's.
NOT_DOCUMENTED = {"region", "sam_local"}


def documented() -> dict[str, str]:
    """The table's rows: each key and its default cell, code spans unwrapped."""
    rows = re.findall(r"^\| `([a-z_]+)` \| ([^|]+) \|", OPERATIONS.split("Context keys", 1)[1], re.M)
    return {key: default.strip().replace("`", "") for key, default in rows}


def test_the_table_lists_every_context_key_the_stack_reads():
    keys = {field.name for field in dataclasses.fields(StageConfig)} - NOT_DOCUMENTED

    assert set(documented()) == keys


def test_each_numbers_default_is_the_codes():
    defaults = StageConfig()
    numbers = {key: getattr(defaults, key) for key in documented() if type(getattr(defaults, key)) is int}

    assert numbers and {key: int(documented()[key]) for key in numbers} == numbers
