"""Bulk onboarding: POST /orgs/{org_id}/user-imports answers 202 with an import; its job creates the
users as seats allow, in transactions of up to 97, and refuses the rest row by row (no queue here:
the job runs in line, as make run runs it; the queued job and the sign-ins: test_imports_job.py)."""

import contextlib
import json

import boto3
import pytest
from botocore.exceptions import ClientError

from controlplane import config
from controlplane.dal import imports as dal_imports
from controlplane.dal import keys, seats, stamps, tree
from controlplane.dal.table import api_table
from controlplane.http import json_body, routes
from controlplane.logic import import_rows
from controlplane.logic import imports as logic_imports
from controlplane.models import errors, plans
from local import tokens
from local.apigw import build_event, read
from local.seed import fetch
from tests.api import admin, call, create_org, create_ticket, create_user, deliver, invoke, member
from tests.handlers.test_org_units import create_unit, ids


def _row(user_id: str, **fields) -> dict:
    return {"user_id": user_id, "name": user_id.title(), "email": f"{user_id}@example.com", **fields}


def _import(rows: list, org_id: str = "acme", **options):
    return call("POST", f"/orgs/{org_id}/user-imports", {"rows": rows}, **options)


def _users(org_id: str = "acme") -> list[str]:
    found, _ = api_table().query(keys.org_partition(org_id), prefix=keys.USER_PREFIX, limit=1000, consistent=True)
    return [item["user_id"] for item in found]


def test_an_import_answers_202_with_where_to_follow_it_and_creates_every_valid_row(table):
    create_org("acme", plan="pro")

    reply = _import([_row("alice", role="admin"), _row("bob")])

    assert reply.status == 202, reply.body
    assert reply.headers["Location"] == f"/local/orgs/acme/user-imports/{reply.body['import_id']}"
    assert (reply.body["status"], reply.body["total"], reply.body["created"], reply.body["pending"]) == (
        "done",
        2,
        2,
        0,
    )
    assert reply.body["refused"] == []
    assert call("GET", "/orgs/acme/users/alice").body["role"] == "admin"
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 2}
    assert call("GET", f"/orgs/acme/user-imports/{reply.body['import_id']}").body == reply.body


def test_invalid_duplicate_existing_and_seatless_rows_are_refused_row_by_row_and_the_rest_go_in(table):
    # Given a free org (5 seats) with alice in it
    create_org("acme")
    create_user("acme", "alice")
    rows = [
        _row("alice"),  # 0: exists
        _row("bob"),  # 1
        {"user_id": "Carol!", "name": "C", "email": "not-an-email"},  # 2: invalid
        _row("bob", name="Bob again"),  # 3: duplicate
        _row("dave"),  # 4
        _row("erin"),  # 5
        _row("frank"),  # 6
        _row("gina"),  # 7: no seat left
    ]

    body = _import(rows).body

    assert sorted(_users()) == ["alice", "bob", "dave", "erin", "frank"]
    assert (body["created"], body["pending"]) == (4, 0)
    assert [(r["row"], r["user_id"], r["code"]) for r in body["refused"]] == [
        (0, "alice", "already_exists"),
        (2, "Carol!", "validation_error"),
        (3, "bob", "duplicate"),
        (7, "gina", "quota_exceeded"),
    ]
    assert "email: not a valid e-mail address" in body["refused"][1]["message"]
    assert body["refused"][3]["message"] == "The free plan allows 5 users and the organization has 5"
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 5}


@pytest.mark.parametrize("name", ["query", "header"])
def test_a_rows_unknown_field_named_like_a_part_of_the_request_is_explained_as_unknown(table, name):
    # a row's problems are located by field alone: a field "query" holding a list is not a query
    # parameter given twice, as the API's own validation says of those
    create_org("acme")

    body = _import([_row("ann", **{name: ["a", "b"]})]).body

    assert [(r["code"], r["message"]) for r in body["refused"]] == [
        ("validation_error", f"{name}: not a field of this request")
    ]


def test_an_import_stopped_in_line_by_an_outage_answers_202_running_and_its_next_get_runs_it_on(table, monkeypatch):
    # Given no queue (make run), and DynamoDB failing (500, after botocore's retries) as the job
    # puts the import's users
    create_org("acme", plan="pro")

    def failing(*args, **kwargs):
        error = {
            "Error": {"Code": "InternalServerError", "Message": "injected"},
            "ResponseMetadata": {"HTTPStatusCode": 500},
        }
        raise ClientError(error, "TransactWriteItems")

    with monkeypatch.context() as outage:
        outage.setattr(seats, "take", failing)
        started = _import([_row("ann"), _row("bob")])

    # Then the import, stored, is accepted and running: a 503 would hide its id, and the import sent
    # again would find its own users
    assert started.status == 202, started.body
    assert (started.body["status"], started.body["created"], started.body["pending"]) == ("running", 0, 2)

    # And its next GET runs the job on, to its end
    done = call("GET", f"/orgs/acme/user-imports/{started.body['import_id']}")
    assert (done.status, done.body["status"], done.body["created"], done.body["refused"]) == (200, "done", 2, [])
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 2}


@pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)  # moto takes minutes over 97-user transactions
def test_an_import_of_1000_users_writes_the_orgs_counter_11_times(table):
    create_org("acme", plan="enterprise")
    transactions: list[str] = []  # the calls, not the HTTP sends: botocore's retry of a send is the same
    config.dynamodb().meta.events.register(  # transaction (its client request token), applied once
        "before-call.dynamodb.TransactWriteItems", lambda **_: transactions.append("TransactWriteItems")
    )

    body = _import([_row(f"user-{i:04d}") for i in range(1000)]).body

    assert (body["created"], body["refused"]) == (1000, [])
    assert len(transactions) == 1 + 11  # the request's (the import running), then ceil(1000 / 97) with the counter
    _, counter = seats.read(api_table(), "acme", consistent=True)
    assert counter is not None and counter[plans.USER_COUNT] == 1000 == len(_users())


