"""The console on a phone (390 px wide): no screen scrolls sideways, tables scroll in their own box; a
user just added shows at once; an error far from where the person looks is scrolled into view."""

import pytest
from playwright.sync_api import expect

from local import tokens
from tests.browser.kit import OPERATOR_TOKEN, seed_demo, shoot, sign_in

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)

PHONE = {"width": 390, "height": 844}
PAGE_WIDTH = "document.scrollingElement.scrollWidth"
# Each table's box: how it scrolls, and how wide it is on the page.
TABLE_BOXES = """[...document.querySelectorAll('table')].map(
  (t) => [getComputedStyle(t.parentElement).overflowX, t.parentElement.getBoundingClientRect().right])"""


def assert_fits_a_phone(page, name: str) -> None:
    shoot(page, f"phone-{name}")
    assert page.evaluate(PAGE_WIDTH) <= PHONE["width"], f"{name}: the page scrolls sideways"
    for overflow, right in page.evaluate(TABLE_BOXES):
        assert overflow == "auto" and right <= PHONE["width"], f"{name}: a table is not in a box of its own"


def test_every_screen_fits_390_px_with_tables_scrolling_in_their_own_box(console, api, page, activity_log):
    # Given the demo org with tickets and activity, on a phone
    seed_demo(api, members=3)
    subject = "Export to CSV times out on large accounts"
    ticket = api.call("POST", "/orgs/demo/users/bob/tickets", {"subject": subject, "priority": "high"})
    page.set_viewport_size(PHONE)

    # When an operator goes through the organizations, the org (users and activity), a user and a ticket
    sign_in(page, console, OPERATOR_TOKEN)
    expect(page.get_by_role("link", name="demo")).to_be_visible()
    assert_fits_a_phone(page, "organizations")
    page.get_by_role("link", name="demo").click()
    activity = page.get_by_role("region", name="Activity")
    expect(activity.get_by_role("row").filter(has_text="Ticket Opened")).to_be_visible(timeout=15_000)
    expect(page.get_by_role("link", name="user03")).to_be_visible()
    # Then none scrolls sideways (each checked on arrival)
    assert_fits_a_phone(page, "organization")
    page.get_by_role("link", name="bob").click()
    expect(page.get_by_role("link", name=ticket["subject"])).to_be_visible()
    assert_fits_a_phone(page, "user")
    page.get_by_role("link", name=ticket["subject"]).click()
    expect(page.get_by_role("heading", name=f"Ticket: {ticket['subject']}")).to_be_visible()
    assert_fits_a_phone(page, "ticket")

    # And the suspension's confirmation fits too
    page.goto(f"{console}#/orgs/demo")
    page.get_by_role("form", name="Suspend the organization").get_by_label("Reason for suspending").fill("Unpaid")
    page.get_by_role("button", name="Suspend…").click()
    expect(page.get_by_role("dialog", name="Suspend demo?")).to_be_visible()
    assert_fits_a_phone(page, "suspend-dialog")


def test_a_user_added_shows_at_once_even_when_the_list_has_pages(console, api, page):
    # Given an org with more users than a page of the list (10), and its admin on its page
    seed_demo(api, members=11)
    sign_in(page, console, tokens.for_user("demo", "alice"))
    expect(page.get_by_role("button", name="Load more")).to_be_visible()

    # When they add a user whose id sorts last
    form = page.get_by_role("form", name="Add a user")
    form.get_by_label("User id").fill("zed")
    form.get_by_label("Full name").fill("Zed")
    form.get_by_label("E-mail").fill("zed@x.io")
    form.get_by_role("button", name="Add user").click()

    # Then the new user is in the list at once, without loading more pages
    expect(page.get_by_role("status").filter(has_text="Added zed.")).to_be_visible()
    users = page.get_by_role("region", name="Users")
    expect(users.get_by_role("link", name="zed", exact=True)).to_be_visible()
    shoot(page, "user-added-at-once")

    # And loading every page shows them once, not twice
    while page.get_by_role("button", name="Load more").is_visible():
        page.get_by_role("button", name="Load more").click()
        page.wait_for_load_state("networkidle")
    expect(users.get_by_role("link", name="zed", exact=True)).to_have_count(1)
    expect(users.get_by_role("row")).to_have_count(1 + 12 + 1)  # the header, the seeded users, zed


def test_an_error_below_the_fold_is_scrolled_into_view(console, api, page):
    # Given an admin on a phone, adding a user who exists, and the API's answer held back
    seed_demo(api, members=11)
    page.set_viewport_size(PHONE)
    sign_in(page, console, tokens.for_user("demo", "alice"))
    held = []
    page.route(
        "**/orgs/demo/users", lambda route: held.append(route) if route.request.method == "POST" else route.continue_()
    )
    form = page.get_by_role("form", name="Add a user")
    form.get_by_label("User id").fill("bob")
    form.get_by_label("Full name").fill("Bob again")
    form.get_by_label("E-mail").fill("bob@x.io")
    form.get_by_role("button", name="Add user").click()
    while not held:
        page.wait_for_timeout(20)

    # When they scroll back to the top while it is on its way, and the API refuses it
    page.evaluate("window.scrollTo(0, 0)")
    expect(form.get_by_role("button", name="Add user")).not_to_be_in_viewport()
    held[0].continue_()

    # Then the error is brought into view, in the API's words
    alert = form.get_by_role("alert")
    expect(alert).to_contain_text("bob")
    expect(alert).to_be_in_viewport()
    shoot(page, "phone-error-in-view")
