"""The typed client: its coverage of the route table, its retries (scripted answers), and the real
API through the local gateway on DynamoDB Local. (The e2e suite, e2e/, uses it on every route.)"""

import contextlib
import inspect
import json

import httpx
import pytest

from controlplane.http.errors import STATUS
from controlplane.http.routes import ROUTES
from controlplane.models import errors
from controlplane.models.resources import DeletionAccepted
from controlplane.models.units import MoveAccepted
from cpctl import endpoints
from cpctl.client import Client, etag
from cpctl.errors import (
    ERRORS,
    AlreadyExists,
    ApiError,
    Conflict,
    MoveInProgress,
    NotFound,
    OrgSuspended,
    PreconditionFailed,
    ServiceUnavailable,
    Throttled,
    UnexpectedAnswer,
    error_for,
)
from cpctl.retries import MAX_ATTEMPTS, MAX_WAIT_SECONDS
from local import ROOT, apigw, tokens

OPENAPI = ROOT / "docs" / "openapi.json"
ORG = {
    "org_id": "acme",
    "name": "Acme",
    "plan": "free",
    "created_at": "2026-11-22T00:00:00.000Z",
    "updated_at": "2026-11-22T00:00:00.000Z",
    "version": 1,
    "deleting_since": None,
    "usage": {"users": 0},
    "limits": {"users": 5},
}


def error(status: int, code: str, headers: dict | None = None) -> httpx.Response:
    body = {"error": {"code": code, "message": f"a {code}", "request_id": "req-1"}}
    return httpx.Response(status, json=body, headers=headers)


class Scripted:
    """A transport that answers from a list and records what was sent."""

    def __init__(self, *answers: httpx.Response):
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []
        self.waits: list[float] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]

    def client(self, timeout: float = MAX_ATTEMPTS * MAX_WAIT_SECONDS) -> Client:
        """``timeout``: the request's (its waits take no time here; test_client_timeouts tests it)."""
        transport = httpx.MockTransport(self)
        return Client("http://api.test", "t0ken", transport=transport, sleep=self.waits.append, timeout=timeout)

    def keys(self) -> list[str | None]:
        return [request.headers.get("Idempotency-Key") for request in self.requests]


def test_every_route_of_the_table_has_a_client_method():
    assert {(route.method, route.path) for route in ROUTES} == endpoints.COVERED


def test_a_client_method_for_a_route_the_table_lacks_fails_at_import():
    with pytest.raises(LookupError, match=r"not in controlplane\.http\.routes\.ROUTES"):
        endpoints._route("PUT", "/orgs/{org_id}")


def test_every_error_code_the_functions_raise_has_its_exception_class():
    # The contract table's codes too: throttled and internal_error have no domain error class
    codes = set(STATUS) | {cls.code for cls in errors.ApiError.__subclasses__()}

    assert codes <= set(ERRORS)
    assert all(ERRORS[code] is not ApiError for code in codes)


def test_a_503_is_retried_after_retry_after_with_the_same_idempotency_key():
    api = Scripted(error(503, "service_unavailable", {"Retry-After": "2"}), httpx.Response(201, json=ORG))

    org = api.client().create_org("acme", name="Acme")

    assert org.org_id == "acme"
    assert api.waits == [2.0]
    first, second = api.keys()
    assert first and first == second


def test_a_409_conflict_means_the_first_attempt_still_runs_so_the_same_key_is_sent_again():
    api = Scripted(error(409, "conflict"), error(409, "conflict"), httpx.Response(201, json=ORG))

    api.client().create_org("acme", name="Acme")

    assert len(set(api.keys())) == 1 and len(api.requests) == 3
    assert len(api.waits) == 2


def test_each_create_gets_its_own_key_and_a_given_key_is_sent_as_is():
    api = Scripted(httpx.Response(201, json=ORG))
    client = api.client()

    client.create_org("acme", name="Acme")
    client.create_org("acme", name="Acme")
    client.create_org("acme", name="Acme", idempotency_key="mine")

    first, second, mine = api.keys()
    assert first != second and mine == "mine"


# An optional field given empty (a script's unset variable) is refused before sending, as the API
# would refuse it: never dropped, which would send the default instead (the root unit, a new key).
EMPTY_OPTIONALS = {
    "unit-parent": lambda c: c.create_unit("acme", "eng", "Engineering", parent_id=""),
    "user-unit": lambda c: c.create_user("acme", "bob", "Bob", "bob@acme.example", unit=""),
    "user-role": lambda c: c.create_user("acme", "bob", "Bob", "bob@acme.example", role=""),
    "org-plan": lambda c: c.create_org("acme", "Acme", plan=""),
    "idempotency-key": lambda c: c.create_ticket("acme", "alice", "VPN is down", idempotency_key=""),
}


