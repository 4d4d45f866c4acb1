"""Every route is one DynamoDB request, except the two cascade deletes, the plan catalogue (none) and
an org's update (the org item, then a read of it with its seat counter, which is an item of its own so
that user creates leave the org listing alone: docs/DATA_MODEL.md); the unit routes that must first
read where a unit is (issue 27: tests/local_kit/test_openapi.py counts each against its description);
counted at the HTTP level."""

import pytest

from controlplane.http.routes import ROUTES
from local.samples import BODIES
from tests.api import call, create_org, create_ticket, create_user

CASCADES = {("DELETE", "/orgs/{org_id}"), ("DELETE", "/orgs/{org_id}/users/{user_id}")}
CATALOGUE = {("GET", "/plans")}  # answered from code
# A unit's path is in the keys its writes and listings need: read first (BatchGetItem), then one more.
UNIT_PATHS = {
    ("POST", "/orgs/{org_id}/units"),
    ("GET", "/orgs/{org_id}/units"),
    ("PATCH", "/orgs/{org_id}/units/{unit_id}"),
    ("DELETE", "/orgs/{org_id}/units/{unit_id}"),
    ("GET", "/orgs/{org_id}/units/{unit_id}/users"),
}
ORG_UPDATE = {("PATCH", "/orgs/{org_id}")}
IMPORT = {("POST", "/orgs/{org_id}/user-imports")}  # a job: test_an_import_is_the_requests_of_its_job


def _request(method: str, path: str, ids: dict):
    return call(method, path.format(**ids), BODIES.get((method, path)))


@pytest.fixture
def seeded(table):
    create_org("acme")
    create_user("acme", "alice")
    tickets = [create_ticket("acme", "alice").body["ticket_id"] for _ in range(3)]
    call("POST", "/orgs/acme/units", {"unit_id": "eng", "name": "Engineering"})
    rows = [{"user_id": "bob", "name": "Bob", "email": "bob@example.com"}]
    import_id = call("POST", "/orgs/acme/user-imports", {"rows": rows}).body["import_id"]
    return {"org_id": "acme", "user_id": "alice", "ticket_id": tickets[0], "unit_id": "eng", "import_id": import_id}


@pytest.mark.parametrize(
    "route",
    [r for r in ROUTES if (r.method, r.path) not in CASCADES | CATALOGUE | UNIT_PATHS | ORG_UPDATE | IMPORT],
    ids=str,
)
def test_route_sends_exactly_one_dynamodb_request(seeded, dynamodb_calls, route):
    reply = _request(route.method, route.path, seeded)

    assert reply.status < 300, reply.body
    assert len(dynamodb_calls) == 1, dynamodb_calls


@pytest.mark.parametrize("route", [r for r in ROUTES if (r.method, r.path) in CATALOGUE], ids=str)
def test_catalogue_routes_send_no_dynamodb_request(seeded, dynamodb_calls, route):
    reply = _request(route.method, route.path, seeded)

    assert reply.status == 200, reply.body
    assert dynamodb_calls == []


@pytest.mark.parametrize(
    ("path", "query", "operation"),
    [
        ("/orgs/acme", {"include": "users"}, "Query"),
        ("/orgs/acme/users/alice", {"include": "tickets"}, "Query"),
    ],
)
def test_include_routes_send_exactly_one_query(seeded, dynamodb_calls, path, query, operation):
    reply = call("GET", path, query=query)

    assert reply.status == 200
    assert dynamodb_calls == [operation]


def test_failed_writes_are_one_request_too(seeded, dynamodb_calls):
    assert create_org("acme").status == 409
    assert create_user("ghost", "bob").status == 404
    assert create_ticket("acme", "ghost").status == 404
    assert call("PATCH", "/orgs/ghost", {"name": "x"}).status == 404

    # Each refusal is its write's own condition (an org's create is a transaction: the org and its seat
    # counter); a ticket's missing user costs one GetItem more, on the 404's path only, to say whether
    # the user or their whole org is missing (the condition cannot tell)
    assert dynamodb_calls == ["TransactWriteItems", "TransactWriteItems", "TransactWriteItems", "GetItem", "UpdateItem"]


