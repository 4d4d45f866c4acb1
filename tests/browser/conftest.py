"""The console in a real browser: Debian's Chromium, headless, driven by Playwright, against the local
gateway (make run's) on DynamoDB Local. Screenshots of each flow go to .local/screenshots/."""

import shutil

import pytest

from tests.browser.kit import MISSING_CHROMIUM, Api


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    if not executable:
        pytest.fail(MISSING_CHROMIUM)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"], headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def console(table, gateway):
    """The console's base URL, on a fresh table behind the local gateway (the tests choose DynamoDB Local)."""
    return f"{gateway}/console/"


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    yield page
    context.close()
    # A script error or a CSP violation is a defect even when the flow went through. The API's
    # refusals the tests provoke are logged by Chromium as failed resources: those are expected.
    unexpected = [e for e in errors if "Failed to load resource" not in e]
    assert not unexpected, unexpected


@pytest.fixture
def api(console):
    return Api(console)
