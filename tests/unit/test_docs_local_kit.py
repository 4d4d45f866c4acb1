"""docs/LOCAL.md's table of the local kit names every module of local/: a module added without a
word there fails here (five were missing: the authorizer step, limits, docs, console, demo)."""

import re

from local import ROOT


def test_the_local_kit_table_names_every_module():
    page = (ROOT / "docs" / "LOCAL.md").read_text().split("## The local kit", 1)[1]
    named = {
        name
        for row in page.splitlines()
        if row.startswith("| `")
        for name in re.findall(r"`([a-z_]+\.py)`", row.split("|")[1])
    }
    modules = {path.name for path in (ROOT / "local").glob("*.py")} - {"__init__.py"}

    assert modules - named == set()