@pytest.mark.parametrize("create", EMPTY_OPTIONALS.values(), ids=EMPTY_OPTIONALS.keys())
def test_an_empty_optional_of_a_create_is_refused_before_sending_not_dropped(create):
    # Given a client
    api = Scripted(httpx.Response(201, json=ORG))

    # When a create is given an optional field (or its Idempotency-Key) empty
    with pytest.raises(ValueError):  # pydantic's ValidationError is one too
        create(api.client())

    # Then nothing is sent: not the create with the field's default in its place
    assert api.requests == []


@pytest.mark.parametrize(
    "change",
    [
        lambda c: c.update_org("acme", if_match="", name="Acme"),
        lambda c: c.delete_user("acme", "bob", if_match=""),
        lambda c: c.delete_unit("acme", "eng", if_match=""),
    ],
    ids=["update-org", "delete-user", "delete-unit"],
)
def test_an_empty_if_match_is_refused_before_sending_not_sent_as_a_condition_that_may_vanish(change):
    # Given a client
    api = Scripted(httpx.Response(204))

    # When a change is given an empty If-Match (a script's unset "$ETAG")
    with pytest.raises(ValueError, match="If-Match"):
        change(api.client())

    # Then nothing is sent: an empty header may reach the API as none, and the change would apply
    # whatever the version
    assert api.requests == []


def test_already_exists_is_raised_at_once_not_retried():
    api = Scripted(error(409, "already_exists"))

    with pytest.raises(AlreadyExists) as raised:
        api.client().create_org("acme", name="Acme")

    assert len(api.requests) == 1
    assert (raised.value.status, raised.value.code, raised.value.request_id) == (409, "already_exists", "req-1")


def test_a_conflict_on_a_request_without_idempotency_key_is_not_retried():
    api = Scripted(error(409, "conflict"))

    with pytest.raises(Conflict):
        api.client().update_org("acme", name="X")

    assert len(api.requests) == 1


UNIT = {
    "org_id": "acme",
    "unit_id": "db",
    "name": "DB",
    "parent_id": "eng",
    "path": "/eng/db",
    "depth": 2,
    "moving": False,
    "created_at": "2026-11-22T00:00:00.000Z",
    "updated_at": "2026-11-22T00:00:00.000Z",
    "version": 2,
}


def test_a_move_in_progress_is_waited_out_for_any_request_even_an_update_without_a_key():
    # docs/CLI.md: a 409 move_in_progress changed nothing, so any request is sent again after its
    # Retry-After, unlike a 409 conflict, which only a keyed create may be sent again after
    moving = error(409, "move_in_progress", {"Retry-After": "2"})
    api = Scripted(moving, moving, httpx.Response(200, json=UNIT))

    unit = api.client().update_unit("acme", "db", parent_id="eng")

    assert unit.path == "/eng/db"
    assert (len(api.requests), api.waits) == (3, [2.0, 2.0])
    assert api.keys() == [None, None, None]


def test_a_move_that_outlasts_the_retries_is_raised_as_move_in_progress():
    api = Scripted(error(409, "move_in_progress", {"Retry-After": "1"}))

    with pytest.raises(MoveInProgress) as raised:
        api.client().list_units("acme")

    assert (len(api.requests), raised.value.code) == (MAX_ATTEMPTS, "move_in_progress")


def test_retries_are_bounded_and_each_wait_is_capped():
    api = Scripted(error(503, "service_unavailable", {"Retry-After": "3600"}))

    with pytest.raises(ServiceUnavailable):
        api.client().get_org("acme")

    assert len(api.requests) == MAX_ATTEMPTS
    assert api.waits == [MAX_WAIT_SECONDS] * (MAX_ATTEMPTS - 1)


def test_a_429_is_retried_after_its_retry_after():
    api = Scripted(error(429, "throttled", {"Retry-After": "1"}), httpx.Response(200, json=ORG))

    assert api.client().get_org("acme").org_id == "acme"

    assert api.waits == [1.0]


def test_a_429_for_the_daily_quota_is_raised_at_once_not_waited_out():
    api = Scripted(error(429, "throttled", {"Retry-After": "43200"}))

    with pytest.raises(Throttled):
        api.client().get_org("acme")

    assert (len(api.requests), api.waits) == (1, [])


