"""The console's tenant status (suspend, reactivate) and activity log, as each role uses them."""

import pytest
from playwright.sync_api import expect

from local import tokens
from tests.browser.kit import OPERATOR_TOKEN, hold_activity_read, let_go, seed_demo, shoot, sign_in

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)

REASON = "Invoice 2026-11 unpaid"
ADMIN, MEMBER = "alice", "bob"  # make seed's demo admin and member


def token_of(user_id: str) -> str:
    """Their token, once seeded: it carries the subject stored on their item."""
    return tokens.for_user("demo", user_id)


# The stream poller writes the log within a poll; the panel reads it again every 3 seconds.
ACTIVITY_WAIT_MS = 15_000


def status_section(page):
    return page.get_by_role("region", name="Status")


def test_operator_suspends_an_org_with_a_reason_and_reactivates_it(console, api, page):
    # Given the demo org, active, on an operator's screen
    seed_demo(api)
    sign_in(page, console, OPERATOR_TOKEN)
    page.get_by_role("link", name="demo").click()
    expect(status_section(page).get_by_role("definition").first).to_have_text("active")
    suspend = page.get_by_role("form", name="Suspend the organization")
    reason = suspend.get_by_label("Reason for suspending (up to 500 characters)")

    # and the page says what a suspension does, and how soon
    expect(status_section(page)).to_contain_text("refused by the console and the API within 5 seconds")

    # When they ask to suspend, a dialog says what it does first; cancelling changes nothing
    reason.fill(REASON)
    suspend.get_by_role("button", name="Suspend…").click()
    dialog = page.get_by_role("dialog", name="Suspend demo?")
    expect(dialog).to_contain_text("within 5 seconds")
    expect(dialog).to_contain_text(f"Reason: {REASON}")
    shoot(page, "operator-suspend-confirm")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_have_count(0)
    expect(status_section(page).get_by_role("definition").first).to_have_text("active")
    assert api.call("GET", "/orgs/demo")["status"] == "active"

    # When the reason is blank and they confirm, the API's 422 is shown as the API words it, and nothing changes
    reason.fill("   ")
    suspend.get_by_role("button", name="Suspend…").click()
    page.get_by_role("dialog").get_by_role("button", name="Suspend demo").click()
    expect(suspend.get_by_role("alert")).to_contain_text("suspension_reason: String should have at least 1 character")
    assert api.call("GET", "/orgs/demo")["status"] == "active"

    # When they give a reason and confirm, the org is suspended and the page shows it with the reason
    reason.fill(REASON)
    suspend.get_by_role("button", name="Suspend…").click()
    page.get_by_role("dialog").get_by_role("button", name="Suspend demo").click()
    expect(page.get_by_role("status").filter(has_text="demo is suspended")).to_be_visible()
    expect(page.get_by_role("status").filter(has_text="demo is suspended")).to_contain_text("refused within 5 seconds")
    expect(status_section(page).get_by_role("definition").first).to_have_text("suspended")
    expect(status_section(page)).to_contain_text(REASON)
    expect(page.get_by_role("form", name="Suspend the organization")).to_have_count(0)
    # and offers no adding of users, which the API refuses in a suspended org
    expect(page.get_by_role("form", name="Add a user")).to_have_count(0)
    expect(page.get_by_text("Reactivate the organization to add users.")).to_be_visible()
    shoot(page, "operator-org-suspended")
    stored = api.call("GET", "/orgs/demo")
    assert (stored["status"], stored["suspension_reason"]) == ("suspended", REASON)
    assert stored["suspended_at"]

    # And the organizations list shows it suspended, with the reason
    page.get_by_role("link", name="Organizations").click()
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name="demo"))
    expect(row).to_contain_text(f"suspended ({REASON})")
    shoot(page, "operator-orgs-suspended")

    # When they reactivate it, it is active again with no reason left
    page.get_by_role("link", name="demo").click()
    page.get_by_role("button", name="Reactivate").click()
    expect(page.get_by_role("status").filter(has_text="demo is active again.")).to_be_visible()
    expect(status_section(page).get_by_role("definition").first).to_have_text("active")
    expect(status_section(page)).not_to_contain_text(REASON)
    expect(page.get_by_role("form", name="Add a user")).to_be_visible()
    stored = api.call("GET", "/orgs/demo")
    assert (stored["status"], stored["suspension_reason"], stored["suspended_at"]) == ("active", None, None)


