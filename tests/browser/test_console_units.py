"""The console's units: the tree, a unit's people, and an admin adding a unit and moving a user,
in headless Chromium against the local gateway."""

import pytest
from playwright.sync_api import expect

from local import tokens
from tests.browser.kit import seed_demo, shoot, sign_in

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)


@pytest.fixture
def demo(api):
    """demo: Engineering (Platform), Sales; bob in Platform; alice (admin) and user02 in the root."""
    seed_demo(api, members=2)
    api.call("POST", "/orgs/demo/units", {"unit_id": "eng", "name": "Engineering"})
    api.call("POST", "/orgs/demo/units", {"unit_id": "platform", "name": "Platform", "parent_id": "eng"})
    api.call("POST", "/orgs/demo/units", {"unit_id": "sales", "name": "Sales"})
    api.call("PATCH", "/orgs/demo/users/bob", {"unit": "platform"})
    return api


def test_admin_sees_the_tree_lists_a_units_people_adds_a_unit_and_moves_a_user(console, demo, page):
    # Given the demo org's admin on the org page
    sign_in(page, console, tokens.for_user("demo", "alice"))
    tree = page.get_by_role("list", name="Units")
    expect(tree.get_by_role("button", name="Platform")).to_be_visible()

    # When they pick Engineering: its people, Platform's included
    tree.get_by_role("button", name="Engineering").click()
    people = page.get_by_role("table", name="People in Engineering")
    expect(people.get_by_role("cell", name="bob", exact=True)).to_be_visible()
    expect(people.get_by_role("cell", name="user02", exact=True)).to_have_count(0)
    expect(tree.get_by_role("button", name="Engineering")).to_have_attribute("aria-pressed", "true")

    # When they add Web under Engineering, and move user02 into it
    add = page.get_by_role("form", name="Add a unit")
    add.get_by_label("Unit id").fill("web")
    add.get_by_label("Unit name").fill("Web")
    add.get_by_label("Parent unit").select_option("eng")
    add.get_by_role("button", name="Add unit").click()
    expect(page.get_by_role("status").filter(has_text="Added unit web.")).to_be_visible()
    move = page.get_by_role("form", name="Move a user")
    move.get_by_label("User id").fill("user02")
    move.get_by_label("To unit").select_option("web")
    move.get_by_role("button", name="Move user").click()
    expect(page.get_by_role("status").filter(has_text="Moved user02 to web.")).to_be_visible()

    # Then Web sits under Engineering, and Engineering's people include user02
    tree = page.get_by_role("list", name="Units")
    tree.get_by_role("button", name="Engineering").click()
    people = page.get_by_role("table", name="People in Engineering")
    expect(people.get_by_role("cell", name="user02", exact=True)).to_be_visible()
    nested = tree.get_by_role("listitem").filter(has=page.get_by_role("button", name="Engineering")).last
    expect(nested.get_by_role("button", name="Web")).to_be_visible()
    assert demo.call("GET", "/orgs/demo/users/user02")["unit"] == "web"
    shoot(page, "admin-units")


def test_moving_a_missing_user_is_refused_in_the_apis_words(console, demo, page):
    sign_in(page, console, tokens.for_user("demo", "alice"))
    move = page.get_by_role("form", name="Move a user")
    move.get_by_label("User id").fill("nobody")
    move.get_by_label("To unit").select_option("sales")
    move.get_by_role("button", name="Move user").click()

    expect(move.get_by_role("alert")).to_have_text("User nobody not found in organization demo")


@pytest.mark.parametrize("typed", [".", ".."])
def test_a_user_id_the_browser_would_resolve_as_a_dot_segment_never_leaves_the_console(console, demo, page, typed):
    sign_in(page, console, tokens.for_user("demo", "alice"))
    sent = []
    page.on("request", lambda request: sent.append((request.method, request.url)))
    move = page.get_by_role("form", name="Move a user")
    move.get_by_label("User id").fill(typed)
    move.get_by_label("To unit").select_option("sales")
    move.get_by_role("button", name="Move user").click()

    # Else ".." would have been PATCH /orgs/demo, with a body meant for a user
    expect(move.get_by_role("alert")).to_have_text(f'"{typed}" is not an id')
    assert [method for method, _ in sent if method != "GET"] == []


def test_a_member_reads_the_tree_but_is_offered_no_change(console, demo, page):
    sign_in(page, console, tokens.for_user("demo", "bob"))
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Organization").click()

    page.get_by_role("list", name="Units").get_by_role("button", name="Platform").click()

    expect(
        page.get_by_role("table", name="People in Platform").get_by_role("cell", name="bob", exact=True)
    ).to_be_visible()
    expect(page.get_by_role("form", name="Add a unit")).to_have_count(0)
    expect(page.get_by_role("form", name="Move a user")).to_have_count(0)
