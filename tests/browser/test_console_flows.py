"""The console's flows, as each role uses them, in headless Chromium against the local gateway."""

import re

import pytest
from playwright.sync_api import expect

from local import tokens
from tests.browser.kit import OPERATOR_TOKEN, shoot, sign_in

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)


def add_user(page, user_id: str) -> None:
    form = page.get_by_role("form", name="Add a user")
    form.get_by_label("User id").fill(user_id)
    form.get_by_label("Full name").fill(user_id.capitalize())
    form.get_by_label("E-mail").fill(f"{user_id}@example.com")
    form.get_by_role("button", name="Add user").click()


def test_operator_creates_an_org_fills_its_seats_is_refused_the_next_and_changes_plans(console, api, page):
    # Given an operator signed in with a link, and no organization yet
    sign_in(page, console, OPERATOR_TOKEN)
    expect(page.get_by_role("heading", name="Organizations", level=1)).to_be_visible()
    expect(page.get_by_text("No organizations yet.")).to_be_visible()
    assert "id_token" not in page.url
    assert page.evaluate("sessionStorage.getItem('console.id_token')") == OPERATOR_TOKEN

    # When they create acme on the free plan (5 seats) and add five users
    create = page.get_by_role("form", name="Create an organization")
    create.get_by_label("Organization id").fill("acme")
    create.get_by_label("Name").fill("Acme Corp")
    create.get_by_label("Plan").select_option("free")
    create.get_by_role("button", name="Create organization").click()
    expect(page.get_by_role("heading", name="Organization acme", level=1)).to_be_visible()
    expect(page.get_by_text("No users yet.")).to_be_visible()
    for n in range(1, 6):
        add_user(page, f"user{n}")
        expect(page.get_by_role("status").filter(has_text=f"Added user{n}.")).to_be_visible()

    # Then the seats bar is full, and the sixth user is refused as the API words it
    expect(page.get_by_text("5 of 5 seats used")).to_be_visible()
    expect(page.get_by_role("meter", name="Seats used")).to_have_attribute("value", "5")
    add_user(page, "user6")
    expect(page.get_by_role("alert")).to_have_text("The free plan allows 5 users and the organization has 5")
    shoot(page, "operator-quota-refused")
    assert len(api.call("GET", "/orgs/acme/users")["items"]) == 5

    # When they move acme to pro, the seats follow and the sixth user fits
    page.get_by_role("form", name="Change the plan").get_by_label("Plan").select_option("pro")
    page.get_by_role("button", name="Change plan").click()
    expect(page.get_by_text("5 of 50 seats used")).to_be_visible()
    add_user(page, "user6")
    expect(page.get_by_text("6 of 50 seats used")).to_be_visible()

    # And back to free is the API's 409, the plan unchanged
    page.get_by_role("form", name="Change the plan").get_by_label("Plan").select_option("free")
    page.get_by_role("button", name="Change plan").click()
    expect(page.get_by_role("alert")).to_have_text("The free plan allows 5 users and the organization has 6")
    assert api.call("GET", "/orgs/acme")["plan"] == "pro"

    # And the list shows acme with its plan, status and its plan's seats (seats used are on its page)
    page.get_by_role("link", name="Organizations").click()
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name="acme"))
    expect(row).to_contain_text("pro")
    expect(row).to_contain_text("active")
    expect(row.get_by_role("cell").nth(4)).to_have_text("50")
    shoot(page, "operator-orgs")


def test_organizations_list_pages_with_load_more(console, api, page):
    for n in range(12):
        api.call("POST", "/orgs", {"org_id": f"org{n:02d}", "name": f"Org {n}"})
    sign_in(page, console, OPERATOR_TOKEN)
    expect(page.get_by_role("link", name="org09")).to_be_visible()
    expect(page.get_by_role("link", name="org11")).to_have_count(0)

    page.get_by_role("button", name="Load more").click()

    expect(page.get_by_role("link", name="org11")).to_be_visible()
    expect(page.get_by_role("link", name=re.compile(r"^org\d\d$"))).to_have_count(12)
    expect(page.get_by_role("button", name="Load more")).to_be_hidden()