@pytest.mark.parametrize(("caller", "status"), [(admin(), 202), (member(), 403), (admin("bolt"), 403)])
def test_admins_of_the_org_and_operators_may_import_and_no_one_else(table, caller, status):
    create_org("acme")

    assert _import([_row("zoe")], caller=caller).status == status
    assert _users() == (["zoe"] if status == 202 else [])


def test_a_suspended_org_cannot_import_and_nothing_is_stored(table):
    create_org("acme")
    call("PATCH", "/orgs/acme", {"status": "suspended", "suspension_reason": "Unpaid"})

    reply = _import([_row("zoe")])

    assert (reply.status, reply.error_code) == (409, "org_suspended")
    assert api_table().query(keys.org_partition("acme"), prefix=keys.IMPORT_PREFIX, limit=10)[0] == []


def test_an_org_suspended_after_the_requests_read_of_it_is_409_and_nothing_is_stored(table, monkeypatch):
    # Given an org the import's request reads as active, and that is suspended right after the read
    create_org("acme")
    active, _ = seats.read(api_table(), "acme")
    call("PATCH", "/orgs/acme", {"status": "suspended", "suspension_reason": "Unpaid"})
    reads = seats.read
    monkeypatch.setattr(seats, "read", lambda table, org_id, consistent=False: (active, reads(table, org_id)[1]))

    # When an import is asked
    reply = _import([_row("zoe")])

    # Then it is refused as a suspended org's, as when the read saw it, and nothing is stored
    assert (reply.status, reply.error_code) == (409, "org_suspended"), reply.body
    assert api_table().query(keys.org_partition("acme"), prefix=keys.IMPORT_PREFIX, limit=10)[0] == []
    assert _users() == []


@pytest.mark.parametrize("before", ["missing", "suspended"])
def test_an_org_created_or_reactivated_a_moment_before_is_not_refused_by_a_stale_read(table, monkeypatch, before):
    # Given an org that is active now, which a read that has not seen its last write yet (DynamoDB's
    # default, eventually consistent, for up to about a second) still shows missing or suspended
    create_org("acme")
    stale: tuple = (None, None)
    if before == "suspended":
        call("PATCH", "/orgs/acme", {"status": "suspended", "suspension_reason": "Unpaid"})
        stale = seats.read(api_table(), "acme", consistent=True)
        call("PATCH", "/orgs/acme", {"status": "active"})
    reads = seats.read
    monkeypatch.setattr(
        seats, "read", lambda table, org_id, consistent=False: reads(table, org_id, True) if consistent else stale
    )

    # When an import is asked
    reply = _import([_row("zoe")])

    # Then it is taken: the request decides its 404 or 409 from the org as it is (a strongly
    # consistent read), as a single user's create does (its transaction's check of the org)
    assert reply.status == 202, reply.body
    assert _users() == ["zoe"]


@pytest.mark.parametrize("rows", [[], [{"user_id": "a"}] * 10_001, "not a list"], ids=["none", "10001", "text"])
def test_an_import_of_no_rows_or_too_many_is_refused_whole(table, rows):
    create_org("acme")

    assert _import(rows).status == 422
    assert _users() == []


@pytest.mark.parametrize("odd", [None, "bob", ["bob", "Bob", "bob@example.com"], 7])
def test_a_row_that_is_not_an_object_is_422_naming_it_and_nothing_is_stored(table, odd):
    # docs/API.md: a row is refused on its own only when it is an object; one that is not (a client's
    # bug, not a person's typo) refuses the request, naming its place, and no row before it goes in
    create_org("acme")

    reply = _import([_row("alice"), odd, _row("carol")])

    assert (reply.status, reply.error_code) == (422, "validation_error")
    assert [problem["loc"] for problem in reply.body["error"]["details"]] == [["body", "rows", 1]]
    assert _users() == []
    assert api_table().query(keys.org_partition("acme"), prefix=keys.IMPORT_PREFIX, limit=10)[0] == []


def test_an_import_body_over_its_limit_is_413_and_a_users_body_over_128_kib_too(table):
    create_org("acme")

    assert _import([_row("a", name="n" * 128)] * 20_000).status == 413
    assert call("POST", "/orgs/acme/users", _row("a", name="n" * 140_000)).status == 413
    assert _users() == []


def test_the_largest_import_body_fits_in_lambdas_event_however_much_of_it_is_escaped(table):
    # Given the largest body the import route takes, all of it newlines but one row (each newline,
    # as each quote or backslash, takes two bytes in the event's JSON), sent with 10 KiB of headers
    create_org("acme")
    head = json.dumps({"rows": [_row("alice")]})
    body = head[:-1] + "\n" * (routes.IMPORT_BODY_BYTES - len(head)) + head[-1:]
    headers = {"Content-Type": "application/json", "X-Padding": "p" * 10_240}
    event = build_event("POST", "/orgs/acme/user-imports", body=body, headers=headers, authorizer=admin())

    # When API Gateway hands it to the function as a JSON event
    reply = read(invoke(event))

    # Then the event fits in a synchronous invoke's payload (6,291,456 bytes: a bigger one never
    # reaches the function), and the import goes in
    assert len(json.dumps(event, ensure_ascii=False).encode()) <= 6_291_456
    assert reply.status == 202, reply.body
    assert _users() == ["alice"]


def test_an_import_in_a_missing_org_is_404_and_a_missing_import_is_404(table):
    create_org("acme")

    assert _import([_row("zoe")], org_id="ghost").status == 404
    assert call("GET", "/orgs/acme/user-imports/01JD3Q0Z6V7S3M8E2K9XWQY4PB").status == 404


def test_an_orgs_delete_takes_its_imports_with_it(table):
    create_org("acme")
    import_id = _import([_row("zoe")]).body["import_id"]

    assert call("DELETE", "/orgs/acme").status == 204

    create_org("acme")
    assert call("GET", f"/orgs/acme/user-imports/{import_id}").status == 404


