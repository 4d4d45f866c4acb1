"""The API's refusals that a screen must survive: when to try again (429, 503, a move under way, with
Retry-After), a version changed since the page loaded (412), a listing's cursor the API no longer
continues (409 conflict), an activity log the caller may no longer read, and nothing shown as it was
once the API has it otherwise."""

import json

import pytest
from playwright.sync_api import expect

from controlplane.http.errors import OUTAGE
from controlplane.models import errors
from controlplane.models.plans import THROTTLED_MESSAGE
from local import tokens
from tests.browser.kit import OPERATOR_TOKEN, seed_demo, shoot, sign_in

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)

ACTIVITY_WAIT_MS = 15_000  # the panel reads its first page again every 3 seconds


def refusal(status: int, code: str, message: str, retry_after: int | None = None) -> dict:
    """What route.fulfill sends: the API's error body, and its Retry-After."""
    headers = {"Content-Type": "application/json"}
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    body = {"error": {"code": code, "message": message, "request_id": "r"}}
    return {"status": status, "headers": headers, "body": json.dumps(body)}


def refuse_once(page, pattern: str, answer: dict) -> None:
    """The first GET matching ``pattern`` refused with ``answer``; the next ones reach the API."""
    refused: list = []

    def handle(route) -> None:
        if route.request.method == "GET" and not refused:
            refused.append(route)
            route.fulfill(**answer)
        else:
            route.continue_()

    page.route(pattern, handle)


def test_a_throttled_list_says_in_how_many_seconds_and_offers_to_try_again(console, api, page):
    # Given the API throttling the org page's first read of its users, Retry-After: 2
    seed_demo(api)
    refuse_once(page, "**/orgs/demo/users?*", refusal(429, "throttled", THROTTLED_MESSAGE, retry_after=2))

    # When its admin opens it
    sign_in(page, console, tokens.for_user("demo", "alice"))

    # Then the users' panel says when, in seconds, not the header's name a person never sees
    users = page.get_by_role("region", name="Users")
    expect(users.get_by_role("alert")).to_contain_text("is used up; retry after 2 seconds")
    expect(users.get_by_role("alert")).not_to_contain_text("Retry-After")
    shoot(page, "users-throttled")

    # And trying again lists them
    users.get_by_role("button", name="Try again").click()
    expect(users.get_by_role("link", name="bob", exact=True)).to_be_visible()
    expect(users.get_by_role("alert")).to_have_count(0)


def test_a_tree_refused_while_units_move_says_so_and_offers_to_try_again(console, api, page):
    # Given a move of the demo org's units under way when its admin opens the org (409, Retry-After: 5)
    seed_demo(api)
    api.call("POST", "/orgs/demo/units", {"unit_id": "eng", "name": "Engineering"})
    moving = errors.unit_moving("demo").message
    refuse_once(page, "**/orgs/demo/units?*", refusal(409, "move_in_progress", moving, retry_after=5))
    sign_in(page, console, tokens.for_user("demo", "alice"))

    # Then the units' panel says so, and when
    units = page.get_by_role("region", name="Units")
    expect(units.get_by_role("alert")).to_have_text(f"{moving}. Try again in 5 seconds.")

    # And once the move is over, trying again shows the tree
    units.get_by_role("button", name="Try again").click()
    expect(page.get_by_role("list", name="Units").get_by_role("button", name="Engineering")).to_be_visible()


def test_a_service_out_says_when_to_try_again(console, api, page):
    seed_demo(api)
    outage = OUTAGE
    refuse_once(page, "**/orgs/demo/users?*", refusal(503, "service_unavailable", outage, retry_after=1))

    sign_in(page, console, tokens.for_user("demo", "alice"))

    users = page.get_by_role("region", name="Users")
    expect(users.get_by_role("alert")).to_have_text(f"{outage}. Try again in 1 second.")
    users.get_by_role("button", name="Try again").click()
    expect(users.get_by_role("link", name="bob", exact=True)).to_be_visible()


def test_a_rename_over_someone_elses_change_offers_a_reload_not_the_apis_etag_advice(console, api, page):
    # Given an operator on the demo org's page, and then someone else renaming it
    seed_demo(api)
    sign_in(page, console, OPERATOR_TOKEN)
    page.get_by_role("link", name="demo", exact=True).click()
    expect(page.get_by_role("heading", name="Demo Inc", level=2)).to_be_visible()
    api.call("PATCH", "/orgs/demo", {"name": "Demo Two"})

    # When the operator renames it too, from the version they saw
    rename = page.get_by_role("form", name="Rename the organization")
    rename.get_by_label("Organization name").fill("Demo Mine")
    rename.get_by_role("button", name="Rename").click()

    # Then the form says someone else changed it, nothing is saved, and a reload shows their change
    expect(rename.get_by_role("alert")).to_contain_text("Someone else changed this since the page loaded")
    expect(rename.get_by_role("alert")).not_to_contain_text("ETag")
    shoot(page, "org-changed-since")
    assert api.call("GET", "/orgs/demo")["name"] == "Demo Two"
    rename.get_by_role("button", name="Reload").click()
    expect(page.get_by_role("heading", name="Demo Two", level=2)).to_be_visible()