@pytest.mark.parametrize("body", [{"status": "suspended", "suspension_reason": "Unpaid"}, {"status": "active"}])
def test_a_status_change_is_one_update_item_then_one_query(seeded, dynamodb_calls, body):
    reply = call("PATCH", "/orgs/acme", body)

    assert reply.status == 200
    assert dynamodb_calls == ["UpdateItem", "Query"]


def test_a_plan_change_is_one_transaction_then_one_query(seeded, dynamodb_calls):
    reply = call("PATCH", "/orgs/acme", {"plan": "pro"})

    assert reply.status == 200
    assert dynamodb_calls == ["Query", "TransactWriteItems", "Query"]  # is the counter moved; plan + limit; read


def test_an_import_is_the_requests_of_its_job(seeded, dynamodb_calls):
    rows = [{"user_id": f"u{i}", "name": "U", "email": f"u{i}@example.com"} for i in range(3)]

    assert call("POST", "/orgs/acme/user-imports", {"rows": rows}).status == 202

    # The request: the org, the import (storing), the part, the import (running, in one transaction
    # with a check that the org is not being deleted). The job: the
    # import, which rows exist, the counter, one transaction, the part's progress; the org's status,
    # its sign-ins (none here); the import again, then done (the part without its rows, the import's
    # status). Then the answer: the import read again.
    assert dynamodb_calls == [
        *["Query", "PutItem", "BatchWriteItem", "TransactWriteItems"],
        *["Query", "BatchGetItem", "Query", "TransactWriteItems", "UpdateItem", "Query", "UpdateItem"],
        *["Query", "UpdateItem", "UpdateItem"],
        "Query",
    ]


def test_cascade_delete_of_a_user_batches_the_ticket_deletes(seeded, dynamodb_calls):
    reply = call("DELETE", "/orgs/acme/users/alice")

    assert reply.status == 204
    # The user read first (it exists, before the sign-in or a ticket goes), the sweep's marker, the
    # user and their seat, then the tickets; and, with no queue to send it to (here; AWS has one), the
    # sweep: is the user there again, the tickets GSI1 shows now, the marker (if it is still its own).
    deletes = ["GetItem", "PutItem", "TransactWriteItems", "Query", "BatchWriteItem"]
    assert dynamodb_calls == [*deletes, "GetItem", "Query", "DeleteItem"]


@pytest.mark.parametrize(
    ("path", "requests"),
    [
        ("/orgs", ["Query"]),
        ("/orgs/acme/users", ["Query"]),
        ("/orgs/acme/users/alice/tickets", ["Query"]),
        ("/orgs/acme/units", ["BatchGetItem", "Query"]),
        ("/orgs/acme/units/root/users", ["BatchGetItem", "Query"]),
    ],
)
def test_every_later_page_of_a_list_is_as_many_requests_as_its_first(seeded, dynamodb_calls, path, requests):
    # Given lists of two or more (a later page reads on from its cursor's item, by another path in the
    # code than the first page's, which reads the parent with it)
    create_org("bolt")
    call("POST", "/orgs/acme/units", {"unit_id": "ops", "name": "Operations"})
    create_user("acme", "carol", unit="eng")

    # When each is read one item a page, to its end
    sent, cursor = [], None
    for _ in range(5):
        dynamodb_calls.clear()
        reply = call("GET", path, query={"limit": "1", **({"cursor": cursor} if cursor else {})})
        assert reply.status == 200, reply.body
        sent.append(list(dynamodb_calls))
        cursor = reply.body["next_cursor"]
        if not cursor:
            break

    # Then every page, first and later, sent the same requests
    assert cursor is None and len(sent) >= 2
    assert sent == [requests] * len(sent)