def test_a_reason_of_500_emoji_is_taken_and_501_refused_by_the_console_as_by_the_api(console, api, page):
    # Given the demo org on an operator's screen, and reasons of 500 and 501 emoji (each two UTF-16
    # units, one code point: what the API counts)
    seed_demo(api)
    sign_in(page, console, OPERATOR_TOKEN)
    page.get_by_role("link", name="demo").click()
    suspend = page.get_by_role("form", name="Suspend the organization")
    reason = suspend.get_by_label("Reason for suspending (up to 500 characters)")
    longest, too_long = "\N{GRINNING FACE}" * 500, "\N{GRINNING FACE}" * 501

    # When they give 501, the console refuses it, as the API does, and asks nothing
    reason.fill(too_long)
    suspend.get_by_role("button", name="Suspend…").click()
    expect(page.get_by_role("dialog")).to_have_count(0)
    assert "501 characters long: 500 at most" in reason.evaluate("input => input.validationMessage")
    status, _, _ = api.raw("PATCH", "/orgs/demo", {"status": "suspended", "suspension_reason": too_long})
    assert status == 422

    # And one of 500 after a U+FEFF, which the API does not trim (JavaScript's trim() does): 501
    reason.fill("\N{ZERO WIDTH NO-BREAK SPACE}" + "a" * 500)
    suspend.get_by_role("button", name="Suspend…").click()
    expect(page.get_by_role("dialog")).to_have_count(0)
    assert "501 characters long" in reason.evaluate("input => input.validationMessage")

    # When they give 500, the console takes it whole, as the API does
    reason.fill(longest)
    suspend.get_by_role("button", name="Suspend…").click()
    page.get_by_role("dialog").get_by_role("button", name="Suspend demo").click()

    # Then the org is suspended with the whole reason
    expect(status_section(page).get_by_role("definition").first).to_have_text("suspended")
    assert api.call("GET", "/orgs/demo")["suspension_reason"] == longest


def test_admin_sees_the_status_but_no_reason_and_may_not_suspend(console, api, page, monkeypatch):
    # Given an admin on their org's page, whose authorizer decision stays cached for an hour
    monkeypatch.setenv("AUTHORIZER_TTL_SECONDS", "3600")
    seed_demo(api)
    sign_in(page, console, token_of(ADMIN))
    expect(status_section(page).get_by_role("definition").first).to_have_text("active")
    expect(page.get_by_role("button", name="Suspend")).to_have_count(0)

    # When an operator suspends the org and the admin reloads within the cache's lifetime
    api.call("PATCH", "/orgs/demo", {"status": "suspended", "suspension_reason": REASON})
    page.reload()

    # Then they see the status, not the reason (operators only), and neither button
    expect(status_section(page).get_by_role("definition").first).to_have_text("suspended")
    expect(status_section(page)).to_contain_text("Suspended since")
    expect(page.get_by_text(REASON)).to_have_count(0)
    expect(page.get_by_role("button", name="Suspend")).to_have_count(0)
    expect(page.get_by_role("button", name="Reactivate")).to_have_count(0)
    shoot(page, "admin-org-suspended-cached")


