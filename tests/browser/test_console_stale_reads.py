"""After a write, the console shows what the write answered, not a read that lags it.

On AWS a GET right after a write may read the item or the list as it was (reads are eventually
consistent, docs/API.md); DynamoDB Local never lags. Each test answers the read after the write with
the state before it (``serve_stale``), as AWS may, and checks that the screen shows the write."""

import pytest
from playwright.sync_api import expect

from local import tokens
from tests.browser.kit import OPERATOR_TOKEN, seed_demo, sign_in

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)

NOT_FOUND = {"error": {"code": "not_found", "message": "Not found"}}


def open_as(page, console, user_id: str, path: str) -> None:
    """The console at ``#<path>``, signed in as demo's ``user_id``."""
    sign_in(page, console, tokens.for_user("demo", user_id))
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    page.goto(f"{console}#{path}")


def serve_stale(page, pattern: str, body, status: int = 200) -> None:
    """From now on, every GET of ``pattern`` answers ``body``: the state before the write."""

    def answer(route) -> None:
        if route.request.method != "GET":
            route.continue_()
            return
        headers = {"ETag": f'"{body["version"]}"'} if "version" in body else {}
        route.fulfill(status=status, json=body, headers=headers)

    page.route(pattern, answer)


def test_a_saved_ticket_shows_its_changes_and_saves_again_without_a_412(console, api, page):
    # Given a ticket open in the console, whose next read answers it as before the save
    seed_demo(api)
    ticket = api.call("POST", "/orgs/demo/users/bob/tickets", {"subject": "Printer on fire"})
    open_as(page, console, "alice", f"/orgs/demo/tickets/{ticket['ticket_id']}")
    editor = page.get_by_role("form", name="Edit the ticket")
    expect(editor.get_by_label("Status")).to_have_value("open")
    serve_stale(page, f"**/orgs/demo/tickets/{ticket['ticket_id']}", ticket)

    # When its status is saved, then its subject
    editor.get_by_label("Status").select_option("pending")
    editor.get_by_role("button", name="Save ticket").click()
    expect(page.get_by_role("status").filter(has_text="Ticket saved.")).to_be_visible()

    # Then the form shows the new status, and the second save goes with the first one's version
    editor = page.get_by_role("form", name="Edit the ticket")
    expect(editor.get_by_label("Status")).to_have_value("pending")
    editor.get_by_label("Subject").fill("Printer still on fire")
    editor.get_by_role("button", name="Save ticket").click()
    expect(page.get_by_role("status").filter(has_text="Ticket saved.")).to_be_visible()
    expect(page.get_by_role("alert")).to_have_count(0)
    stored = api.call("GET", f"/orgs/demo/tickets/{ticket['ticket_id']}")
    assert (stored["status"], stored["subject"], stored["version"]) == ("pending", "Printer still on fire", 3)


def test_a_renamed_org_shows_its_new_name_and_renames_again_without_a_412(console, api, page):
    # Given the org page, whose next read answers the org as before the rename
    seed_demo(api)
    sign_in(page, console, tokens.for_user("demo", "alice"))
    expect(page.get_by_role("heading", name="Demo Inc", level=2)).to_be_visible()
    serve_stale(page, "**/orgs/demo", api.call("GET", "/orgs/demo"))

    # When the admin renames it twice
    rename = page.get_by_role("form", name="Rename the organization")
    rename.get_by_label("Organization name").fill("Demo Industries")
    rename.get_by_role("button", name="Rename").click()

    # Then the page shows the new name, and the second rename goes with the first one's version
    expect(page.get_by_role("heading", name="Demo Industries", level=2)).to_be_visible()
    rename = page.get_by_role("form", name="Rename the organization")
    rename.get_by_label("Organization name").fill("Demo Holdings")
    rename.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("heading", name="Demo Holdings", level=2)).to_be_visible()
    assert api.call("GET", "/orgs/demo")["name"] == "Demo Holdings"


def test_a_saved_profile_shows_the_new_name(console, api, page):
    # Given bob's profile, whose next read answers him as before the save
    seed_demo(api)
    open_as(page, console, "bob", "/orgs/demo/users/bob")
    expect(page.get_by_role("heading", name="Bob (bob)", level=1)).to_be_visible()
    serve_stale(page, "**/orgs/demo/users/bob", api.call("GET", "/orgs/demo/users/bob"))

    # When he saves a new name
    profile = page.get_by_role("form", name="Profile")
    profile.get_by_label("Full name").fill("Robert")
    profile.get_by_role("button", name="Save profile").click()

    # Then the page shows it, not the name it had
    expect(page.get_by_role("heading", name="Robert (bob)", level=1)).to_be_visible()
    expect(page.get_by_role("form", name="Profile").get_by_label("Full name")).to_have_value("Robert")


