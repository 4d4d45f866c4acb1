"""The docs' tables of modules name every module: docs/LOCAL.md's local kit every module of local/
(five were missing: the authorizer step, limits, docs, console, demo), and the README's layer table
every module of the shared package (five were missing: json_body, error_body, text, timing,
lifecycle's access). docs/ACTIVITY.md names every event that outranks Created, Updated and Deleted
in naming an entry, and docs/API.md every route, who may call it and its success statuses. A module,
an event or a route added without a word there fails here."""

import re

from controlplane.http.routes import ROUTES
from controlplane.lifecycle import activity
from controlplane.logic.access import ADMIN, ANYONE, MEMBER, OWNER, SELF
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


# Who besides operators may call a route, as docs/API.md's route table says it (``Route.allow``).
_WHO = {
    frozenset(): "operators only",
    frozenset({ADMIN}): "admins",
    frozenset({ADMIN, MEMBER}): "admins, members",
    frozenset({ADMIN, SELF}): "admins, the user",
    frozenset({ADMIN, OWNER}): "admins, the ticket's owner",
    frozenset({ANYONE}): "anyone signed in",
}


def test_the_apis_route_table_has_every_route_with_who_may_call_it_and_its_success_statuses():
    # Given docs/API.md's route table (an org's create and activity, the user list, a user's GET and every
    # ticket route were named nowhere on the page, nor their statuses)
    page = (ROOT / "docs" / "API.md").read_text().split("\n## Routes\n", 1)[1].split("\n## ", 1)[0]
    documented = {}
    for row in page.splitlines():
        if row.startswith("| `"):
            route, who, statuses = (cell.strip() for cell in row.strip("|").split("|"))
            documented[route.strip("`")] = (who, set(map(int, re.findall(r"`(\d{3})`", statuses))))

    # Then it is the route table: every route, who may call it, its success statuses
    assert documented == {str(route): (_WHO[route.allow], set(route.successes)) for route in ROUTES}
