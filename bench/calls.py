"""1. Requests per API call: what each route sends to DynamoDB, counted on the functions' own client."""

from collections import Counter
from typing import NamedTuple

from bench import data
from bench.harness import Section, label, recording
from bench.stats import markdown, verdict
from controlplane import config
from controlplane.http.routes import ROUTES
from local import descriptions
from local.apigw import call
from local.samples import BODIES

ORG, USER, OTHER_USERS, USER_TICKETS, FILLER_ORGS = "acme", "alice", 24, 25, 20
DOOMED_ORG, DOOMED_USERS, DOOMED_TICKETS = "doomed", 5, 10  # the org cascade: 5 users x 10 tickets
DOOMED_USER, DOOMED_USER_TICKETS = "bob", 50  # the user cascade
# The cascade deletes, each on a known data set of its own: the ids that differ, and the data set;
# and the user import, whose requests grow with its rows.
CASCADES = {
    ("DELETE", "/orgs/{org_id}"): ({"org_id": DOOMED_ORG}, f"org, {DOOMED_USERS} users x {DOOMED_TICKETS} tickets"),
    ("DELETE", "/orgs/{org_id}/users/{user_id}"): ({"user_id": DOOMED_USER}, f"user, {DOOMED_USER_TICKETS} tickets"),
    # not a cascade, but a job too: reported like them (an import of 1,000 users is section 9's)
    ("POST", "/orgs/{org_id}/user-imports"): ({}, "1 row; its job runs within the request, as make run's"),
}
CATALOGUE = {("GET", "/plans")}  # answered from code, with no request at all
# The unit routes that read where a unit is before their one Query or write (issue 27): as many
# requests as their OpenAPI description names; the delete acts on an empty unit of its own.
UNIT_PATHS = {"/orgs/{org_id}/units", "/orgs/{org_id}/units/{unit_id}", "/orgs/{org_id}/units/{unit_id}/users"}
# An org's change reads it back with its seat counter, an item of its own (issue 26: the org item,
# listed in the one ORGS partition, is not written by user creates): as many as its description names.
DESCRIBED = {("PATCH", "/orgs/{org_id}")}
UNIT, EMPTY_UNIT, UNIT_USERS = "eng", "empty", 5
IMPORTED = "imported"  # the one user of the import that GET /orgs/{org_id}/user-imports/{import_id} reads
OTHER_IDS = {("DELETE", "/orgs/{org_id}/units/{unit_id}"): {"unit_id": EMPTY_UNIT}}
INCLUDES = {
    ("GET", "/orgs/{org_id}"): {"include": "users"},
    ("GET", "/orgs/{org_id}/users/{user_id}"): {"include": "tickets"},
}
# What the lists return: a page of items, or (include=) the parent and a page of its children.
LIST_PATHS = {"/orgs", "/orgs/{org_id}/users", "/orgs/{org_id}/users/{user_id}/tickets", "/orgs/{org_id}/activity"}
LIST_PATHS |= {"/orgs/{org_id}/units", "/orgs/{org_id}/units/{unit_id}/users"}
# The first page of these lists starts at its parent (the org, the user), which answers 404 for a
# missing one in the same request: one item read that the page does not return.
PARENT_FIRST = {"/orgs/{org_id}/users", "/orgs/{org_id}/users/{user_id}/tickets", "/orgs/{org_id}/activity"}
# The org's reads also read its seat counter, which sorts right after it (its usage in the response).
WITH_SEATS = {"/orgs/{org_id}", "/orgs/{org_id}/users"}


class Case(NamedTuple):
    method: str
    path: str
    ids: dict
    query: dict | None = None
    headers: dict | None = None
    data: str = ""

    @property
    def body(self) -> dict | None:
        body = BODIES.get((self.method, self.path))
        if body and self.headers:  # a second create: another id
            return {name: f"{value}-2" if name.endswith("_id") else value for name, value in body.items()}
        return body

    @property
    def label(self) -> str:
        return label(self.method, self.path, self.query) + (" + Idempotency-Key" if self.headers else "")

    @property
    def lists(self) -> bool:
        return self.method == "GET" and (self.path in LIST_PATHS or bool(self.query))


def cases(ids: dict) -> list[Case]:
    found = []
    for route in ROUTES:
        key = (route.method, route.path)
        other_ids, data_set = CASCADES.get(key, (OTHER_IDS.get(key, {}), ""))
        found.append(Case(*key, {**ids, **other_ids}, data=data_set))
        if key in INCLUDES:
            found.append(Case(*key, ids, query=INCLUDES[key]))
    # Powertools' idempotency record costs requests of its own: shown, not counted against the goal.
    # The creates of one resource take a key (201); a user import (202, a job) takes none.
    posts = [route for route in ROUTES if route.method == "POST" and route.status == 201]
    return found + [Case(*route[:2], ids, headers={"Idempotency-Key": f"bench-{i}"}) for i, route in enumerate(posts)]