def seed_demo(api):
    api.call("POST", "/orgs", {"org_id": "demo", "name": "Demo Inc", "plan": "pro"})
    for user_id, role in (("alice", "admin"), ("bob", "member"), ("carol", "member")):
        api.call(
            "POST",
            "/orgs/demo/users",
            {"user_id": user_id, "name": user_id.title(), "email": f"{user_id}@x.io", "role": role},
        )


def test_admin_renames_the_org_adds_a_user_and_is_offered_no_plan_or_org_list(console, api, page):
    seed_demo(api)
    sign_in(page, console, tokens.for_user("demo", "alice"))

    expect(page.get_by_role("heading", name="Organization demo", level=1)).to_be_visible()
    expect(page.get_by_role("button", name="Change plan")).to_have_count(0)
    expect(page.get_by_role("link", name="Organizations")).to_have_count(0)
    rename = page.get_by_role("form", name="Rename the organization")
    rename.get_by_label("Organization name").fill("Demo Industries")
    rename.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("heading", name="Demo Industries")).to_be_visible()
    add_user(page, "dave")
    expect(page.get_by_text("4 of 50 seats used")).to_be_visible()
    expect(page.get_by_role("link", name="dave")).to_be_visible()
    shoot(page, "admin-org")

    assert api.call("GET", "/orgs/demo")["name"] == "Demo Industries"
    assert api.call("GET", "/orgs/demo/users/dave")["role"] == "member"


def test_admin_edits_a_ticket_is_told_of_a_concurrent_change_and_deletes_with_confirmation(console, api, page):
    seed_demo(api)
    ticket = api.call("POST", "/orgs/demo/users/bob/tickets", {"subject": "Printer on fire", "tags": ["hw"]})
    sign_in(page, console, tokens.for_user("demo", "alice"))
    page.get_by_role("link", name="bob").click()
    page.get_by_role("link", name="Printer on fire").click()
    editor = page.get_by_role("form", name="Edit the ticket")
    expect(editor.get_by_label("Tags (comma-separated)")).to_have_value("hw")

    # When they save a change, it goes with If-Match and bumps the version
    editor.get_by_label("Status").select_option("pending")
    editor.get_by_label("Tags (comma-separated)").fill("hw, urgent-ish")
    editor.get_by_role("button", name="Save ticket").click()
    expect(page.get_by_role("status").filter(has_text="Ticket saved.")).to_be_visible()
    stored = api.call("GET", f"/orgs/demo/tickets/{ticket['ticket_id']}")
    assert (stored["status"], stored["tags"], stored["version"]) == ("pending", ["hw", "urgent-ish"], 2)

    # When someone else changes it meanwhile, saving is refused with a reload
    api.call("PATCH", f"/orgs/demo/tickets/{ticket['ticket_id']}", {"priority": "urgent"})
    editor = page.get_by_role("form", name="Edit the ticket")
    editor.get_by_label("Subject").fill("Printer still on fire")
    editor.get_by_role("button", name="Save ticket").click()
    expect(page.get_by_role("alert")).to_contain_text("changed by someone else")
    shoot(page, "admin-ticket-conflict")
    assert api.call("GET", f"/orgs/demo/tickets/{ticket['ticket_id']}")["subject"] == "Printer on fire"
    page.get_by_role("button", name="Reload the ticket").click()
    expect(page.get_by_role("form", name="Edit the ticket").get_by_label("Priority")).to_have_value("urgent")

    # Deleting asks first; Cancel keeps it, confirming deletes it
    page.get_by_role("button", name="Delete ticket…").click()
    dialog = page.get_by_role("dialog", name="Delete this ticket?")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    page.get_by_role("button", name="Delete ticket…").click()
    dialog.get_by_role("button", name="Delete for good").click()
    expect(page.get_by_role("heading", name="Bob (bob)", level=1)).to_be_visible()
    expect(page.get_by_text("No tickets yet.")).to_be_visible()
    status, _, _ = api.raw("GET", f"/orgs/demo/tickets/{ticket['ticket_id']}")
    assert status == 404


