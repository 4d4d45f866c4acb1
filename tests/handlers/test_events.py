"""The events/ files for ``sam local invoke``: one per route, current, and each one works."""

import json

from controlplane.http.routes import FUNCTIONS, ROUTES, Route
from controlplane.logic import imports, tickets
from local import events
from tests.api import invoke

ORDER = ("POST", "GET", "PATCH", "DELETE")


def _event_files():
    return sorted(events.EVENTS_DIR.glob("*/*.json"))


def _replay_order(route: Route) -> tuple[int, int, int]:
    """Parents are created first and deleted last: organizations, users, tickets and back; within a
    function, by path (an org's units before the org)."""
    depth, segments = FUNCTIONS.index(route.function), route.path.count("/")
    if route.method == "DELETE":
        return ORDER.index(route.method), -depth, -segments
    return ORDER.index(route.method), depth, segments


def test_every_route_has_exactly_one_event_file_in_its_functions_folder():
    found = []
    for path in _event_files():
        event = json.loads(path.read_text())
        found.append((event["httpMethod"], event["resource"], path.parent.name))

    assert sorted(found) == sorted((r.method, r.path, r.function) for r in ROUTES)


def test_committed_events_are_what_make_events_writes():
    expected = events.expected_files()

    committed = {path: path.read_text() for path in [*_event_files(), events.ENV_FILE]}

    assert committed == expected, "events/ is stale: run `make events` and commit it"


def test_each_event_replayed_through_its_handler_succeeds(table, monkeypatch):
    # The events name a fixed ticket id; the server would make a new one when the ticket is created.
    monkeypatch.setattr(tickets, "new_ulid", lambda: events.IDS["ticket_id"])
    monkeypatch.setattr(imports, "new_ulid", lambda: events.IDS["import_id"])

    statuses = {}
    for route in sorted(ROUTES, key=_replay_order):
        response = invoke(json.loads(events.file_for(route).read_text()))
        statuses[route] = (response["statusCode"], response["body"])

    assert {route: status for route, (status, _) in statuses.items()} == {r: r.status for r in ROUTES}, statuses