_ENGINEERS = ["bob"] + [f"user{n:02}" for n in range(2, 12)]


def _engineering_on_its_first_page(console, api, page):
    """Engineering with 11 people (two pages), an admin on its first page: the table of its people."""
    seed_demo(api, members=11)
    api.call("POST", "/orgs/demo/units", {"unit_id": "eng", "name": "Engineering"})
    for user_id in _ENGINEERS:
        api.call("PATCH", f"/orgs/demo/users/{user_id}", {"unit": "eng"})
    sign_in(page, console, tokens.for_user("demo", "alice"))
    page.get_by_role("list", name="Units").get_by_role("button", name="Engineering").click()
    table = page.get_by_role("table", name="People in Engineering")
    expect(table.get_by_role("cell", name="bob", exact=True)).to_be_visible()
    return table


def _everyone_leaves_and_eng_is_deleted(api):
    for user_id in _ENGINEERS:
        api.call("PATCH", f"/orgs/demo/users/{user_id}", {"unit": "root"})
    api.call("DELETE", "/orgs/demo/units/eng")


def test_a_units_listing_whose_unit_was_deleted_and_created_again_starts_again(console, api, page):
    # Given Engineering with 11 people (two pages), an admin on its first page
    table = _engineering_on_its_first_page(console, api, page)

    # When everyone leaves it, and it is deleted and created again, before the next page
    _everyone_leaves_and_eng_is_deleted(api)
    api.call("POST", "/orgs/demo/units", {"unit_id": "eng", "name": "Engineering"})
    region = page.get_by_role("region", name="Units")
    region.get_by_role("button", name="Load more").click()

    # Then the API's 409 is said, and the list starts again: no one shown who is no longer there
    expect(region.get_by_role("status")).to_contain_text("Unit eng was deleted and created again")
    expect(region.get_by_text("No one in this unit or below it.")).to_be_visible()
    expect(table.get_by_role("cell", name="bob", exact=True)).to_have_count(0)
    expect(region.get_by_role("button", name="Load more")).to_be_hidden()
    shoot(page, "unit-listing-started-again")


def test_a_units_listing_whose_unit_was_deleted_shows_no_one_of_it_any_more(console, api, page):
    # Given Engineering with 11 people (two pages), an admin on its first page
    table = _engineering_on_its_first_page(console, api, page)

    # When everyone leaves it and it is deleted, before the next page
    _everyone_leaves_and_eng_is_deleted(api)
    region = page.get_by_role("region", name="Units")
    region.get_by_role("button", name="Load more").click()

    # Then the API's 404 is said, and no one is shown as in it
    expect(region.get_by_role("alert")).to_have_text("Unit eng not found in organization demo")
    expect(table.get_by_role("cell", name="bob", exact=True)).to_have_count(0)
    expect(region.get_by_role("button", name="Load more")).to_be_hidden()


def test_an_activity_log_the_caller_may_no_longer_read_says_it_is_no_longer_updated(console, api, page, monkeypatch):
    # Given the demo org's admin on its page, its activity panel reading every few seconds (each
    # request decided afresh, as after the flush that a role change's event makes)
    monkeypatch.setenv("AUTHORIZER_TTL_SECONDS", "0")
    seed_demo(api)
    sign_in(page, console, tokens.for_user("demo", "alice"))
    activity = page.get_by_role("region", name="Activity")
    expect(activity).to_contain_text("new entries appear within seconds")

    # When an operator makes her a member, whom the API refuses the log
    api.call("PATCH", "/orgs/demo/users/alice", {"role": "member"})

    # Then the panel says it is no longer updated, and why, instead of claiming to be live
    expect(activity.get_by_role("alert")).to_contain_text("This log is no longer updated", timeout=ACTIVITY_WAIT_MS)
    expect(activity).not_to_contain_text("new entries appear within seconds")