def test_an_import_sent_as_its_org_is_deleted_is_404_and_leaves_nothing_for_the_next_org_of_that_id(table, monkeypatch):
    # Given an org whose delete runs to its end after an import request has read the org, before it
    # stores the import
    create_org("acme", plan="pro")
    parts = logic_imports._parts

    def org_deleted_meanwhile(*args):
        assert call("DELETE", "/orgs/acme").status == 204
        return parts(*args)

    monkeypatch.setattr(logic_imports, "_parts", org_deleted_meanwhile)

    # When the import is sent
    reply = _import([_row("ann"), _row("bob")])
    monkeypatch.setattr(logic_imports, "_parts", parts)

    # Then it is refused as in a deleted org, and nothing of it outlives the org: a new org of that
    # id has no import
    assert reply.status == 404, reply.body
    assert reply.body["error"]["message"] == "Organization acme not found"
    assert _import_items() == []
    assert create_org("acme").status == 201
    assert _import_items() == []


def test_a_user_created_between_the_jobs_read_and_its_transaction_is_refused_and_the_rest_go_in(table, monkeypatch):
    # Given bob is created by someone else after the job read which of its rows exist
    create_org("acme", plan="pro")
    create_user("acme", "bob")
    read = dal_imports.users_present
    stale = [{}]  # the job's first read finds no one (an empty answer: "or read()" would read again)
    monkeypatch.setattr(dal_imports, "users_present", lambda *args: stale.pop() if stale else read(*args))

    # When the import's transaction meets him
    body = _import([_row("alice"), _row("bob"), _row("carol")]).body

    # Then he is refused as existing, the others are created, and every seat is counted once
    assert (body["created"], [(r["user_id"], r["code"]) for r in body["refused"]]) == (2, [("bob", "already_exists")])
    assert sorted(_users()) == ["alice", "bob", "carol"]
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 3}


def test_an_imported_user_signs_in_with_the_subject_stored_on_their_item(table, gateway):
    # Given users imported under make run (no user pool: each gets a subject of its own, as a create does)
    create_org("acme", plan="pro")
    _import([_row("alice", role="admin"), _row("bob")])
    items, _ = api_table().query(keys.org_partition("acme"), prefix=keys.USER_PREFIX, limit=10, consistent=True)
    subjects = [item[stamps.SIGN_IN_SUBJECT] for item in items]
    assert len(set(subjects)) == 2 and all(subject.startswith("local-") for subject in subjects)

    # When alice calls the API with her token (its sub the one on her item) through the gateway
    status, _, body = fetch(
        f"{gateway}/orgs/acme/users", headers={"Authorization": f"Bearer {tokens.for_user('acme', 'alice')}"}
    )

    # Then the authorizer lets her in
    assert status == 200, body
    assert [user["user_id"] for user in body["items"]] == ["alice", "bob"]


def _import_items(org_id: str = "acme") -> list[dict]:
    pages = api_table().query_all(keys.org_partition(org_id), prefix=keys.IMPORT_PREFIX, consistent=True)
    return [item for page in pages for item in page]


def test_rows_with_huge_user_ids_are_refused_with_their_ids_cut_short_and_the_import_goes_in(table):
    # Given 97 rows (one part) whose user_ids fill the body (29,000 characters each), and an extra
    # field whose name is long too: a refused row echoes what it was sent
    create_org("acme")
    rows = [{"user_id": "x" * 29_000 + str(i), "y" * 1000: 1} for i in range(dal_imports.PART_ROWS)]

    reply = _import(rows)

    # Then every row is refused on its own, its user_id and message cut short, and the part is stored
    assert reply.status == 202, reply.body
    refused = reply.body["refused"]
    assert [(r["row"], r["code"]) for r in refused] == [(i, "validation_error") for i in range(len(rows))]
    assert all(r["user_id"] == "x" * 63 + "…" and len(r["message"]) <= 300 for r in refused)
    assert call("GET", f"/orgs/acme/user-imports/{reply.body['import_id']}").body == reply.body


def test_an_import_of_refused_rows_full_of_escapes_is_answered_within_lambdas_response_limit(table):
    # Given rows refused one by one that echo a user_id and an extra field's name made of a character
    # of two bytes in the request and seven in the answer as Lambda returns it (JSON in JSON: \\u00e9)
    create_org("acme")
    rows = [{"user_id": "é" * 64 + str(i), "é" * 290: 1} for i in range(3_800)]
    body = json.dumps({"rows": rows}, ensure_ascii=False)
    event = build_event("POST", "/orgs/acme/user-imports", body=body, authorizer=admin())
    assert json_body.size(event) <= routes.IMPORT_BODY_BYTES

    # When the import is sent, and read back
    posted = invoke(event)
    import_id = json.loads(posted["body"])["import_id"]
    got = invoke(build_event("GET", f"/orgs/acme/user-imports/{import_id}", authorizer=admin()))

    # Then both answers fit in what Lambda returns (6,291,456 bytes: a bigger one is API Gateway's
    # 502, the import's id lost), and every row is still refused with its place
    assert len(json.dumps(posted)) <= 6_291_456
    assert len(json.dumps(got)) <= 6_291_456
    assert [r["row"] for r in json.loads(got["body"])["refused"]] == list(range(len(rows)))


def test_huge_rows_after_thousands_of_valid_ones_leave_no_part_behind_and_the_import_goes_in(table):
    # Given 25 parts of valid rows, then a part of huge refused rows (the part that once broke the
    # item limit, after the first 25 parts were written)
    create_org("acme")
    rows = [_row(f"u{i}") for i in range(25 * dal_imports.PART_ROWS)]
    rows += [{"user_id": "x" * 10_000 + str(i)} for i in range(dal_imports.PART_ROWS)]

    reply = _import(rows)

    assert reply.status == 202, reply.body
    assert len(_import_items()) == 1 + 26  # the import and all its parts
    assert (reply.body["created"], reply.body["pending"], len(reply.body["refused"])) == (5, 0, len(rows) - 5)