def test_saving_a_status_keeps_tags_that_hold_a_comma_as_they_are(console, api, page):
    # Given a ticket whose tags hold a comma (the API takes any one-line tag; cpctl --tag "billing, eu")
    seed_demo(api)
    tags = ["billing, eu", "vpn"]
    ticket = api.call("POST", "/orgs/demo/users/bob/tickets", {"subject": "Invoice wrong", "tags": tags})
    sign_in(page, console, tokens.for_user("demo", "alice"))
    page.get_by_role("link", name="bob").click()
    page.get_by_role("link", name="Invoice wrong").click()
    editor = page.get_by_role("form", name="Edit the ticket")
    expect(editor.get_by_label("Tags (comma-separated)")).to_have_value("billing, eu, vpn")

    # When the admin changes only its status and saves
    editor.get_by_label("Status").select_option("solved")
    editor.get_by_role("button", name="Save ticket").click()
    expect(page.get_by_role("status").filter(has_text="Ticket saved.")).to_be_visible()

    # Then the status is changed and the tags, which they did not touch, are as they were
    stored = api.call("GET", f"/orgs/demo/tickets/{ticket['ticket_id']}")
    assert (stored["status"], stored["tags"]) == ("solved", tags)


def test_saving_a_status_leaves_a_description_with_crlf_line_ends_untouched(console, api, page):
    # Given a ticket whose description has CRLF line ends (sent so through the API or cpctl), which a
    # textarea shows with LF
    seed_demo(api)
    description = "Step 1\r\nStep 2"
    ticket = api.call("POST", "/orgs/demo/users/bob/tickets", {"subject": "Steps", "description": description})
    sign_in(page, console, tokens.for_user("demo", "alice"))
    page.get_by_role("link", name="bob").click()
    page.get_by_role("link", name="Steps").click()
    editor = page.get_by_role("form", name="Edit the ticket")

    # When the admin changes only its status and saves
    editor.get_by_label("Status").select_option("solved")
    editor.get_by_role("button", name="Save ticket").click()
    expect(page.get_by_role("status").filter(has_text="Ticket saved.")).to_be_visible()

    # Then only the status was sent: the description is as stored, and the change (its event, its
    # activity entry) names the status alone
    stored = api.call("GET", f"/orgs/demo/tickets/{ticket['ticket_id']}")
    assert (stored["status"], stored["description"], stored["version"]) == ("solved", description, 2)


def test_a_member_whose_address_the_browser_would_refuse_renames_themselves(console, api, page):
    # Given a member whose e-mail the API took but a browser's e-mail field calls invalid (imported)
    seed_demo(api)
    email = "josé@x.io"
    api.call("POST", "/orgs/demo/users", {"user_id": "jose", "name": "Jose", "email": email})
    sign_in(page, console, tokens.for_user("demo", "jose"))
    expect(page.get_by_role("heading", name="Jose (jose)", level=1)).to_be_visible()

    # When they change only their name and save
    profile = page.get_by_role("form", name="Profile")
    profile.get_by_label("Full name").fill("José")
    profile.get_by_role("button", name="Save profile").click()

    # Then it is saved: the address they did not touch does not stop the form
    expect(page.get_by_role("heading", name="José (jose)", level=1)).to_be_visible()
    stored = api.call("GET", "/orgs/demo/users/jose")
    assert (stored["name"], stored["email"]) == ("José", email)