def test_a_user_added_then_renamed_is_listed_as_they_are_now(console, api, page):
    # Given an admin who added zed, shown on top as new
    seed_demo(api)
    sign_in(page, console, tokens.for_user("demo", "alice"))
    add = page.get_by_role("form", name="Add a user")
    add.get_by_label("User id").fill("zed")
    add.get_by_label("Full name").fill("Zed")
    add.get_by_label("E-mail").fill("zed@x.io")
    add.get_by_role("button", name="Add user").click()
    users = page.get_by_role("region", name="Users")
    expect(users.get_by_role("row").filter(has_text="new")).to_contain_text("zed")

    # When they open zed, rename him, and come back to the organization
    users.get_by_role("link", name="zed", exact=True).click()
    expect(page.get_by_role("heading", name="Zed (zed)", level=1)).to_be_visible()
    profile = page.get_by_role("form", name="Profile")
    profile.get_by_label("Full name").fill("Zed Renamed")
    profile.get_by_role("button", name="Save profile").click()
    expect(page.get_by_role("status").filter(has_text="Profile saved.")).to_be_visible()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Organization").click()

    # Then the list shows zed as the API has him now
    row = page.get_by_role("region", name="Users").get_by_role("row").filter(has_text="zed")
    expect(row).to_contain_text("Zed Renamed")
    expect(row).to_have_count(1)


def test_plans_the_api_refuses_to_list_are_said_in_the_create_form_and_the_default_plan_used(console, api, page):
    # Given the API throttling the plans' list, which the organizations page reads for its form
    page.route("**/plans", lambda route: route.fulfill(**refusal(429, "throttled", "Too many requests")))

    # When an operator opens the organizations and creates one
    sign_in(page, console, OPERATOR_TOKEN)
    create = page.get_by_role("form", name="Create an organization")
    expect(create.get_by_role("alert")).to_contain_text("The plans could not be read: Too many requests")
    create.get_by_label("Organization id").fill("acme")
    create.get_by_label("Name").fill("Acme")
    create.get_by_role("button", name="Create organization").click()

    # Then the org is created on the API's default plan
    expect(page.get_by_role("heading", name="Organization acme", level=1)).to_be_visible()
    assert api.call("GET", "/orgs/acme")["plan"] == "free"


def test_the_plan_form_without_plans_offers_no_button(console, api, page):
    seed_demo(api)
    page.route("**/plans", lambda route: route.fulfill(**refusal(429, "throttled", "Too many requests")))

    sign_in(page, console, OPERATOR_TOKEN)
    page.get_by_role("link", name="demo", exact=True).click()

    form = page.get_by_role("form", name="Change the plan")
    expect(form.get_by_role("alert")).to_be_visible()
    expect(form.get_by_role("button", name="Change plan")).to_have_count(0)


def test_deleting_a_ticket_someone_else_changed_deletes_nothing_and_offers_a_reload(console, api, page):
    # Given bob's ticket open on his admin's screen, and then someone else making it urgent
    seed_demo(api)
    ticket = api.call("POST", "/orgs/demo/users/bob/tickets", {"subject": "Printer on fire"})
    sign_in(page, console, tokens.for_user("demo", "alice"))
    expect(page.get_by_role("heading", name="Organization demo", level=1)).to_be_visible()
    page.goto(f"{console}#/orgs/demo/tickets/{ticket['ticket_id']}")
    expect(page.get_by_role("heading", name="Ticket: Printer on fire", level=1)).to_be_visible()
    api.call("PATCH", f"/orgs/demo/tickets/{ticket['ticket_id']}", {"priority": "urgent"})

    # When the admin deletes it, from the version they saw
    page.get_by_role("button", name="Delete ticket…").click()
    dialog = page.get_by_role("dialog", name="Delete this ticket?")
    dialog.get_by_role("button", name="Delete for good").click()

    # Then nothing is deleted, the dialog says so, and its reload shows the ticket as it is now
    expect(dialog.get_by_role("alert")).to_contain_text("changed by someone else")
    assert api.call("GET", f"/orgs/demo/tickets/{ticket['ticket_id']}")["priority"] == "urgent"
    dialog.get_by_role("button", name="Reload the ticket").click()
    expect(dialog).to_have_count(0)
    expect(page.get_by_role("form", name="Edit the ticket").get_by_label("Priority")).to_have_value("urgent")


def org_read_as(page, change) -> None:
    """The org page's read of demo answered as the API answers it, with ``change`` made to the body."""

    def handle(route) -> None:
        answer = route.fetch()
        body = answer.json()
        change(body)
        route.fulfill(response=answer, json=body)

    page.route("**/orgs/demo", handle)


def test_an_org_whose_seats_are_not_counted_yet_shows_no_bar_of_none_used(console, api, page):
    # Given the API answering demo's usage as null (an org stored before seats were counted)
    seed_demo(api)
    org_read_as(page, lambda org: org["usage"].update(users=None))

    # When an operator opens it
    sign_in(page, console, OPERATOR_TOKEN)
    page.get_by_role("link", name="demo", exact=True).click()

    # Then the seats say what is known, and no meter claims none are used
    seats = page.get_by_role("region", name="Seats")
    expect(seats).to_contain_text("Seats used: not counted yet. The plan allows 50.")
    expect(seats.get_by_role("meter")).to_have_count(0)