def test_a_failure_while_storing_the_parts_leaves_no_part_without_its_import(table, monkeypatch):
    # Given a write of the parts that fails after the first batch (throttled for good, or a crash)
    create_org("acme", plan="pro")
    put_all = dal_imports.batches.put_all

    def fails_half_way(table_, items):
        put_all(table_, items[:25])
        raise errors.ServiceUnavailable("The table is busy")

    monkeypatch.setattr(dal_imports.batches, "put_all", fails_half_way)

    # When an import of 30 parts is sent
    reply = _import([_row(f"u{i}") for i in range(30 * dal_imports.PART_ROWS)])

    # Then it is refused, and no part stays without its import: nothing stays at all
    assert reply.status == 503
    assert _import_items() == []
    assert _users() == []


def test_a_throttled_write_that_turns_the_import_running_leaves_nothing_stored(table):
    # Given a table that throttles the write that turns an import running (after botocore's retries)
    create_org("acme", plan="pro")
    throttled: list[str] = []

    def throttle_once(model, **_):
        if not throttled:
            throttled.append(model.name)
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, model.name)

    for operation in ("UpdateItem", "TransactWriteItems"):
        config.dynamodb().meta.events.register(f"before-call.dynamodb.{operation}", throttle_once)

    # When an import is sent
    reply = _import([_row("ann"), _row("bob")])

    # Then it is refused as busy, and no import stays storing (read as missing, run by no job)
    assert reply.status == 503, reply.body
    assert throttled
    assert _import_items() == []


def test_a_row_lands_in_the_unit_it_names_and_a_row_naming_a_missing_unit_is_refused(table):
    # Given an org with the units eng and web (in eng)
    create_org("acme", plan="pro")
    assert create_unit("eng").status == create_unit("web", "eng").status == 201

    # When rows name web, the root, nothing, and a unit that does not exist
    body = _import([_row("ann", unit="web"), _row("bob", unit="root"), _row("cid"), _row("dan", unit="ghost")]).body

    # Then each user is in their unit, as a single create puts them, and the last row is refused
    assert [(r["row"], r["user_id"], r["code"], r["message"]) for r in body["refused"]] == [
        (3, "dan", "not_found", "Unit ghost not found in organization acme")
    ]
    assert [call("GET", f"/orgs/acme/users/{u}").body["unit"] for u in ("ann", "bob", "cid")] == ["web", "root", "root"]
    assert ids(call("GET", "/orgs/acme/units/eng/users")) == ["ann"]  # found under its path, as a create's
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 3}


def test_a_unit_moved_between_the_jobs_read_and_its_transaction_gets_its_users_at_its_new_path(table, monkeypatch):
    # Given web is read under ops by the job, but sits under eng by the time its transaction runs
    create_org("acme", plan="pro")
    assert create_unit("eng").status == create_unit("ops").status == create_unit("web", "eng").status == 201
    read = import_rows.unit_paths
    stale = [{"root": "/", "web": "/ops/web"}]
    monkeypatch.setattr(import_rows, "unit_paths", lambda *args: stale.pop() if stale else read(*args))

    # When a row names web
    body = _import([_row("ann", unit="web")]).body

    # Then the transaction's check of web refuses the stale path, and the job places ann at the new one
    assert (body["created"], body["refused"]) == (1, [])
    assert ids(call("GET", "/orgs/acme/units/eng/users")) == ["ann"]
    assert ids(call("GET", "/orgs/acme/units/ops/users")) == []


def test_an_import_stopped_in_line_by_a_move_answers_202_running_and_its_next_get_places_its_users(table):
    # Given no queue (make run), and a move that has marked eng as the import's job runs in line
    create_org("acme", plan="pro")
    assert create_unit("eng").status == 201
    eng = keys.unit_key("acme", "eng")
    api_table().mark(eng, tree.MOVING, "a-move")

    # When rows name eng: the job stops, as a queued one waits for its redelivery
    started = _import([_row("ann", unit="eng"), _row("bob", unit="eng")])

    # Then the import is accepted and running, not a 503 that hides its id; a GET meanwhile says so too
    assert started.status == 202, started.body
    assert (started.body["status"], started.body["created"], started.body["pending"]) == ("running", 0, 2)
    follow = f"/orgs/acme/user-imports/{started.body['import_id']}"
    assert (call("GET", follow).status, call("GET", follow).body["status"]) == (200, "running")

    # And once the move is done, the next GET runs the job on: no queue ever would
    tree.rewrite(api_table(), eng, {tree.MOVING: "a-move"}, {}, removed=(tree.MOVING,))
    done = call("GET", follow)
    assert (done.status, done.body["status"], done.body["created"], done.body["refused"]) == (200, "done", 2, [])
    assert ids(call("GET", "/orgs/acme/units/eng/users")) == ["ann", "bob"]
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 2}


@pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)  # moto takes minutes over 97-user transactions
def test_rows_across_units_go_in_transactions_of_at_most_100_actions_with_one_check_per_unit(table):
    # Given a part's rows (97) across 3 units: 97 users + the org + the counter + the part + 3 units
    # would be 103 actions
    create_org("acme", plan="enterprise")
    for unit in ("a", "b", "c"):
        assert create_unit(unit).status == 201
    transactions: list[int] = []
    config.dynamodb().meta.events.register(
        "provide-client-params.dynamodb.TransactWriteItems",
        lambda params, **_: transactions.append(len(params["TransactItems"])),
    )

    body = _import([_row(f"user-{i:02d}", unit="abc"[i % 3]) for i in range(dal_imports.PART_ROWS)]).body

    assert (body["created"], body["refused"]) == (dal_imports.PART_ROWS, [])
    # The request's (the import running + the org's check), then 94 users and 3 checks of units,
    # then the other 3 users (each with the org's check, the counter and the part's check)
    assert transactions == [2, 94 + 2 + 1 + 3, 3 + 2 + 1 + 3]
    assert call("GET", "/orgs/acme").body["usage"] == {"users": dal_imports.PART_ROWS}
    assert len(ids(call("GET", "/orgs/acme/units/a/users", query={"limit": "100"}))) == 33


@pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)  # moto takes minutes over 97-user transactions
def test_a_part_of_98_rows_stored_by_the_code_before_the_parts_check_is_done_in_two_transactions(table, monkeypatch):
    # Given an import stored as the code before the part's check stored it (parts of 98), whose
    # job runs with the part's check (a deploy during the import)
    create_org("acme", plan="enterprise")
    parts = logic_imports._parts

    def parts_of_98(*args):
        with monkeypatch.context() as before:
            before.setattr(dal_imports, "PART_ROWS", 98)
            return parts(*args)

    monkeypatch.setattr(logic_imports, "_parts", parts_of_98)
    transactions: list[int] = []
    config.dynamodb().meta.events.register(
        "provide-client-params.dynamodb.TransactWriteItems",
        lambda params, **_: transactions.append(len(params["TransactItems"])),
    )

    body = _import([_row(f"user-{i:02d}") for i in range(98)]).body

    # Then every row is created: 97 users with the org, the counter and the part's check (100
    # actions), then the last one
    assert (body["status"], body["created"], body["refused"]) == ("done", 98, []), body
    assert transactions == [2, 97 + 3, 1 + 3]
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 98}


def _succeeds(reply) -> None:
    assert 200 <= reply.status < 300, reply.body


def _when_the_job_starts_its_rows(monkeypatch, act) -> None:
    """Run ``act`` once, as the job starts on its rows: after the request checked the org, before
    the job reads it for the rows' transaction."""
    read = import_rows.unit_paths

    def acted(*args):
        monkeypatch.setattr(import_rows, "unit_paths", read)
        act()
        return read(*args)

    monkeypatch.setattr(import_rows, "unit_paths", acted)


def test_the_rows_of_an_org_suspended_as_its_job_starts_are_refused_as_suspended(table, monkeypatch):
    create_org("acme", plan="pro")
    suspend = {"status": "suspended", "suspension_reason": "Invoice unpaid"}
    _when_the_job_starts_its_rows(monkeypatch, lambda: _succeeds(call("PATCH", "/orgs/acme", suspend)))

    body = _import([_row("ann"), _row("bob")]).body

    assert [(r["user_id"], r["code"]) for r in body["refused"]] == [("ann", "org_suspended"), ("bob", "org_suspended")]
    assert (body["created"], _users(), call("GET", "/orgs/acme").body["usage"]) == (0, [], {"users": 0})


def test_the_rows_of_an_org_whose_delete_began_as_its_job_starts_are_refused_and_none_goes_in(table, monkeypatch):
    create_org("acme", plan="pro")
    # (as the org's delete marks it first; the rest of the delete would take the import with it)
    _when_the_job_starts_its_rows(
        monkeypatch, lambda: api_table().mark(keys.org_key("acme"), stamps.DELETING, stamps.now())
    )

    body = _import([_row("ann")]).body

    assert [(r["user_id"], r["code"], r["message"]) for r in body["refused"]] == [
        ("ann", "not_found", "The organization is being deleted")
    ]
    assert _users() == []


def test_a_plan_changed_between_the_jobs_read_and_its_transaction_is_read_again_and_every_row_goes_in(
    table, monkeypatch
):
    # Given the org's plan changes after the job read its seat limit
    create_org("acme", plan="pro")
    take, transactions = seats.take, []

    def plan_changes_first(*args, **options):
        if not transactions:
            _succeeds(call("PATCH", "/orgs/acme", {"plan": "enterprise"}))
        transactions.append(options["limit"])
        return take(*args, **options)

    monkeypatch.setattr(seats, "take", plan_changes_first)

    # When the import's transaction meets the new limit
    body = _import([_row("ann"), _row("bob")]).body

    # Then it read the counter again and went in under the new limit, each seat counted once
    assert (body["created"], body["refused"]) == (2, [])
    assert len(transactions) == 2 and transactions[0] < transactions[1], transactions
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 2}


def _decided_with_a_stale_copy(monkeypatch, rows: list[dict]) -> tuple[dict, dict]:
    """An import of ``rows`` (its answer), and the import as a second delivery of its job read it
    before the first delivery, run here, decided it."""
    run = logic_imports.import_job.run
    monkeypatch.setattr(logic_imports.import_job, "run", lambda *args: None)
    started = _import(rows).body
    monkeypatch.undo()
    stale = dal_imports.load(api_table(), "acme", started["import_id"])
    assert run("acme", started["import_id"]) is None
    return started, stale


def test_users_a_second_delivery_puts_after_the_first_decided_their_rows_otherwise_do_not_stay_unreported(
    table, monkeypatch
):
    # Given a free org (5 seats) with s0 in it, and an import of 6 whose job SQS delivers twice: the
    # second delivery read the part before the first decided it (4 users in, 2 refused for seats)
    create_org("acme")
    create_user("acme", "s0")
    run = logic_imports.import_job.run
    started, stale = _decided_with_a_stale_copy(monkeypatch, [_row(f"u{i}") for i in range(6)])
    first = call("GET", f"/orgs/acme/user-imports/{started['import_id']}").body
    assert [(r["user_id"], r["code"]) for r in first["refused"]] == [("u4", "quota_exceeded"), ("u5", "quota_exceeded")]

    # When a seat is freed, and the second delivery goes on from the part as it read it
    _succeeds(call("DELETE", "/orgs/acme/users/s0"))
    load = dal_imports.load
    monkeypatch.setattr(dal_imports, "load", lambda *args: monkeypatch.setattr(dal_imports, "load", load) or stale)
    assert run("acme", started["import_id"]) is None

    # Then the import still reports what the table holds: a user it put in a seat is one it created
    # (with a sign-in to come), or is not there
    done = call("GET", f"/orgs/acme/user-imports/{started['import_id']}").body
    refused = {r["user_id"] for r in done["refused"]}
    assert done["created"] + len(refused) == 6
    assert [u for u in _users() if u in refused] == []
    assert call("GET", "/orgs/acme").body["usage"] == {"users": len(_users())}