def test_an_admin_adds_a_user_whose_address_the_api_takes_and_a_browser_would_refuse(console, api, page):
    # Given an admin of demo
    seed_demo(api)
    sign_in(page, console, tokens.for_user("demo", "alice"))
    expect(page.get_by_role("heading", name="Organization demo", level=1)).to_be_visible()

    # When they add a user whose e-mail a browser's e-mail field calls invalid (the API takes it)
    form = page.get_by_role("form", name="Add a user")
    form.get_by_label("User id").fill("jose")
    form.get_by_label("Full name").fill("José")
    form.get_by_label("E-mail").fill("josé@x.io")
    form.get_by_role("button", name="Add user").click()

    # Then the user is added, as cpctl or an import would add them
    expect(page.get_by_role("link", name="jose")).to_be_visible()
    assert api.call("GET", "/orgs/demo/users/jose")["email"] == "josé@x.io"


def test_member_sees_their_own_tickets_newest_first_and_no_one_elses(console, api, page):
    seed_demo(api)
    for n in range(12):
        api.call("POST", "/orgs/demo/users/bob/tickets", {"subject": f"Bob's ticket {n:02d}"})
    api.call("POST", "/orgs/demo/users/carol/tickets", {"subject": "Carol's secret"})
    sign_in(page, console, tokens.for_user("demo", "bob"))

    # They land on their own page: newest first, ten at a time, no role to change
    expect(page.get_by_role("heading", name="Bob (bob)", level=1)).to_be_visible()
    tickets = page.get_by_role("list", name="Tickets").get_by_role("link")
    expect(tickets).to_have_count(10)
    expect(tickets.first).to_have_text("Bob's ticket 11")
    expect(page.get_by_label("Role")).to_have_count(0)
    page.get_by_role("button", name="Load more").click()
    expect(tickets).to_have_count(12)
    expect(tickets.last).to_have_text("Bob's ticket 00")
    shoot(page, "member-tickets")

    # They edit their own profile
    profile = page.get_by_role("form", name="Profile")
    profile.get_by_label("Full name").fill("Robert")
    profile.get_by_role("button", name="Save profile").click()
    expect(page.get_by_role("heading", name="Robert (bob)", level=1)).to_be_visible()

    # The org page lists colleagues without links to them, and offers no adding
    page.get_by_role("link", name="Organization").click()
    expect(page.get_by_role("cell", name="carol", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="carol")).to_have_count(0)
    expect(page.get_by_role("form", name="Add a user")).to_have_count(0)
    expect(page.get_by_role("button", name="Rename")).to_have_count(0)

    # And carol's page, typed in, is the API's refusal, with none of her tickets
    page.goto(f"{console}#/orgs/demo/users/carol")
    expect(page.get_by_role("alert")).to_have_text("Your role may not do this")
    expect(page.get_by_text("Carol's secret")).to_have_count(0)


def test_expired_token_in_a_link_returns_to_sign_in_with_a_message(console, page):
    sign_in(page, console, tokens.issue(tokens.OPERATOR, lifetime=-60))

    expect(page.get_by_role("heading", name="Sign in", level=1)).to_be_visible()
    expect(page.get_by_role("alert")).to_have_text("Your session has expired. Sign in again.")
    assert page.evaluate("sessionStorage.getItem('console.id_token')") is None
    shoot(page, "expired")


def test_token_the_api_refuses_mid_session_returns_to_sign_in(console, api, page):
    seed_demo(api)
    sign_in(page, console, OPERATOR_TOKEN)
    expect(page.get_by_role("link", name="demo")).to_be_visible()
    # The token is swapped for one signed with another key: what the API sees of a revoked one
    forged = OPERATOR_TOKEN.rsplit(".", 1)[0] + ".c2lnbmF0dXJl"
    page.evaluate(f"sessionStorage.setItem('console.id_token', '{forged}')")

    page.get_by_role("link", name="demo").click()

    expect(page.get_by_role("heading", name="Sign in", level=1)).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text("expired or is no longer valid")
    assert page.evaluate("sessionStorage.getItem('console.id_token')") is None


