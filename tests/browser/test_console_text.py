"""What anyone may type is shown as text on every screen: a name or subject holding markup never
becomes markup (no element, no script), in the tables, the tree of units and the activity log; an
address the console cannot read leads home; a part of a screen the API refuses says so."""

import pytest
from playwright.sync_api import expect

from local import tokens
from tests.browser.kit import OPERATOR_TOKEN, seed_demo, shoot, sign_in

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)

MARKUP = "<img src=x onerror=alert(1)><b>bold</b>"
TAG = "<b>tag</b>"  # a tag is at most 32 characters
ACTIVITY_WAIT_MS = 15_000


def test_names_and_subjects_holding_markup_are_text_on_every_screen(console, api, page, activity_log):
    # Given an org, a user, a unit and a ticket whose names hold markup, each changed once (the log shows it)
    seed_demo(api)
    api.call("PATCH", "/orgs/demo", {"name": f"Demo {MARKUP}"})
    api.call("POST", "/orgs/demo/units", {"unit_id": "eng", "name": f"Eng {MARKUP}"})
    api.call("PATCH", "/orgs/demo/users/bob", {"name": f"Bob {MARKUP}", "unit": "eng"})
    ticket = api.call("POST", "/orgs/demo/users/bob/tickets", {"subject": f"Ticket {MARKUP}", "tags": [TAG]})
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))

    # When an operator opens the org (its tree, a unit's people, the activity), the user and the ticket
    sign_in(page, console, OPERATOR_TOKEN)
    page.get_by_role("link", name="demo", exact=True).click()
    expect(page.get_by_role("heading", name=f"Demo {MARKUP}", level=2)).to_be_visible()
    expect(page.get_by_role("cell", name=f"Bob {MARKUP}", exact=True)).to_be_visible()
    page.get_by_role("list", name="Units").get_by_role("button", name=f"Eng {MARKUP}").click()
    expect(page.get_by_role("heading", name=f"People in Eng {MARKUP}")).to_be_visible()
    activity = page.get_by_role("region", name="Activity")
    expect(activity.get_by_role("row").filter(has_text="Ticket Opened")).to_contain_text(
        f"Ticket {MARKUP}", timeout=ACTIVITY_WAIT_MS
    )
    expect(activity).to_contain_text(f"name: Demo Inc → Demo {MARKUP}")
    shoot(page, "markup-org")
    on_org = page.locator("main img, main b").count()
    page.goto(f"{console}#/orgs/demo/users/bob")
    expect(page.get_by_role("link", name=f"Ticket {MARKUP}")).to_be_visible()
    on_user = page.locator("main img, main b").count()
    page.goto(f"{console}#/orgs/demo/tickets/{ticket['ticket_id']}")
    expect(page.get_by_role("heading", name=f"Ticket: Ticket {MARKUP}", level=1)).to_be_visible()
    expect(page.get_by_label("Tags (comma-separated)")).to_have_value(TAG)

    # Then no screen made an element or ran a script of them
    assert (on_org, on_user, page.locator("main img, main b").count(), dialogs) == (0, 0, 0, [])


def test_an_address_with_a_broken_escape_leads_home(console, api, page):
    seed_demo(api)
    sign_in(page, console, tokens.for_user("demo", "alice"))
    expect(page.get_by_role("heading", name="Organization demo", level=1)).to_be_visible()

    page.goto(f"{console}#/orgs/%E0%A4%A")

    expect(page).to_have_url(f"{console}#/orgs/demo")
    expect(page.get_by_role("heading", name="Organization demo", level=1)).to_be_visible()


def test_plans_the_api_refuses_to_list_are_said_in_the_plan_form(console, api, page):
    # Given the API throttling the plans' list (the org page reads it for its plan form)
    seed_demo(api)
    body = '{"error": {"code": "throttled", "message": "Too many requests", "request_id": "r"}}'
    page.route(
        "**/plans",
        lambda route: route.fulfill(status=429, headers={"Content-Type": "application/json"}, body=body),
    )

    # When an operator opens the org
    sign_in(page, console, OPERATOR_TOKEN)
    page.get_by_role("link", name="demo", exact=True).click()

    # Then the plan form says why it has no plans to offer, and the rest of the page is there
    form = page.get_by_role("form", name="Change the plan")
    expect(form.get_by_role("alert")).to_have_text("The plans could not be read: Too many requests")
    expect(page.get_by_role("heading", name="Demo Inc", level=2)).to_be_visible()