def test_a_second_delivery_that_stops_after_its_put_once_the_import_ended_leaves_no_user_the_import_refused(
    table, monkeypatch
):
    # Given the race above: a free org (5 seats) with s0 in it, an import of 6 that the first delivery
    # decides (u4, u5 refused for seats) and ends, deleting the message: no delivery comes after
    create_org("acme")
    create_user("acme", "s0")
    started, stale = _decided_with_a_stale_copy(monkeypatch, [_row(f"u{i}") for i in range(6)])
    assert call("GET", f"/orgs/acme/user-imports/{started['import_id']}").body["status"] == "done"

    # When a seat is freed, and the second delivery, which read the part before the first decided
    # it, goes on from there and stops (its Lambda times out) right after its transaction
    _succeeds(call("DELETE", "/orgs/acme/users/s0"))
    load, take = dal_imports.load, seats.take
    monkeypatch.setattr(dal_imports, "load", lambda *args: monkeypatch.setattr(dal_imports, "load", load) or stale)

    def put_then_time_out(*args, **options):
        take(*args, **options)
        raise TimeoutError("the function timed out")

    monkeypatch.setattr(seats, "take", put_then_time_out)
    with contextlib.suppress(TimeoutError):  # it stops after its put (if it makes one): nothing runs after it
        logic_imports.import_job.run("acme", started["import_id"])
    monkeypatch.undo()

    # Then no user holds a seat that the import reports refused: a delivery that lost the part put none
    done = call("GET", f"/orgs/acme/user-imports/{started['import_id']}").body
    assert [(r["user_id"], r["code"]) for r in done["refused"]] == [("u4", "quota_exceeded"), ("u5", "quota_exceeded")]
    assert _users() == ["u0", "u1", "u2", "u3"]
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 4}


def _a_second_delivery_runs_as_the_first_decides(monkeypatch, rows: list[dict], meanwhile, second) -> dict:
    """An import of ``rows`` (its answer) whose first delivery, run here, read its rows and put its
    users, and then, as it is about to write its decision of the part, ``meanwhile()`` runs, and
    ``second(import_id, first_decides)``: a second delivery, which finds the part undecided.
    ``first_decides()`` writes the first's decision there and then (else it lands after ``second``)."""
    run = logic_imports.import_job.run
    monkeypatch.setattr(logic_imports.import_job, "run", lambda *args: None)
    started = _import(rows).body
    monkeypatch.setattr(logic_imports.import_job, "run", run)
    advance, decided = dal_imports.advance, []

    def first_decides(*args, **options):
        monkeypatch.setattr(dal_imports, "advance", advance)
        meanwhile()
        second(started["import_id"], lambda: decided.append(advance(*args, **options)))
        return decided[0] if decided else advance(*args, **options)

    monkeypatch.setattr(dal_imports, "advance", first_decides)
    assert run("acme", started["import_id"]) is None
    return started


def _stops_after_its_put(monkeypatch, import_id: str) -> None:
    """A delivery that puts its users and stops (its Lambda times out) right after its transaction."""
    take = seats.take

    def put_then_time_out(*args, **options):
        take(*args, **options)
        raise TimeoutError("the function timed out")

    monkeypatch.setattr(seats, "take", put_then_time_out)
    with pytest.raises(TimeoutError):
        logic_imports.import_job.run("acme", import_id)
    monkeypatch.setattr(seats, "take", take)


def test_a_second_delivery_that_put_users_the_first_decision_then_refused_gives_them_back_as_it_stops(
    table, monkeypatch
):
    # Given a free org (5 seats) with s0 in it, and an import of 6 whose first delivery put u0-u3 and
    # is about to refuse u4 and u5 for seats
    create_org("acme")
    create_user("acme", "s0")
    put: list[list[str]] = []

    def second(import_id, first_decides):  # puts u4, then meets the first's decision as it writes its own
        advance = dal_imports.advance

        def decided_first(*args, **options):
            monkeypatch.setattr(dal_imports, "advance", advance)
            put.append(_users())
            first_decides()
            return advance(*args, **options)

        monkeypatch.setattr(dal_imports, "advance", decided_first)
        assert logic_imports.import_job.run("acme", import_id) is None
        assert "u4" not in _users()  # given back as it stopped, not left for the import's end

    # When a seat is freed meanwhile, and a second delivery puts u4 before the first's decision lands
    meanwhile = lambda: _succeeds(call("DELETE", "/orgs/acme/users/s0"))  # noqa: E731
    started = _a_second_delivery_runs_as_the_first_decides(
        monkeypatch, [_row(f"u{i}") for i in range(6)], meanwhile, second
    )

    # Then the import reports what the table holds: u4, refused, holds no seat
    assert put == [["u0", "u1", "u2", "u3", "u4"]]
    done = call("GET", f"/orgs/acme/user-imports/{started['import_id']}").body
    assert [(r["user_id"], r["code"]) for r in done["refused"]] == [("u4", "quota_exceeded"), ("u5", "quota_exceeded")]
    assert _users() == ["u0", "u1", "u2", "u3"]
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 4}