def test_pasted_token_signs_in_and_sign_out_forgets_it(console, api, page):
    seed_demo(api)
    page.goto(console)
    expect(page.get_by_role("heading", name="Sign in", level=1)).to_be_visible()
    page.get_by_label("ID token").fill("not a token")
    page.get_by_role("button", name="Sign in with this token").click()
    expect(page.get_by_role("alert")).to_contain_text("not an ID token")

    page.get_by_label("ID token").fill(tokens.for_user("demo", "alice"))
    page.get_by_role("button", name="Sign in with this token").click()
    expect(page.get_by_role("heading", name="Organization demo", level=1)).to_be_visible()

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Sign in", level=1)).to_be_visible()
    expect(page.get_by_role("status").or_(page.get_by_role("alert"))).to_have_text("You are signed out.")
    assert page.evaluate("sessionStorage.length") == 0
    page.goto(f"{console}#/orgs/demo")
    expect(page.get_by_role("heading", name="Sign in", level=1)).to_be_visible()
    expect(page.get_by_text("Demo Inc")).to_have_count(0)


def test_a_token_pasted_with_the_line_breaks_of_a_wrapped_terminal_signs_in(console, api, page):
    # Given the demo org, and an operator's token copied from a terminal that wrapped it over lines
    seed_demo(api)
    token = OPERATOR_TOKEN
    wrapped = "\n".join(token[start : start + 80] for start in range(0, len(token), 80))
    page.goto(console)

    # When it is pasted and signed in with
    page.get_by_label("ID token").fill(wrapped)
    page.get_by_role("button", name="Sign in with this token").click()

    # Then it signs in (a JWT holds no whitespace), not "That is not an ID token": the organizations show
    expect(page.get_by_role("heading", name="Organizations", level=1)).to_be_visible()
    expect(page.get_by_role("link", name="demo")).to_be_visible()
    expect(page.get_by_role("alert")).to_have_count(0)


def test_the_skip_link_moves_to_the_content_and_leaves_the_screen_as_it_is(console, api, page):
    # Given an operator on an org's page (not their home, the organizations list)
    seed_demo(api)
    sign_in(page, console, OPERATOR_TOKEN)
    page.get_by_role("link", name="demo").click()
    expect(page).to_have_title("Organization demo · Control plane console")  # rendered: its heading has the focus

    # When a keyboard user reaches the page's first stop, "Skip to content", and follows it
    skip = page.get_by_role("link", name="Skip to content")
    skip.focus()
    expect(skip).to_be_focused()
    page.keyboard.press("Enter")

    # Then the focus is on the content, on the same screen: not sent home by the router
    expect(page.locator("#main")).to_be_focused()
    page.wait_for_timeout(500)  # a hash change would have rendered the home screen by now
    expect(page.get_by_role("heading", name="Organization demo", level=1)).to_be_visible()
    assert page.url.endswith("#/orgs/demo")


def test_a_ticket_deleted_from_the_keyboard_needs_more_than_enter_twice(console, api, page):
    # Given the admin on a ticket's page
    seed_demo(api)
    ticket = api.call("POST", "/orgs/demo/users/bob/tickets", {"subject": "Printer on fire"})
    sign_in(page, console, tokens.for_user("demo", "alice"))
    page.get_by_role("link", name="bob").click()
    page.get_by_role("link", name="Printer on fire").click()
    expect(page).to_have_title("Ticket: Printer on fire · Control plane console")  # rendered: the focus is set

    # When they open the delete dialog from the keyboard, then press Enter again
    page.get_by_role("button", name="Delete ticket…").focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Delete this ticket?")
    expect(dialog).to_be_visible()
    page.keyboard.press("Enter")

    # Then the answer Enter gave is the safe one, as in the suspension's dialog: Cancel, nothing deleted
    expect(dialog).to_be_hidden()
    expect(page.get_by_role("heading", name="Ticket: Printer on fire", level=1)).to_be_visible()
    status, _, _ = api.raw("GET", f"/orgs/demo/tickets/{ticket['ticket_id']}")
    assert status == 200