def test_a_ticket_just_opened_is_shown_though_a_read_does_not_find_it_yet(console, api, page):
    # Given bob's page, where any ticket read answers 404 for now, as a read just after a create may
    seed_demo(api)
    open_as(page, console, "bob", "/orgs/demo/users/bob")
    serve_stale(page, "**/orgs/demo/tickets/*", NOT_FOUND, status=404)

    # When he opens a ticket
    opener = page.get_by_role("form", name="Open a ticket")
    opener.get_by_label("Subject").fill("Screen flickers")
    opener.get_by_role("button", name="Open ticket").click()

    # Then its page shows it, not "Not found"
    expect(page.get_by_role("heading", name="Ticket: Screen flickers", level=1)).to_be_visible()
    expect(page.get_by_role("alert")).to_have_count(0)


def test_a_ticket_just_deleted_is_not_listed_though_the_list_still_has_it(console, api, page):
    # Given a ticket, and bob's tickets list answering as before its delete
    seed_demo(api)
    ticket = api.call("POST", "/orgs/demo/users/bob/tickets", {"subject": "Printer on fire"})
    stale_list = api.call("GET", "/orgs/demo/users/bob/tickets?limit=10")
    open_as(page, console, "alice", f"/orgs/demo/tickets/{ticket['ticket_id']}")
    expect(page.get_by_role("heading", name="Ticket: Printer on fire", level=1)).to_be_visible()
    serve_stale(page, "**/orgs/demo/users/bob/tickets?*", stale_list)

    # When the admin deletes it
    page.get_by_role("button", name="Delete ticket…").click()
    page.get_by_role("dialog", name="Delete this ticket?").get_by_role("button", name="Delete for good").click()

    # Then bob's page, shown next, lists it no more
    expect(page.get_by_role("heading", name="Bob (bob)", level=1)).to_be_visible()
    expect(page.get_by_text("No tickets yet.")).to_be_visible()
    expect(page.get_by_role("link", name="Printer on fire")).to_have_count(0)


def test_a_unit_just_added_is_in_the_tree_though_the_list_does_not_have_it_yet(console, api, page):
    # Given the org page, and a units list answering as before the add (none)
    seed_demo(api)
    sign_in(page, console, tokens.for_user("demo", "alice"))
    expect(page.get_by_text("No units yet.")).to_be_visible()
    serve_stale(page, "**/orgs/demo/units?*", api.call("GET", "/orgs/demo/units?limit=100"))

    # When the admin adds a unit
    add = page.get_by_role("form", name="Add a unit")
    add.get_by_label("Unit id").fill("eng")
    add.get_by_label("Unit name").fill("Engineering")
    add.get_by_role("button", name="Add unit").click()

    # Then the tree shows it
    expect(page.get_by_role("status").filter(has_text="Added unit eng.")).to_be_visible()
    expect(page.get_by_role("list", name="Units").get_by_role("button", name="Engineering")).to_be_visible()


def test_an_org_just_created_is_shown_though_a_read_does_not_find_it_yet(console, page):
    # Given the operator's list, where the new org's read answers 404 for now
    sign_in(page, console, OPERATOR_TOKEN)
    serve_stale(page, "**/orgs/acme", NOT_FOUND, status=404)

    # When the operator creates it
    create = page.get_by_role("form", name="Create an organization")
    create.get_by_label("Organization id").fill("acme")
    create.get_by_label("Name").fill("Acme Inc")
    create.get_by_role("button", name="Create organization").click()

    # Then its page shows it, not "Not found"
    expect(page.get_by_role("heading", name="Acme Inc", level=2)).to_be_visible()
    expect(page.get_by_role("alert")).to_have_count(0)


def test_a_save_answered_after_leaving_for_another_user_does_not_show_on_that_users_page(console, api, page):
    # Given alice on bob's profile, whose save is held back on its way
    seed_demo(api)
    open_as(page, console, "alice", "/orgs/demo/users/bob")
    expect(page.get_by_role("heading", name="Bob (bob)", level=1)).to_be_visible()
    held: list = []

    def hold_the_save(route) -> None:
        if route.request.method == "PATCH":
            held.append(route)
        else:
            route.continue_()

    page.route("**/orgs/demo/users/bob", hold_the_save)
    profile = page.get_by_role("form", name="Profile")
    profile.get_by_label("Full name").fill("Robert")
    profile.get_by_role("button", name="Save profile").click()
    while not held:
        page.wait_for_timeout(100)

    # When she goes to her own profile before bob's save answers
    page.get_by_role("link", name="My profile").click()
    expect(page.get_by_role("heading", name="Alice (alice)", level=1)).to_be_visible()
    held[0].continue_()
    expect(page.get_by_role("status").filter(has_text="Profile saved.")).to_be_visible()

    # Then her page still shows her, not bob's answer under her address
    expect(page.get_by_role("heading", name="Alice (alice)", level=1)).to_be_visible()
    expect(page.get_by_role("form", name="Profile").get_by_label("Full name")).to_have_value("Alice")