def test_users_a_second_delivery_put_are_not_left_unreported_when_it_stops_before_giving_them_back(table, monkeypatch):
    # Given the race above: a free org (5 seats) with s0 in it, an import of 6 whose first delivery
    # is about to refuse u4 and u5 for seats, and a seat freed meanwhile
    create_org("acme")
    create_user("acme", "s0")

    def second(import_id, _):  # puts u4 and stops before the first's decision lands
        _stops_after_its_put(monkeypatch, import_id)
        assert "u4" in _users()

    # When a second delivery puts u4 and stops before it gives him back, and the first ends the import
    meanwhile = lambda: _succeeds(call("DELETE", "/orgs/acme/users/s0"))  # noqa: E731
    started = _a_second_delivery_runs_as_the_first_decides(
        monkeypatch, [_row(f"u{i}") for i in range(6)], meanwhile, second
    )

    # Then no user holds a seat that the import reports refused: the import's end gave u4 back
    done = call("GET", f"/orgs/acme/user-imports/{started['import_id']}").body
    refused = {r["user_id"] for r in done["refused"]}
    assert (done["status"], sorted(refused)) == ("done", ["u4", "u5"])
    assert [u for u in _users() if u in refused] == []
    assert call("GET", "/orgs/acme").body["usage"] == {"users": len(_users())}


def test_a_user_the_decision_refused_as_existing_that_a_stopped_second_delivery_put_is_given_back(table, monkeypatch):
    # Given an org where bob exists (a single create), and an import of ann and bob whose first
    # delivery put ann and is about to refuse bob as already_exists
    create_org("acme", plan="pro")
    create_user("acme", "bob")

    def second(import_id, _):  # puts bob (deleted meanwhile) and stops
        _stops_after_its_put(monkeypatch, import_id)
        assert api_table().get(keys.user_key("acme", "bob"), consistent=True)["import_id"] == import_id

    # When bob is deleted, and a second delivery puts bob and stops before giving him back
    meanwhile = lambda: _succeeds(call("DELETE", "/orgs/acme/users/bob"))  # noqa: E731
    started = _a_second_delivery_runs_as_the_first_decides(monkeypatch, [_row("ann"), _row("bob")], meanwhile, second)

    # Then bob, reported refused, holds no seat
    done = call("GET", f"/orgs/acme/user-imports/{started['import_id']}").body
    assert [(r["user_id"], r["code"]) for r in done["refused"]] == [("bob", "already_exists")]
    assert _users() == ["ann"]
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 1}


def test_a_ticket_opened_for_a_user_a_second_delivery_put_goes_with_him_when_he_is_given_back(table, monkeypatch):
    # Given the race above: a free org (5 seats) with s0 in it, an import of 6 whose first delivery
    # is about to refuse u4 and u5 for seats, a seat freed, and a second delivery that puts u4 and
    # stops before giving him back
    create_org("acme")
    create_user("acme", "s0")
    tickets = []

    def second(import_id, _):  # puts u4 and stops; a ticket is opened for him (he is listed, as any user)
        _stops_after_its_put(monkeypatch, import_id)
        assert "u4" in _users()
        tickets.append(create_ticket("acme", "u4"))
        assert tickets[0].status == 201, tickets[0].body

    # When the first delivery decides the part (u4 refused) and ends the import, giving u4 back
    meanwhile = lambda: _succeeds(call("DELETE", "/orgs/acme/users/s0"))  # noqa: E731
    _a_second_delivery_runs_as_the_first_decides(monkeypatch, [_row(f"u{i}") for i in range(6)], meanwhile, second)
    assert "u4" not in _users()

    # Then his ticket went with him, as a user's delete takes their tickets
    assert api_table().get(keys.ticket_key("acme", tickets[0].body["ticket_id"]), consistent=True) is None


def _u4_put_by_a_slow_second_delivery_and_given_back_by_the_imports_end(monkeypatch) -> dict:
    """The race above, with six rows: the second delivery stops after its put of u4's part, and the
    first one's end gives u4 back. The import as its POST answered it."""
    create_org("acme")
    create_user("acme", "s0")
    meanwhile = lambda: _succeeds(call("DELETE", "/orgs/acme/users/s0"))  # noqa: E731
    return _a_second_delivery_runs_as_the_first_decides(
        monkeypatch,
        [_row(f"u{i}") for i in range(6)],
        meanwhile,
        lambda import_id, _: _stops_after_its_put(monkeypatch, import_id),
    )


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # SQS exists on moto only
def test_a_second_delivery_giving_back_a_user_gone_already_leaves_no_sweep_marker_nor_queued_sweep(
    table, monkeypatch, request
):
    # Given the race above: u4 put by a second delivery that is only slow, and the import's end
    # (the first delivery) that gave u4 back first
    started = _u4_put_by_a_slow_second_delivery_and_given_back_by_the_imports_end(monkeypatch)
    assert "u4" not in _users()

    # When the second delivery, in the cloud (a deletions queue), goes on to give u4 back
    queue_url = request.getfixturevalue("deletions_queue")
    _, [part] = dal_imports.load(api_table(), "acme", started["import_id"])
    import_rows.give_back_unrecorded("acme", started["import_id"], part, ["u4"])

    # Then nothing is marked nor queued for a user it did not delete, as a user's delete of a user
    # gone is refused before its marker (logic.users.delete_user)
    markers, _ = api_table().query(keys.org_partition("acme"), prefix=keys.SWEEP_PREFIX, limit=10, consistent=True)
    assert markers == []
    queued = boto3.client("sqs").receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", [])
    assert queued == []


def test_another_admins_get_that_runs_a_stopped_import_on_creates_its_users_as_the_importer(table):
    # Given no queue, and an admin's import stopped in line by a move under way
    create_org("acme", plan="pro")
    assert create_unit("eng").status == 201
    eng = keys.unit_key("acme", "eng")
    api_table().mark(eng, tree.MOVING, "a-move")
    started = _import([_row("ann", unit="eng")], caller=admin())
    assert (started.status, started.body["status"]) == (202, "running"), started.body
    tree.rewrite(api_table(), eng, {tree.MOVING: "a-move"}, {}, removed=(tree.MOVING,))

    # When another admin of the org reads it (the route is the admins'), which runs the job on
    done = call("GET", f"/orgs/acme/user-imports/{started.body['import_id']}", caller=admin(user_id="bob"))
    assert done.status == 200, done.body
    assert (done.body["status"], done.body["created"]) == ("done", 1), done.body

    # Then the user is the importer's creation, not the reader's
    [record] = [item for item in _import_items() if item["entity"] != dal_imports.PART]
    user = api_table().get(keys.user_key("acme", "ann"), consistent=True)
    assert user[stamps.CREATED_BY] == user[stamps.UPDATED_BY] == record[stamps.CREATED_BY]
    assert record[stamps.CREATED_BY] == admin()["sub"] != admin(user_id="bob")["sub"]