def test_an_answer_that_is_not_the_error_contract_still_raises_with_the_status():
    api = Scripted(httpx.Response(502, json={"message": "Internal server error"}, headers={"x-amzn-RequestId": "r"}))

    with pytest.raises(ApiError) as raised:
        api.client().get_org("acme")

    assert (raised.value.status, raised.value.code, raised.value.request_id) == (502, "http_502", "r")


def test_a_page_that_is_not_the_api_is_named_not_printed():
    # Given a URL that reaches a web server's HTML error page, not the API
    page = "<!DOCTYPE html><html><head><title>404 Not Found</title></head><body>" + "x" * 300 + "</body></html>"
    api = Scripted(httpx.Response(404, text=page, headers={"Content-Type": "text/html; charset=utf-8"}))

    # When a call gets it
    with pytest.raises(ApiError) as raised:
        api.client().get_org("acme")

    # Then the message says what came back, without the page's markup
    assert (raised.value.status, raised.value.code) == (404, "http_404")
    assert "<" not in raised.value.message
    assert "HTML" in raised.value.message and "Not Found" in raised.value.message


def test_ids_are_quoted_into_one_path_segment_and_the_token_is_sent_raw():
    api = Scripted(error(422, "validation_error"))

    with pytest.raises(ApiError):
        api.client().get_user("acme", "../orgs")

    assert api.requests[0].url.raw_path == b"/orgs/acme/users/..%2Forgs"
    assert api.requests[0].headers["Authorization"] == "t0ken"


@pytest.mark.parametrize(("user_id", "sent"), [("..", b"%2E%2E"), (".", b"%2E")])
def test_a_dot_segment_id_is_sent_as_the_id_not_resolved_to_the_parent_route(user_id, sent):
    # Unescaped, DELETE /orgs/acme/users/.. is DELETE /orgs/acme: the whole org.
    api = Scripted(error(422, "validation_error"))

    with pytest.raises(ApiError):
        api.client().delete_user("acme", user_id)

    assert (api.requests[0].method, api.requests[0].url.raw_path) == ("DELETE", b"/orgs/acme/users/" + sent)


def test_patch_sends_only_the_fields_given_and_if_match_from_a_resource():
    api = Scripted(httpx.Response(200, json=ORG))
    org = api.client().get_org("acme")

    api.client().update_org("acme", name="Renamed", if_match=org)

    patch = api.requests[-1]
    assert json.loads(patch.content) == {"name": "Renamed"}
    assert patch.headers["If-Match"] == '"1"'


def test_a_202_is_read_as_the_work_accepted_and_a_204_as_nothing():
    # Given the API's answers to a delete of a big org and a move of a big subtree (work goes on)
    deleting = {"org_id": "acme", "status": "deleting", "message": "GET the org until it is 404"}
    moving = {"org_id": "acme", "unit_id": "eng", "status": "moving", "message": "GET the unit"}
    api = Scripted(httpx.Response(202, json=deleting), httpx.Response(202, json=moving), httpx.Response(204))
    client = api.client()

    # When the client makes them, and a delete that is done at once
    accepted = client.delete_org("acme", if_match='"2"')
    moved = client.update_unit("acme", "eng", parent_id="ops")
    gone = client.delete_org("acme")

    # Then each is its model (not the resource), and the 204 is None
    assert isinstance(accepted, DeletionAccepted) and accepted.org_id == "acme"
    assert isinstance(moved, MoveAccepted) and moved.unit_id == "eng"
    assert gone is None
    assert api.requests[0].headers["If-Match"] == '"2"'


def test_suspend_and_activate_send_the_status_patch():
    api = Scripted(httpx.Response(200, json=ORG))

    api.client().suspend_org("acme", "Unpaid", if_match='"3"')
    api.client().activate_org("acme")

    suspend, activate = api.requests
    assert (suspend.method, suspend.url.path) == ("PATCH", "/orgs/acme")
    assert json.loads(suspend.content) == {"status": "suspended", "suspension_reason": "Unpaid"}
    assert suspend.headers["If-Match"] == '"3"'
    assert json.loads(activate.content) == {"status": "active"}


def test_a_reason_over_500_characters_is_refused_before_sending():
    api = Scripted(httpx.Response(200, json=ORG))

    with pytest.raises(ValueError, match="500"):
        api.client().suspend_org("acme", "x" * 501)

    assert api.requests == []


