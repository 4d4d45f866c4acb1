"""The docs' tables of modules name every module: docs/LOCAL.md's local kit every module of local/
(five were missing: the authorizer step, limits, docs, console, demo), and the README's layer table
every module of the shared package (five were missing: json_body, error_body, text, timing,
lifecycle's access). And docs/ACTIVITY.md names every event that outranks Created, Updated and
Deleted in naming an entry. A module or an event added without a word there fails here."""

import re

from controlplane.lifecycle import activity
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


def test_the_readmes_layer_table_links_every_module_of_the_shared_package():
    readme = (ROOT / "README.md").read_text()
    linked = set(re.findall(r"\]\((functions/controlplane/[a-z_/]+\.py)\)", readme))
    package = ROOT / "functions" / "controlplane"
    modules = {str(path.relative_to(ROOT)) for path in package.rglob("*.py") if path.name != "__init__.py"}

    assert modules - linked == set()


def test_the_activity_page_names_every_event_that_outranks_created_updated_deleted():
    # The unit and user-move events were missing from it (docs/ACTIVITY.md, "One entry per change").
    page = (ROOT / "docs" / "ACTIVITY.md").read_text()
    paragraph = " ".join(page.split("**One entry per change.**", 1)[1].split("\n\n", 1)[0].split())
    for rank in (1, 2, 3):
        named = [name for name, its in activity._RANK.items() if its == rank]
        shown = [name for name in named if f"`{name.split(' ', 1)[1]}`" in paragraph or name in paragraph]

        assert shown == named, rank