def test_a_user_to_give_back_that_an_admin_deleted_meanwhile_ends_the_import_without_an_error(table, monkeypatch):
    # Given the race above: u4 put by a second delivery that stopped, and the first delivery that
    # ends the import; an admin deletes u4 between its read of him and its give back
    create_org("acme")
    create_user("acme", "s0")
    give_back, deleted = seats.give_back, []

    def deleted_meanwhile(*args, **kwargs):
        if not deleted:  # the import's give back (the admin's delete gives his seat back too: not here)
            deleted.append(0)
            deleted[0] = call("DELETE", "/orgs/acme/users/u4").status
        return give_back(*args, **kwargs)

    def second(import_id, _):
        _stops_after_its_put(monkeypatch, import_id)
        monkeypatch.setattr(seats, "give_back", deleted_meanwhile)

    # When the import ends (the helper asserts that its run returns None: no error for the queue)
    meanwhile = lambda: _succeeds(call("DELETE", "/orgs/acme/users/s0"))  # noqa: E731
    started = _a_second_delivery_runs_as_the_first_decides(
        monkeypatch, [_row(f"u{i}") for i in range(6)], meanwhile, second
    )

    # Then u4 is gone once, and his seat was given back once
    assert deleted == [204]
    assert call("GET", f"/orgs/acme/user-imports/{started['import_id']}").body["status"] == "done"
    assert _users() == ["u0", "u1", "u2", "u3"]
    assert call("GET", "/orgs/acme").body["usage"] == {"users": 4}


def test_a_delivery_whose_org_was_deleted_before_it_decided_its_part_stops_without_an_error(table, monkeypatch):
    # Given an import whose delivery has put its users, and the org's delete that runs to its end
    # before that delivery writes its decision (the delete takes the import and the users)
    create_org("acme", plan="pro")
    run = logic_imports.import_job.run
    monkeypatch.setattr(logic_imports.import_job, "run", lambda *args: None)
    started = _import([_row("ann"), _row("bob")]).body
    monkeypatch.setattr(logic_imports.import_job, "run", run)
    advance, deleted = dal_imports.advance, []

    def deleted_first(*args, **options):
        if not deleted:
            deleted.append(call("DELETE", "/orgs/acme").status)
        return advance(*args, **options)

    monkeypatch.setattr(dal_imports, "advance", deleted_first)

    # When the delivery goes on to decide its part, then it stops: no error for the queue to retry
    assert run("acme", started["import_id"]) is None

    # And nothing of the org is left
    assert deleted == [204]
    assert call("GET", "/orgs/acme").status == 404
    assert _import_items() == [] and _users() == []


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # SQS exists on moto only
def test_a_slow_second_delivery_leaves_a_user_of_that_id_created_since_alone(table, monkeypatch, request):
    # Given the race above: u4 put by a second delivery that is only slow, given back by the import's
    # end, and then created again by an admin
    started = _u4_put_by_a_slow_second_delivery_and_given_back_by_the_imports_end(monkeypatch)
    queue_url = request.getfixturevalue("deletions_queue")
    assert create_user("acme", "u4").status == 201

    # When the second delivery, in the cloud, goes on to give u4 back
    _, [part] = dal_imports.load(api_table(), "acme", started["import_id"])
    import_rows.give_back_unrecorded("acme", started["import_id"], part, ["u4"])

    # Then the new u4 is not the import's: he stays, with his seat, and no sweep is marked nor queued for him
    assert "u4" in _users()
    assert call("GET", "/orgs/acme").body["usage"] == {"users": len(_users())}
    markers, _ = api_table().query(keys.org_partition("acme"), prefix=keys.SWEEP_PREFIX, limit=10, consistent=True)
    assert markers == []
    assert boto3.client("sqs").receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", []) == []


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # SQS exists on moto only
def test_a_user_given_back_in_the_cloud_has_his_tickets_swept_by_a_queued_job(table, monkeypatch, deletions_queue):
    # Given the race above in the cloud: u4 put by a second delivery that stopped, with a ticket
    # opened for him; the import's end gives him back
    create_org("acme")
    create_user("acme", "s0")
    tickets = []

    def second(import_id, _):
        _stops_after_its_put(monkeypatch, import_id)
        tickets.append(create_ticket("acme", "u4").body["ticket_id"])

    meanwhile = lambda: _succeeds(call("DELETE", "/orgs/acme/users/s0"))  # noqa: E731
    _a_second_delivery_runs_as_the_first_decides(monkeypatch, [_row(f"u{i}") for i in range(6)], meanwhile, second)
    assert "u4" not in _users()

    # Then his sweep is queued (not waited for within the job), and its marker kept for it
    sqs = boto3.client("sqs")
    found = sqs.receive_message(QueueUrl=deletions_queue, MaxNumberOfMessages=10)["Messages"]
    [sweep] = [m for m in found if json.loads(m["Body"]).get("user_id") == "u4"]  # (s0's delete queued one too)
    assert json.loads(sweep["Body"]) == {"kind": "ticket-sweep", "org_id": "acme", "user_id": "u4"}
    assert api_table().get(keys.sweep_key("acme", "u4"), consistent=True) is not None

    # And the job sweeps: no ticket nor marker of his is left
    assert deliver([sweep]) == {"batchItemFailures": []}
    assert api_table().get(keys.ticket_key("acme", tickets[0]), consistent=True) is None
    assert api_table().get(keys.sweep_key("acme", "u4"), consistent=True) is None