def _seed(client) -> dict:
    for i in range(FILLER_ORGS):
        data.create("/orgs", {"org_id": f"filler-{i:02}", "name": f"Filler {i}"})
    users = {USER: USER_TICKETS, DOOMED_USER: DOOMED_USER_TICKETS, **{f"user-{i:02}": 0 for i in range(OTHER_USERS)}}
    tickets = data.seed(client, ORG, users)
    data.seed(client, DOOMED_ORG, {f"user-{i}": DOOMED_TICKETS for i in range(DOOMED_USERS)})
    data.load_activity(client, ORG)  # an entry per user: the activity log has more than a page too
    for unit_id in (UNIT, EMPTY_UNIT):
        data.create(f"/orgs/{ORG}/units", {"unit_id": unit_id, "name": unit_id.title()})
    for i in range(UNIT_USERS):
        call("PATCH", f"/orgs/{ORG}/users/user-{i:02}", {"unit": UNIT})
    rows = [{"user_id": IMPORTED, "name": "Imported", "email": "imported@example.com"}]
    import_id = call("POST", f"/orgs/{ORG}/user-imports", {"rows": rows}).body["import_id"]
    return {"org_id": ORG, "user_id": USER, "ticket_id": tickets[USER][0], "unit_id": UNIT, "import_id": import_id}


def _expected_requests(case: Case) -> int:
    if (case.method, case.path) in CATALOGUE:
        return 0
    if case.path in UNIT_PATHS or (case.method, case.path) in DESCRIBED:
        route = next(r for r in ROUTES if (r.method, r.path) == (case.method, case.path))
        named = descriptions.OPERATIONS[route.operation_id].requests
        return 1 if named is None else len(named)  # None: a PATCH that moves grows; the rename sent here is one
    return 1


def _items(body) -> int:
    """Items in an API response: a page's items, or the parent and its children."""
    return sum(
        len(value) if isinstance(value, list) else 1 for value in body.values() if isinstance(value, list | dict)
    )


def _capacity(responses: list[dict]) -> float:
    total = 0.0
    for response in responses:
        consumed = response.get("ConsumedCapacity", [])
        for entry in consumed if isinstance(consumed, list) else [consumed]:
            total += entry["CapacityUnits"]
    return total


def run(client) -> Section:
    ids = _seed(client)
    rows, goals = [], []
    with recording(config.dynamodb(), capacity=True) as recorder:
        for case in cases(ids):
            recorder.clear()
            path = case.path.format(**case.ids)
            reply = call(case.method, path, case.body, query=case.query, headers=case.headers)
            body = reply.body
            if reply.status >= 300:
                raise RuntimeError(f"{case.method} {path} answered {reply.status}: {body}")
            responses = [exchange.response for exchange in recorder.exchanges]
            operations = ", ".join(f"{op} x{n}" if n > 1 else op for op, n in Counter(recorder.sent).items())
            read = returned = returned_api = "—"
            catalogue = (case.method, case.path) in CATALOGUE
            wanted_requests = _expected_requests(case)
            met = len(recorder.sent) == wanted_requests
            if case.lists:  # the Queries' items (a unit list's BatchGetItem reads where the unit is)
                read = sum(response["ScannedCount"] for response in responses if "ScannedCount" in response)
                returned = sum(response["Count"] for response in responses if "Count" in response)
                returned_api = _items(body)
                parent = 1 if case.path in PARENT_FIRST and not case.query else 0
                seats = 1 if case.path in WITH_SEATS and (case.query or case.path in PARENT_FIRST) else 0
                met = met and read == returned == returned_api + parent + seats
            if (case.method, case.path) in CASCADES:
                goal = "reported"
            elif case.headers:
                goal = "idempotency record, not counted"
            else:
                goal = verdict(met)
                wanted = {0: "no request", 1: "one request"}.get(wanted_requests, f"{wanted_requests} requests")
                goals.append((f"{case.label}: {wanted}" + (", items read = returned" if case.lists else ""), met))
            capacity = (
                f"{_capacity(responses):g}" if any("ConsumedCapacity" in r for r in responses) else "not reported"
            )
            capacity = "0" if catalogue and not responses else capacity
            rows.append(
                [case.label, case.data, len(recorder.sent), operations, capacity, read, returned, returned_api, goal]
            )
    headers = ["Route", "Data", "Requests", "Operations", "Capacity units", "Items read (ScannedCount)"]
    headers += ["Items returned (Count)", "Items in response", "Goal"]
    body = (
        "Every HTTP request the functions' client (`config.dynamodb()`) sent, counted with botocore's "
        "`before-send` event (retries would count too), for one call of each route as an operator. Each "
        "request also asked for `ReturnConsumedCapacity=TOTAL` (a `before-parameter-build` hook); the capacity "
        "is the sum DynamoDB Local reported. For the lists, items read (the Query's `ScannedCount`) must equal "
        "items returned (`Count`, and the items in the API's response, a parent counted as one; the first "
        "page of a user, ticket or activity list also reads the org or user it belongs to, so that a missing "
        "one is 404; an org's reads also read its seat counter, an item of its own beside it, shown as its usage). "
        f"Data: {ORG} has {OTHER_USERS + 3} users (and an activity entry for each), {USER} has {USER_TICKETS} "
        "tickets, and there are more "
        "than 20 organizations, so every list returns a full page of 20 (include=: 1 + 20).\n\n"
        + markdown(headers, rows)
    )
    return Section("1. Requests per API call", body, goals)