@pytest.mark.parametrize("user", [ADMIN, MEMBER], ids=["admin", "member"])
def test_a_suspended_orgs_users_see_the_apis_message_and_get_back_in_once_reactivated(
    console, api, page, monkeypatch, user
):
    # Given a suspended org, and an authorizer that decides each request afresh
    monkeypatch.setenv("AUTHORIZER_TTL_SECONDS", "0")
    seed_demo(api)
    token = token_of(user)
    api.call("PATCH", "/orgs/demo", {"status": "suspended", "suspension_reason": REASON})

    # When one of its users opens the console
    sign_in(page, console, token)

    # Then one page says so in the API's words, and nothing else of the org is shown
    expect(page.get_by_role("heading", name="Organization demo is suspended", level=1)).to_be_visible()
    expect(page.get_by_role("button", name="Try again")).to_be_visible()
    expect(page.get_by_role("region")).to_have_count(0)
    expect(page.get_by_text(REASON)).to_have_count(0)
    shoot(page, f"suspended-org-{tokens.decode(token)['custom:role']}")

    # When an operator reactivates it, trying again opens their page
    api.call("PATCH", "/orgs/demo", {"status": "active"})
    page.get_by_role("button", name="Try again").click()
    expect(page.get_by_role("heading", name="Organization demo is suspended")).to_have_count(0)
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    expect(page.get_by_role("heading", level=1)).to_have_text("Organization demo" if user == ADMIN else "Bob (bob)")


def test_admin_sees_the_activity_of_what_they_just_did(console, api, page, activity_log):
    # Given the demo org and its admin on its page
    seed_demo(api)
    token = token_of(ADMIN)
    sign_in(page, console, token)
    panel = page.get_by_role("region", name="Activity")
    expect(panel).to_be_visible()

    # When they rename the org and add a user
    rename = page.get_by_role("form", name="Rename the organization")
    rename.get_by_label("Organization name").fill("Demo Industries")
    rename.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("heading", name="Demo Industries")).to_be_visible()
    form = page.get_by_role("form", name="Add a user")
    form.get_by_label("User id").fill("dave")
    form.get_by_label("Full name").fill("Dave")
    form.get_by_label("E-mail").fill("dave@x.io")
    form.get_by_role("button", name="Add user").click()
    expect(page.get_by_role("status").filter(has_text="Added dave.")).to_be_visible()

    # Then the panel shows both, newest first, with who did it and what changed
    entries = panel.get_by_role("row").filter(has=page.get_by_role("cell", name=f"you ({tokens.decode(token)['sub']})"))
    expect(entries).to_have_count(2, timeout=ACTIVITY_WAIT_MS)
    expect(entries.nth(0)).to_contain_text("User Created")
    expect(entries.nth(0)).to_contain_text("user dave")
    expect(entries.nth(1)).to_contain_text("Organization Updated")
    expect(entries.nth(1)).to_contain_text("name: Demo Inc → Demo Industries")
    # And the operator's setup is there too, older, under the operator's name
    expect(panel.get_by_role("row").filter(has_text="Organization Created")).to_contain_text("local-operator")
    expect(panel.get_by_role("row").filter(has_text="Organization Created")).to_have_count(1)
    shoot(page, "admin-activity")


def _throttle_the_first_refresh(page, retry_after: str) -> list[str]:
    """The activity panel's reads, the API answering the first refresh (the second read) 429 throttled
    with ``retry_after``; the others pass."""
    reads: list[str] = []

    def throttle(route):
        reads.append(route.request.url)
        if len(reads) == 2:
            body = '{"error": {"code": "throttled", "message": "Too many requests", "request_id": "r"}}'
            route.fulfill(
                status=429, headers={"Retry-After": retry_after, "Content-Type": "application/json"}, body=body
            )
        else:
            route.continue_()

    page.route("**/orgs/demo/activity?*", throttle)
    return reads


def test_a_refresh_the_api_throttles_once_does_not_stop_the_live_activity(console, api, page, activity_log):
    # Given the admin on the org's page, and the API throttling the panel's first refresh (a 429)
    seed_demo(api)
    reads = _throttle_the_first_refresh(page, retry_after="1")
    sign_in(page, console, token_of(ADMIN))
    panel = page.get_by_role("region", name="Activity")
    expect(panel.get_by_role("row").filter(has_text="User Created")).to_have_count(2, timeout=ACTIVITY_WAIT_MS)

    # When a user is added after the throttled refresh
    while len(reads) < 2:
        page.wait_for_timeout(200)
    api.call("POST", "/orgs/demo/users", {"user_id": "dave", "name": "Dave", "email": "dave@x.io"})

    # Then a later refresh still puts it on top
    expect(panel.get_by_role("row").filter(has_text="user dave")).to_have_count(1, timeout=ACTIVITY_WAIT_MS)


