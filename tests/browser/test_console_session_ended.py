"""A session whose user or organization is deleted ends: the gateway's 403 session_ended returns the
console to its sign-in page with the reason, once, instead of each panel showing the refusal."""

import pytest
from playwright.sync_api import expect

from local import tokens
from tests.browser.kit import OPERATOR_TOKEN, hold_activity_read, let_go, seed_demo, shoot, sign_in

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)

STORED_TOKEN = "sessionStorage.getItem('console.id_token')"
ENDED = "Your session has ended. Your sign-in is no longer a user of organization demo"


@pytest.mark.parametrize(("user", "deleted"), [("bob", "/orgs/demo/users/bob"), ("alice", "/orgs/demo")])
def test_a_user_whose_user_or_org_was_deleted_is_returned_to_sign_in_with_the_reason(
    console, api, page, monkeypatch, user, deleted
):
    # Given a user of demo with a token, and an authorizer that decides each request afresh
    monkeypatch.setenv("AUTHORIZER_TTL_SECONDS", "0")
    seed_demo(api)
    token = tokens.for_user("demo", user)

    # When their user (or their whole org) is deleted and they open the console with that token
    api.call("DELETE", deleted)
    sign_in(page, console, token)

    # Then the sign-in page says why, the token is forgotten, and nothing of the org is shown
    expect(page.get_by_role("heading", name="Sign in", level=1)).to_be_visible()
    expect(page.get_by_role("alert")).to_have_text(f"{ENDED}: your user or your organization has been deleted.")
    expect(page.get_by_role("button", name="Sign out")).to_have_count(0)
    assert page.evaluate(STORED_TOKEN) is None
    shoot(page, f"session-ended-{'org' if deleted == '/orgs/demo' else 'user'}")


def test_an_admin_deleted_mid_session_is_signed_out_once_not_once_per_refused_call(console, api, page, monkeypatch):
    # Given alice, demo's admin, on her org's page (its activity panel reads the API every few seconds)
    monkeypatch.setenv("AUTHORIZER_TTL_SECONDS", "0")
    seed_demo(api)
    sign_in(page, console, tokens.for_user("demo", "alice"))
    expect(page.get_by_role("region", name="Activity")).to_be_visible()

    # And an operator deletes her, while the panel's next read is on its way (held back here)
    held = hold_activity_read(page, lambda: api.call("DELETE", "/orgs/demo/users/alice"))

    # When she renames the org: the API refuses the token, and the console is back at sign-in
    rename = page.get_by_role("form", name="Rename the organization")
    rename.get_by_label("Organization name").fill("Demo Industries")
    rename.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("heading", name="Sign in", level=1)).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text(ENDED)
    assert page.evaluate(STORED_TOKEN) is None

    # And when she has begun pasting a new token and the held read's refusal arrives after all
    page.get_by_label("ID token").fill("half a pasted token")
    let_go(page, held, "session_ended")

    # Then the sign-in page is not drawn again: what she typed stays, under one message
    expect(page.get_by_label("ID token")).to_have_value("half a pasted token")
    expect(page.get_by_role("alert")).to_have_count(1)
    expect(page.get_by_role("region", name="Activity")).to_have_count(0)
    shoot(page, "session-ended-mid-session")


def test_a_refusal_of_an_earlier_token_answered_after_someone_signed_in_leaves_them_signed_in(
    console, api, page, monkeypatch
):
    # Given alice, demo's admin, on her org's page, deleted while its activity read is on its way
    monkeypatch.setenv("AUTHORIZER_TTL_SECONDS", "0")
    seed_demo(api)
    sign_in(page, console, tokens.for_user("demo", "alice"))
    expect(page.get_by_role("region", name="Activity")).to_be_visible()
    held = hold_activity_read(page, lambda: api.call("DELETE", "/orgs/demo/users/alice"))

    # And an operator signs in in that tab (a sign-in link) before its answer arrives
    sign_in(page, console, OPERATOR_TOKEN)
    expect(page.get_by_role("heading", name="Organizations", level=1)).to_be_visible()

    # When the read sent with alice's token is refused after all
    let_go(page, held, "session_ended")

    # Then the operator is still signed in, on their page: alice's session ended, not theirs
    expect(page.get_by_role("heading", name="Organizations", level=1)).to_be_visible()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    assert page.evaluate(STORED_TOKEN) == OPERATOR_TOKEN