# Every query parameter a method can send, each given: a name its route does not take is a 422.
QUERIES = {
    "list_orgs": lambda c: c.list_orgs(limit=5, cursor="c"),
    "get_org_with_users": lambda c: c.get_org_with_users("acme", limit=5),
    "list_activity": lambda c: c.list_activity("acme", limit=5, cursor="c"),
    "list_users": lambda c: c.list_users("acme", limit=5, cursor="c"),
    "get_user_with_tickets": lambda c: c.get_user_with_tickets("acme", "alice", limit=5),
    "list_tickets": lambda c: c.list_tickets("acme", "alice", limit=5, cursor="c"),
    "list_units": lambda c: c.list_units("acme", under="eng", limit=5, cursor="c"),
    "list_unit_users": lambda c: c.list_unit_users("acme", "eng", direct=True, limit=5, cursor="c"),
}


def _documented_query(method: str, path: str) -> set[str]:
    route, _ = apigw.match(method, path)
    operation = json.loads(OPENAPI.read_text())["paths"][route.path][method.lower()]
    return {parameter["name"] for parameter in operation.get("parameters", []) if parameter["in"] == "query"}


@pytest.mark.parametrize("method", QUERIES)
def test_every_query_parameter_a_client_method_sends_is_one_its_route_takes(method):
    api = Scripted(httpx.Response(200, json={}))

    with contextlib.suppress(UnexpectedAnswer):  # the answer is not the page: only what was sent counts
        QUERIES[method](api.client())

    (sent,) = api.requests
    assert set(sent.url.params) <= _documented_query(sent.method, sent.url.path)
    assert len(sent.url.params) == len(set(sent.url.params))  # each once


def test_every_query_parameter_the_document_gives_an_operation_can_be_sent_by_the_client():
    # Given what the client's methods send, each with every query parameter it takes
    sent: dict[tuple[str, str], set[str]] = {}
    for call in QUERIES.values():
        api = Scripted(httpx.Response(200, json={}))
        with contextlib.suppress(UnexpectedAnswer):
            call(api.client())
        (request,) = api.requests
        route, _ = apigw.match(request.method, request.url.path)
        sent.setdefault((request.method, route.path), set()).update(request.url.params)

    # Then every query parameter of every operation of the document is among them: none is unreachable
    document = json.loads(OPENAPI.read_text())["paths"]
    for path, operations in document.items():
        for method, operation in operations.items():
            documented = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
            assert documented <= sent.get((method.upper(), path), set()), f"{method.upper()} {path}"


def _documented_errors() -> list[tuple[str, str, int, dict]]:
    """Every error example of the document: (operation, code, status, body)."""
    found = []
    for path, operations in json.loads(OPENAPI.read_text())["paths"].items():
        for method, operation in operations.items():
            for status, response in operation["responses"].items():
                examples = response.get("content", {}).get("application/json", {}).get("examples", {})
                for example in examples.values() if int(status) >= 400 else ():
                    body = example["value"]
                    found.append((f"{method.upper()} {path}", body["error"]["code"], int(status), body))
    return found


def test_every_error_the_document_shows_is_raised_as_its_own_class():
    # Given every error example of the OpenAPI document (a code added to the API shows up here)
    documented = _documented_errors()
    assert {code for _, code, _, _ in documented} >= {"not_found", "precondition_failed", "org_suspended"}

    for operation, code, status, body in documented:
        # When the API answers it
        raised = error_for(httpx.Response(status, json=body))

        # Then it is the class its code names, carrying its code and status, never the catch-all
        assert type(raised) is ERRORS.get(code), f"{operation} {status} {code}"
        assert (raised.code, raised.status) == (code, status)


def test_every_client_method_that_sends_a_query_is_checked():
    methods = {name: value for name, value in vars(Client).items() if inspect.isfunction(value)}
    sends_a_query = {name for name, method in methods.items() if "params=" in inspect.getsource(method)}

    assert sends_a_query == set(QUERIES)


def _paged_lists() -> set[str]:
    """The lists a cursor goes on in: each client method that takes one (``list_users`` -> users)."""
    methods = {name: value for name, value in vars(Client).items() if inspect.isfunction(value)}
    takes_one = {name for name, f in methods.items() if "cursor" in inspect.signature(f).parameters}
    return {name.removeprefix("list_") for name in takes_one if name.startswith("list_")}


def test_every_paged_list_has_a_page_iterator_and_an_item_iterator():
    # Given every list method that takes a cursor
    lists = _paged_lists()
    assert {"orgs", "activity", "users", "tickets", "units", "unit_users"} <= lists

    # Then each has <list>_pages and iter_<list>, so that no caller follows next_cursor by hand
    missing = [
        name
        for plural in sorted(lists)
        for name in (f"{plural.removesuffix('s')}_pages", f"iter_{plural}")
        if not hasattr(Client, name)
    ]
    assert missing == []