def test_operator_sees_a_plan_change_in_the_activity_and_pages_through_it(console, api, page, activity_log):
    # Given an org with more entries than a page (created + 11 users)
    api.call("POST", "/orgs", {"org_id": "demo", "name": "Demo Inc", "plan": "pro"})
    for n in range(11):
        api.call("POST", "/orgs/demo/users", {"user_id": f"u{n:02d}", "name": f"U {n}", "email": f"u{n}@x.io"})
    sign_in(page, console, OPERATOR_TOKEN)
    page.get_by_role("link", name="demo").click()

    # When the operator moves it to enterprise
    page.get_by_role("form", name="Change the plan").get_by_label("Plan").select_option("enterprise")
    page.get_by_role("button", name="Change plan").click()

    # Then the change is on top, and "Load more" reaches the org's creation
    panel = page.get_by_role("region", name="Activity")
    expect(panel.get_by_role("row").filter(has_text="plan: pro → enterprise").first).to_be_visible(
        timeout=ACTIVITY_WAIT_MS
    )
    expect(panel.get_by_role("row").filter(has_text="Organization Created")).to_have_count(0)
    panel.get_by_role("button", name="Load more").click()
    expect(panel.get_by_role("row").filter(has_text="Organization Created")).to_have_count(1)
    expect(panel.get_by_role("row").filter(has_text="User Created")).to_have_count(11)
    expect(panel.get_by_role("button", name="Load more")).to_be_hidden()


def test_a_ticket_entry_names_the_ticket_by_its_subject(console, api, page, activity_log):
    # Given the demo org, and a ticket its member opened
    seed_demo(api)
    opener = token_of(MEMBER)
    ticket = api.call("POST", "/orgs/demo/users/bob/tickets", {"subject": "Printer on fire"}, token=opener)

    # When the admin opens the org's page
    sign_in(page, console, token_of(ADMIN))

    # Then the entry names the ticket by its id and its subject, and the member who opened it
    entry = page.get_by_role("region", name="Activity").get_by_role("row").filter(has_text="Ticket Opened")
    expect(entry).to_contain_text(f"ticket {ticket['ticket_id']} Printer on fire", timeout=ACTIVITY_WAIT_MS)
    expect(entry).to_contain_text(tokens.decode(opener)["sub"])  # bob's sign-in subject, as stored


def test_member_sees_no_activity_panel(console, api, page, activity_log):
    seed_demo(api)
    sign_in(page, console, token_of(MEMBER))
    expect(page.get_by_role("heading", name="Bob (bob)", level=1)).to_be_visible()

    page.get_by_role("link", name="Organization").click()

    expect(page.get_by_role("region", name="Users")).to_be_visible()
    expect(page.get_by_role("region", name="Status")).to_be_visible()
    expect(page.get_by_role("region", name="Activity")).to_have_count(0)
    status, _, answer = api.raw("GET", "/orgs/demo/activity", token=token_of(MEMBER))
    assert status == 403, answer  # the panel would be the API's refusal


def test_a_suspension_refusal_of_an_earlier_token_answered_after_someone_signed_in_changes_nothing(
    console, api, page, monkeypatch
):
    # Given alice, demo's admin, on her org's page, whose org is suspended while its activity read
    # is on its way (held back here)
    monkeypatch.setenv("AUTHORIZER_TTL_SECONDS", "0")
    seed_demo(api)
    sign_in(page, console, token_of(ADMIN))
    expect(page.get_by_role("region", name="Activity")).to_be_visible()
    suspend = {"status": "suspended", "suspension_reason": REASON}
    held = hold_activity_read(page, lambda: api.call("PATCH", "/orgs/demo", suspend))

    # And an operator signs in in that tab (a sign-in link) before its answer arrives
    sign_in(page, console, OPERATOR_TOKEN)
    expect(page.get_by_role("heading", name="Organizations", level=1)).to_be_visible()

    # When the read sent with alice's token is refused after all
    let_go(page, held, "org_suspended")

    # Then the operator's page stays: the suspension refused alice's token, not theirs
    expect(page.get_by_role("heading", name="Organizations", level=1)).to_be_visible()
    expect(page.get_by_role("heading", name="Organization demo is suspended")).to_have_count(0)


