"""The console in a real browser: Debian's Chromium, headless, driven by Playwright, against the local
gateway (make run's) on DynamoDB Local. Screenshots of each flow go to .local/screenshots/."""

import shutil
import threading
import traceback

import pytest

from controlplane import config
from local import server
from tests.browser.kit import MISSING_CHROMIUM, Api
from tests.events_support import BUS, RecordingBus, feeder, stream_reader

STREAM_POLL_SECONDS = 0.2


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


@pytest.fixture
def activity_log(table, gateway, monkeypatch):
    """make run's stream poller for this test's table: the table's stream through the events function
    (which writes the activity log) in a thread, one function at a time as the gateway runs them."""
    monkeypatch.setenv("EVENT_BUS_NAME", BUS)
    bus = RecordingBus()
    config.use_bus(bus)
    reader, events = stream_reader(table), feeder()  # from the stream's start: nothing is missed
    stop = threading.Event()

    def poll() -> None:
        while not stop.wait(STREAM_POLL_SECONDS):
            try:
                records = reader.read()
                with server._one_at_a_time:
                    events.feed(records)
            except Exception:  # keep polling, as make run's poller does; the test sees what is missing
                traceback.print_exc()

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    yield bus
    stop.set()
    thread.join()
    config.use_bus(None)