def test_an_org_being_deleted_offers_no_add_a_user(console, api, page):
    # Given the API answering demo with its delete begun
    seed_demo(api)
    org_read_as(page, lambda org: org.update(deleting_since="2026-11-27T10:00:00Z"))

    # When an operator opens it
    sign_in(page, console, OPERATOR_TOKEN)
    page.get_by_role("link", name="demo", exact=True).click()

    # Then it says so, and offers no form the API would refuse
    users = page.get_by_role("region", name="Users")
    expect(users).to_contain_text("This organization is being deleted: no user can be added.")
    expect(page.get_by_role("form", name="Add a user")).to_have_count(0)


@pytest.mark.parametrize(
    ("status", "message", "advice"),
    [
        (None, "No answer came from the API", "send it again unchanged, which does not make it twice"),
        (504, "Endpoint request timed out", "send it again unchanged, which does not make it twice"),
        (502, "Internal server error", "send it again unchanged, which does not make it twice"),
    ],
    ids=["answer-lost", "gateway-timeout", "function-ended"],
)
def test_a_ticket_whose_answer_never_came_says_it_may_be_open_and_sent_again_is_opened_once(
    console, api, page, status, message, advice
):
    # Given bob on his page, and the API opening his first "Open ticket" while its answer never
    # reaches the page: the network loses it, or API Gateway answers its 504 (its 29 s timeout) or
    # 502 (Lambda ended the function at its 28 s) instead
    seed_demo(api)
    first: list = []

    def lose_first_answer(route) -> None:
        if route.request.method == "POST" and not first:
            first.append(route.fetch())  # the function opened it; its answer does not reach the page
            if status is None:
                route.abort()
            else:
                route.fulfill(**refusal(status, "internal_error", message))
        else:
            route.continue_()

    page.route("**/orgs/demo/users/bob/tickets", lose_first_answer)
    sign_in(page, console, tokens.for_user("demo", "bob"))
    open_ticket = page.get_by_role("form", name="Open a ticket")
    open_ticket.get_by_label("Subject").fill("Printer on fire")
    open_ticket.get_by_role("button", name="Open ticket").click()

    # Then the form does not say the API was not reached (it was): it may be open all the same, and
    # sending it again unchanged does not open it twice (even after a 502: the ticket's write keeps
    # its answer for the key)
    alert = open_ticket.get_by_role("alert")
    expect(alert).to_contain_text(message)
    expect(alert).to_contain_text(f"may have been made all the same: {advice}")

    # When he sends it again, unchanged, after a function that kept its answer for the key: the API
    # answers with the ticket it opened, one, not two
    open_ticket.get_by_role("button", name="Open ticket").click()
    expect(page.get_by_role("heading", name="Ticket: Printer on fire", level=1)).to_be_visible()
    assert first[0].status == 201
    assert [t["subject"] for t in api.call("GET", "/orgs/demo/users/bob/tickets")["items"]] == ["Printer on fire"]


@pytest.mark.parametrize("status", [None, 502], ids=["answer-lost", "function-ended"])
def test_a_change_whose_answer_never_came_says_it_may_be_made_and_to_reload_first(console, api, page, status):
    # Given alice on bob's profile, and the API saving her change while its answer never reaches the
    # page (the network loses it, or API Gateway answers 502: Lambda ended the function after its write)
    seed_demo(api)
    sign_in(page, console, tokens.for_user("demo", "alice"))
    page.get_by_role("region", name="Users").get_by_role("link", name="bob", exact=True).click()
    profile = page.get_by_role("form", name="Profile")
    expect(profile.get_by_label("Full name")).not_to_have_value("")

    def lose_the_answer(route) -> None:
        if route.request.method != "PATCH":
            route.continue_()
            return
        route.fetch()  # the function saved it; its answer does not reach the page
        if status is None:
            route.abort()
        else:
            route.fulfill(**refusal(status, "internal_error", "Internal server error"))

    page.route("**/orgs/demo/users/bob", lose_the_answer)

    # When she saves a new name
    profile.get_by_label("Full name").fill("Bob Renamed")
    profile.get_by_role("button", name="Save profile").click()

    # Then the form does not say the API was not reached, nor to send it again: it may be saved, so
    # look first (sent again from the same version, a saved change is refused as someone else's)
    alert = profile.get_by_role("alert")
    expect(alert).to_contain_text("It may have been made all the same: reload to see it before trying again.")
    expect(alert).not_to_contain_text("cannot be reached")
    assert api.call("GET", "/orgs/demo/users/bob")["name"] == "Bob Renamed"
