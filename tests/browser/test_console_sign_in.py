"""Signing in: a link signs in as its identity in any tab, the one signed in included; the cloud build
takes only Cognito's authorization code (never a token in the address, which would be sign-in CSRF);
and the code grant's redirect URI is the console's root from any of its paths."""

from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from local import tokens
from tests.browser.kit import OPERATOR_TOKEN, seed_demo, shoot, sign_in

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)

STORED_TOKEN = "sessionStorage.getItem('console.id_token')"
COGNITO = "cognito-test"  # a stand-in for the Cognito domain, on the page's origin (the CSP's connect-src)


def signed_in_as(page, who: str) -> None:
    expect(page.get_by_role("navigation", name="Main")).to_contain_text(who)


def test_a_link_opened_in_a_signed_in_tab_signs_in_as_its_identity_and_stays_after_a_reload(console, api, page):
    # Given a tab signed in as an operator
    seed_demo(api)
    admin_token = tokens.for_user("demo", "alice")
    sign_in(page, console, OPERATOR_TOKEN)
    signed_in_as(page, "operator (operator)")

    # When the admin's sign-in link is opened in the same tab
    sign_in(page, console, admin_token)

    # Then the tab is the admin's, and the token has left the address bar
    signed_in_as(page, "alice (admin of demo)")
    expect(page.get_by_role("heading", name="Organization demo", level=1)).to_be_visible()
    assert page.evaluate(STORED_TOKEN) == admin_token
    assert "id_token" not in page.url

    # And still after a reload
    page.reload()
    signed_in_as(page, "alice (admin of demo)")
    assert page.evaluate(STORED_TOKEN) == admin_token


def test_each_tab_is_signed_in_as_the_link_it_opened(console, api, page):
    seed_demo(api)
    admin_token, member_token = tokens.for_user("demo", "alice"), tokens.for_user("demo", "bob")
    sign_in(page, console, admin_token)
    other = page.context.new_page()

    sign_in(other, console, member_token)

    signed_in_as(other, "bob (member of demo)")
    page.reload()
    signed_in_as(page, "alice (admin of demo)")


def cloud_settings(page, console: str) -> str:
    """Serve the page the stack's config.json (infra/console.py: an API URL, a Cognito domain and the
    console's client id, and no localSignIn); returns the stand-in Cognito domain."""
    domain = f"{console.removesuffix('/console/')}/{COGNITO}"
    settings = {"apiUrl": "", "cognitoDomain": domain, "clientId": "console-client"}
    page.route("**/console/config.json", lambda route: route.fulfill(json=settings))
    return domain


def test_the_cloud_build_ignores_a_token_in_the_address(console, api, page):
    # Given the console as the stack configures it
    seed_demo(api)
    cloud_settings(page, console)

    # When a crafted link with a valid token is opened, in a fresh tab and then in the same tab again
    sign_in(page, console, OPERATOR_TOKEN)
    expect(page.get_by_role("heading", name="Sign in", level=1)).to_be_visible()
    page.goto(f"{console}#id_token={tokens.for_user('demo', 'alice')}")

    # Then nobody is signed in: the sign-in page offers the account sign-in only, and says why
    expect(page.get_by_role("alert")).to_contain_text("signs in through your account only")
    expect(page.get_by_role("button", name="Sign in with your account")).to_be_visible()
    expect(page.get_by_label("ID token")).to_have_count(0)
    expect(page.get_by_role("button", name="Sign out")).to_have_count(0)
    assert page.evaluate(STORED_TOKEN) is None
    assert "id_token" not in page.url
    shoot(page, "cloud-refuses-token-link")


@pytest.mark.parametrize("path", ["", "index.html"], ids=["root", "index.html"])
def test_the_code_grant_uses_the_consoles_root_as_redirect_uri_from_any_path(console, api, page, path):
    # Given the cloud build, and a Cognito that answers the authorize and token requests
    domain = cloud_settings(page, console)
    asked: dict[str, dict] = {}

    def authorize(route):
        query = {name: values[0] for name, values in parse_qs(urlsplit(route.request.url).query).items()}
        asked["authorize"] = query
        route.fulfill(status=302, headers={"Location": f"{query['redirect_uri']}?code=one-time&state={query['state']}"})

    def token(route):
        asked["token"] = {name: values[0] for name, values in parse_qs(route.request.post_data or "").items()}
        route.fulfill(json={"id_token": OPERATOR_TOKEN})

    page.route(f"{domain}/oauth2/authorize**", authorize)
    page.route(f"{domain}/oauth2/token", token)

    # When someone signs in from the console's root or from /index.html
    page.goto(f"{console}{path}")
    page.get_by_role("button", name="Sign in with your account").click()

    # Then both legs of the grant name the root, the one callback URL the stack registers, and the
    # code signs them in
    signed_in_as(page, "operator (operator)")
    assert asked["authorize"]["redirect_uri"] == console
    assert (asked["authorize"]["response_type"], asked["authorize"]["code_challenge_method"]) == ("code", "S256")
    assert asked["token"]["redirect_uri"] == console
    assert (asked["token"]["grant_type"], asked["token"]["code"]) == ("authorization_code", "one-time")
    assert page.evaluate(STORED_TOKEN) == OPERATOR_TOKEN


EXCHANGE_FAILURES = {
    "unreachable": (lambda route: route.abort("connectionfailed"), "the sign-in service cannot be reached"),
    "no-id-token": (
        lambda route: route.fulfill(json={"error": "x"}),
        "the sign-in service's answer holds no valid ID token",
    ),
}


@pytest.mark.parametrize("failure", EXCHANGE_FAILURES)
def test_a_code_whose_exchange_fails_says_so_on_the_sign_in_page(console, api, page, failure):
    # Given the cloud build, and a Cognito whose token endpoint the network does not reach, or whose
    # answer holds no ID token
    domain = cloud_settings(page, console)
    answer, said = EXCHANGE_FAILURES[failure]

    def authorize(route):
        query = {name: values[0] for name, values in parse_qs(urlsplit(route.request.url).query).items()}
        route.fulfill(status=302, headers={"Location": f"{query['redirect_uri']}?code=one-time&state={query['state']}"})

    page.route(f"{domain}/oauth2/authorize**", authorize)
    page.route(f"{domain}/oauth2/token", answer)

    # When someone signs in and comes back with a code
    page.goto(console)
    page.get_by_role("button", name="Sign in with your account").click()

    # Then the sign-in page says the sign-in failed and why, and offers to sign in again, instead of
    # "Loading…" for good; the spent code has left the address
    expect(page.get_by_role("heading", name="Sign in", level=1)).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text(f"Sign-in failed: {said}")
    expect(page.get_by_role("button", name="Sign in with your account")).to_be_visible()
    assert "code=" not in page.url
    assert page.evaluate(STORED_TOKEN) is None


def test_settings_the_network_does_not_bring_are_said_in_words_with_what_to_do(console, api, page):
    # Given a network that drops the console's config.json
    page.route("**/console/config.json", lambda route: route.abort("connectionfailed"))

    # When the console is opened
    page.goto(console)

    # Then it says what could not be read and what to do, not the browser's bare "Failed to fetch"
    expect(page.get_by_role("alert")).to_have_text(
        "The console's settings (config.json) could not be read: the network did not answer. Reload the page."
    )