def test_the_unit_users_iterator_follows_next_cursor_within_the_same_list():
    # Given lists of two pages, the second the last
    user = {"org_id": "acme", "user_id": "alice", "name": "Alice", "email": "a@acme.example", "role": "member"}
    user |= {"unit": "eng", "created_at": ORG["created_at"], "updated_at": ORG["updated_at"], "version": 1}
    pages = [httpx.Response(200, json={"items": [user], "next_cursor": cursor}) for cursor in ("c1", None)]
    api = Scripted(*pages)

    # When every unit user is read
    found = list(api.client().iter_unit_users("acme", "eng", direct=True, limit=1))

    # Then both pages were asked for, the second with the first's cursor, in the same list
    assert [u.user_id for u in found] == ["alice", "alice"]
    assert [dict(r.url.params) for r in api.requests] == [
        {"direct": "true", "limit": "1"},
        {"direct": "true", "limit": "1", "cursor": "c1"},
    ]


# Against the API: the local gateway over real HTTP, the functions on DynamoDB Local.


@pytest.fixture
def api(gateway):
    with Client(gateway, tokens.issue(tokens.OPERATOR)) as client:
        yield client


@pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)
def test_page_iterators_follow_next_cursor_to_the_last_page(table, api):
    api.create_org("acme", name="Acme")
    api.create_user("acme", "alice", name="Alice", email="alice@acme.example")
    opened = [api.create_ticket("acme", "alice", f"Ticket {i}").ticket_id for i in range(45)]

    pages = list(api.ticket_pages("acme", "alice"))

    assert [len(page.items) for page in pages] == [20, 20, 5]
    assert [ticket.ticket_id for page in pages for ticket in page.items] == opened[::-1]
    assert [ticket.ticket_id for ticket in api.iter_tickets("acme", "alice", limit=100)] == opened[::-1]


@pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)
def test_etag_of_a_resource_is_the_header_the_api_sent_and_a_stale_one_is_refused(table, api):
    created = api.create_org("acme", name="Acme")
    assert api.last_response.headers["ETag"] == etag(created)
    api.update_org("acme", name="First", if_match=created)

    with pytest.raises(PreconditionFailed) as stale:
        api.update_org("acme", name="Second", if_match=etag(created))

    assert stale.value.code == "precondition_failed"
    assert api.get_org("acme").name == "First"


@pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)
def test_an_error_carries_the_request_id_the_gateway_sent(table, api):
    with pytest.raises(NotFound) as missing:
        api.get_org("nowhere")

    assert missing.value.request_id == api.last_response.headers["x-amzn-RequestId"]
    assert missing.value.message and missing.value.body == api.last_response.text


@pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)
def test_suspend_and_activate_through_the_gateway(table, api):
    api.create_org("acme", name="Acme")
    api.create_user("acme", "alice", name="Alice", email="alice@acme.example")

    suspended = api.suspend_org("acme", "Unpaid", if_match='"1"')
    with pytest.raises(OrgSuspended) as refused:
        api.create_user("acme", "bob", name="Bob", email="bob@acme.example")
    activated = api.activate_org("acme", if_match=suspended)

    assert (suspended.status, suspended.suspension_reason, suspended.version) == ("suspended", "Unpaid", 2)
    assert refused.value.status == 409 and refused.value.code == "org_suspended"
    assert (activated.status, activated.suspended_at, activated.suspension_reason) == ("active", None, None)
    assert api.get_org("acme").status == "active"
    assert [user.user_id for user in api.iter_users("acme")] == ["alice"]


class Flaky(Scripted):
    """Drops the first connection, then answers."""

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if not self.requests:
            self.requests.append(request)
            raise httpx.ConnectError("connection reset", request=request)
        return super().__call__(request)


def test_a_lost_connection_is_retried_for_reads_and_keyed_creates_with_the_same_key():
    reads, creates = Flaky(httpx.Response(200, json=ORG)), Flaky(httpx.Response(201, json=ORG))

    reads.client().get_org("acme")
    creates.client().create_org("acme", name="Acme")

    assert len(reads.requests) == 2
    first, second = creates.keys()
    assert first and first == second


def test_a_lost_connection_is_not_retried_for_an_update():
    api = Flaky(httpx.Response(200, json=ORG))

    with pytest.raises(httpx.ConnectError):
        api.client().update_org("acme", name="X")

    assert len(api.requests) == 1