def test_more_than_a_page_of_new_entries_between_two_refreshes_are_all_shown(console, api, page, activity_log):
    # Given the admin on the org's page, its 3 entries shown, and the panel's refreshes answered 503
    # while 15 users are added (their 15 entries written meanwhile: more than a page)
    seed_demo(api)
    holding = {"on": False}

    def unavailable_while_holding(route):
        if holding["on"]:
            body = '{"error": {"code": "service_unavailable", "message": "Unavailable", "request_id": "r"}}'
            route.fulfill(status=503, headers={"Retry-After": "1", "Content-Type": "application/json"}, body=body)
        else:
            route.continue_()

    page.route("**/orgs/demo/activity?*", unavailable_while_holding)
    sign_in(page, console, token_of(ADMIN))
    panel = page.get_by_role("region", name="Activity")
    created = panel.get_by_role("row").filter(has_text="User Created")
    expect(created).to_have_count(2, timeout=ACTIVITY_WAIT_MS)
    holding["on"] = True
    for n in range(15):
        api.call("POST", "/orgs/demo/users", {"user_id": f"u{n:02d}", "name": f"U {n}", "email": f"u{n}@x.io"})
    deadline = 0
    while len(api.call("GET", "/orgs/demo/activity?limit=50")["items"]) < 18 and deadline < 100:
        page.wait_for_timeout(200)
        deadline += 1

    # When the refreshes are answered again
    holding["on"] = False

    # Then every new entry is shown, on top, newest first, each once: none is skipped
    expect(created).to_have_count(17, timeout=ACTIVITY_WAIT_MS)
    expect(created.nth(0)).to_contain_text("user u14")
    expect(created.nth(14)).to_contain_text("user u00")
    expect(created.nth(16)).to_contain_text("user alice")
    expect(panel.get_by_role("button", name="Load more")).to_be_hidden()
    shoot(page, "admin-activity-caught-up")


def test_a_delete_whose_deleter_the_log_cannot_know_is_not_put_on_the_system(console, api, page, activity_log):
    # Given a ticket the member opened and then deleted themselves (a delete's entry has no actor:
    # its stream record names the last writer only, docs/EVENTS.md)
    seed_demo(api)
    opener = token_of(MEMBER)
    ticket = api.call("POST", "/orgs/demo/users/bob/tickets", {"subject": "Printer on fire"}, token=opener)
    api.call("DELETE", f"/orgs/demo/tickets/{ticket['ticket_id']}", token=opener)

    # When the admin reads the activity
    sign_in(page, console, token_of(ADMIN))
    entry = page.get_by_role("region", name="Activity").get_by_role("row").filter(has_text="Ticket Deleted")

    # Then the entry says its deleter is not recorded, rather than blaming "the system" for what bob did
    expect(entry).to_have_count(1, timeout=ACTIVITY_WAIT_MS)
    expect(entry.get_by_role("cell").nth(2)).to_have_text("not recorded")


def test_a_throttled_refresh_waits_the_retry_after_before_reading_again(console, api, page):
    # Given the admin on the org's page, and the web ACL throttling the panel's first refresh (429
    # throttled, Retry-After: 30): the address is over its rate, and each request counts toward it
    seed_demo(api)
    reads = _throttle_the_first_refresh(page, retry_after="30")
    sign_in(page, console, token_of(ADMIN))
    while len(reads) < 2:
        page.wait_for_timeout(200)

    # When more than two of the panel's 3-second beats pass
    page.wait_for_timeout(7_000)

    # Then it has not read again: the next read waits the 30 seconds asked for
    assert len(reads) == 2, reads
