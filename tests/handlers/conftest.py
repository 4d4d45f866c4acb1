"""Fixtures of the tests that run the table's stream through the events function: defined here once,
so no test module imports another's fixtures (ruff reads an imported fixture used as a parameter as
a redefinition, F811)."""

import pytest

from controlplane import config
from controlplane.lifecycle import publisher
from tests.events_support import BUS, RecordingBus, stream_reader


@pytest.fixture
def bus(table, monkeypatch):
    """EventBridge as a recorder, which the events function publishes to; no waits between PutEvents
    attempts; the activity log's retention read again from this test's environment."""
    monkeypatch.setenv("EVENT_BUS_NAME", BUS)
    monkeypatch.setattr(publisher.time, "sleep", lambda _: None)  # the backoff between PutEvents attempts
    publisher.retention_days.cache_clear()
    recorder = RecordingBus()
    config.use_bus(recorder)
    yield recorder
    config.use_bus(None)
    publisher.retention_days.cache_clear()


@pytest.fixture
def stream(table):
    """The table's stream, from the first write after the test starts."""
    return stream_reader(table)
