"""Idempotent creates: same key and body replays the first answer; the key is scoped to the caller."""

import time

import pytest
from botocore.exceptions import ClientError, ReadTimeoutError

from controlplane import config
from controlplane.dal import imports as import_items
from controlplane.logic import cascade, imports, organizations, tickets, users
from local import tokens
from local.apigw import LambdaContext
from local.seed import fetch
from tests.api import OPERATOR, admin, call, create_org, create_user

ACME_ADMIN = admin("acme", "root")
TICKETS = "/orgs/acme/users/alice/tickets"


def _records(table: str, partition: str) -> list[dict]:
    """The idempotency records stored in a partition."""
    query = config.dynamodb().query
    return query(
        TableName=table, KeyConditionExpression="PK = :pk", ExpressionAttributeValues={":pk": {"S": partition}}
    )["Items"]


def _post(path: str, body: dict, key: str = "key-1", caller: dict = ACME_ADMIN):
    return call("POST", path, body, headers={"Idempotency-Key": [key]}, caller=caller)


@pytest.fixture
def acme(table):
    create_org("acme")
    create_org("bolt")
    create_user("acme", "alice")


def test_replay_returns_the_first_response_and_creates_nothing(acme, dynamodb_calls):
    first = _post(TICKETS, {"subject": "Help"})
    dynamodb_calls.clear()

    replay = _post(TICKETS, {"subject": "Help"})

    assert replay.status == first.status == 201
    assert replay.body == first.body
    assert replay.headers["Location"] == first.headers["Location"]
    assert "TransactWriteItems" not in dynamodb_calls
    assert len(call("GET", TICKETS).body["items"]) == 1


def test_a_refused_create_keeps_no_record_so_its_retry_runs_again(acme):
    # docs/API.md: a refused first attempt keeps no record. Its retry while the cause stands is
    # refused again; once the cause is gone, the same key and body create, and that is what replays.
    body = {"user_id": "alice", "name": "A", "email": "a@x.io"}
    first = _post("/orgs/acme/users", body)
    again = _post("/orgs/acme/users", body)
    assert (first.status, first.error_code) == (again.status, again.error_code) == (409, "already_exists")
    assert first.body["error"]["request_id"] != again.body["error"]["request_id"]  # answered anew, not replayed

    assert call("DELETE", "/orgs/acme/users/alice").status == 204
    retried = _post("/orgs/acme/users", body)
    replayed = _post("/orgs/acme/users", body)

    assert retried.status == 201
    assert replayed.status == 201 and replayed.body == retried.body


def test_same_key_with_another_body_returns_422_and_creates_nothing(acme):
    _post(TICKETS, {"subject": "Help"})

    reply = _post(TICKETS, {"subject": "Other"})

    assert reply.status == 422
    assert reply.error_code == "idempotency_key_reused"
    assert len(call("GET", TICKETS).body["items"]) == 1


def test_two_orgs_with_the_same_key_get_their_own_responses(acme):
    create_user("bolt", "bob")
    a = _post(TICKETS, {"subject": "Help"}, key="shared")

    b = _post("/orgs/bolt/users/bob/tickets", {"subject": "Help"}, key="shared", caller=admin("bolt", "boss"))

    assert (a.status, b.status) == (201, 201)
    assert a.body["org_id"] == "acme"
    assert b.body["org_id"] == "bolt"


def test_two_callers_in_one_org_with_the_same_key_get_their_own_responses(acme):
    a = _post(TICKETS, {"subject": "Help"}, key="shared")

    b = _post(TICKETS, {"subject": "Help"}, key="shared", caller=admin("acme", "other-admin"))

    assert a.body["ticket_id"] != b.body["ticket_id"]


def test_an_in_flight_duplicate_from_the_same_caller_returns_409(acme, monkeypatch):
    replies = []
    real_create = organizations.create_org

    def create_while_a_retry_arrives(body, caller):
        replies.append(call("POST", "/orgs", body.model_dump(), headers={"Idempotency-Key": ["k"]}))
        return real_create(body, caller)

    monkeypatch.setattr(organizations, "create_org", create_while_a_retry_arrives)

    first = call("POST", "/orgs", {"org_id": "newco", "name": "NewCo"}, headers={"Idempotency-Key": ["k"]})

    assert first.status == 201
    assert replies[0].status == 409
    assert replies[0].error_code == "conflict"


@pytest.mark.parametrize("key", ["", "a" * 256, "has space", "ünï"])
def test_malformed_idempotency_key_returns_422(acme, key):
    reply = _post(TICKETS, {"subject": "Help"}, key=key)

    assert reply.status == 422


def test_idempotency_records_expire_after_24_hours_and_stay_in_the_tenants_partition(acme, table):
    _post(TICKETS, {"subject": "Help"})

    records = _records(table, "IDEMPOTENCY#acme")
    assert len(records) == 1
    created = int(records[0]["expires_at"]["N"]) - 24 * 3600
    assert abs(created - time.time()) < 60


def test_an_org_named_operators_shares_no_partition_with_org_creations(table):
    # Given an org creation with a key, and an org whose id is "operators"
    assert call("POST", "/orgs", {"org_id": "zeta", "name": "Zeta"}, headers={"Idempotency-Key": ["k-1"]}).status == 201
    create_org("operators")

    # When that org is deleted (its cascade clears its own idempotency records)
    assert call("DELETE", "/orgs/operators").status == 204

    # Then the org creation's record is still there: a retry replays it
    records = _records(table, "IDEMPOTENCY#OPERATORS")
    assert len(records) == 1


def _as_alice_over_http(gateway: str, path: str, body: dict, key: str) -> tuple[int, dict]:
    """Alice of acme as she is now (her token's sub the one on her item) posts through the gateway,
    so the authorizer checks her token."""
    headers = {"Authorization": f"Bearer {tokens.for_user('acme', 'alice')}", "Idempotency-Key": key}
    status, _, answer = fetch(f"{gateway}{path}", "POST", body, headers)
    return status, answer


def test_a_record_saved_as_its_org_was_deleted_is_never_replayed_to_the_next_org_of_that_id(
    table, gateway, monkeypatch
):
    # Given acme's admin alice adding a user with a key, and acme deleted between Powertools'
    # in-progress record and its save of the answer: the cascade removes the first, the save (an
    # UpdateItem) puts the record back, and it outlives the org. (A user's create is not sealed in
    # its transaction, as its sign-in comes after it: ``dal.sealing``.)
    create_org("acme")
    create_user("acme", "alice", role="admin")
    added = users.create_user
    body = {"user_id": "bob", "email": "bob@example.com", "name": "Bob"}

    def add_as_the_org_goes(*args, **kwargs):
        user = added(*args, **kwargs)
        assert cascade.delete_org("acme")
        return user

    with monkeypatch.context() as patch:
        patch.setattr(users, "create_user", add_as_the_org_goes)
        first = _as_alice_over_http(gateway, "/orgs/acme/users", body, "k")
    assert first[0] == 201, first[1]
    assert len(_records(table, "IDEMPOTENCY#acme")) == 1

    # When acme and its admin alice are created again, and the new alice sends the same key and body
    create_org("acme")
    create_user("acme", "alice", role="admin")
    again = _as_alice_over_http(gateway, "/orgs/acme/users", body, "k")

    # Then bob is made, not the first answer replayed: the record is keyed by the first alice's
    # sign-in subject, and the authorizer admits no token of it to the new org
    assert again[0] == 201, again[1]
    assert call("GET", "/orgs/acme/users/bob").status == 200


@pytest.mark.parametrize("code", ["ProvisionedThroughputExceededException", "ThrottlingException"])
def test_a_throttled_idempotency_record_is_503_with_retry_after_and_creates_nothing(acme, monkeypatch, code):
    # Given DynamoDB throttling the write of the idempotency record, past botocore's retries
    def throttled(**_):
        raise ClientError({"Error": {"Code": code, "Message": "injected"}}, "PutItem")

    monkeypatch.setattr(config.dynamodb(), "put_item", throttled)

    # When a ticket is opened with a key
    reply = _post(TICKETS, {"subject": "Help"})

    # Then the answer says to retry later, as any throttled request's does, and nothing was created
    assert reply.status == 503, reply.body
    assert reply.error_code == "service_unavailable"
    assert reply.headers["Retry-After"] == "1"
    monkeypatch.undo()
    assert call("GET", TICKETS).body["items"] == []


@pytest.mark.parametrize("code", ["ProvisionedThroughputExceededException", "InternalServerError"])
def test_a_create_whose_success_record_is_not_saved_answers_its_201(acme, monkeypatch, code):
    # Given DynamoDB throttling (or failing) Powertools' UpdateItem of the record's success, after a
    # user's own transaction went through (a user's record is saved after it: ``dal.sealing``)
    def refused(**_):
        status = 500 if code == "InternalServerError" else 400
        raise ClientError(
            {"Error": {"Code": code, "Message": "injected"}, "ResponseMetadata": {"HTTPStatusCode": status}},
            "UpdateItem",
        )

    monkeypatch.setattr(config.dynamodb(), "update_item", refused)

    # When a user is added with a key
    reply = _post("/orgs/acme/users", {"user_id": "bob", "email": "bob@example.com", "name": "Bob"})
    monkeypatch.undo()

    # Then the answer is the user made, not a 503 inviting a retry that would be refused as existing
    assert reply.status == 201, reply.body
    assert call("GET", "/orgs/acme/users/bob").body["created_at"] == reply.body["created_at"]


def test_a_success_record_refused_for_another_reason_stays_a_500(acme, monkeypatch):
    # Given the function not allowed to update its records (a misconfiguration, not an outage)
    def denied(**_):
        error = {"Code": "AccessDeniedException", "Message": "injected"}
        raise ClientError({"Error": error, "ResponseMetadata": {"HTTPStatusCode": 400}}, "UpdateItem")

    monkeypatch.setattr(config.dynamodb(), "update_item", denied)

    # When a user (whose record Powertools completes after the create) is added with a key
    reply = _post("/orgs/acme/users", {"user_id": "bob", "email": "bob@example.com", "name": "Bob"})

    # Then it is seen as the fault it is, not a 201 that quietly turns every key off
    assert reply.status == 500, reply.body
    assert reply.error_code == "internal_error"


IMPORTS = "/orgs/acme/user-imports"


def _import_rows(*user_ids: str) -> dict:
    return {"rows": [{"user_id": u, "name": "U", "email": f"{u}@example.com"} for u in user_ids]}


def test_a_user_import_sent_again_with_its_key_is_the_same_import_and_creates_no_second_one(acme, table):
    # Given an import sent with a key (one of its rows refused in the request: a bad id)
    body = _import_rows("bea", "cid", "not#valid")
    first = _post(IMPORTS, body)

    # When it is sent again with the same key and body, then with the same key and another body
    replay = _post(IMPORTS, body)
    reused = _post(IMPORTS, _import_rows("dee"))

    # Then the replay is the same import (202, its id and Location), read as it is now; no second
    # import was started (its rows would all be refused as already_exists); the other body is 422
    assert (first.status, replay.status) == (202, 202), replay.body
    assert replay.body["import_id"] == first.body["import_id"]
    assert replay.headers["Location"] == first.headers["Location"]
    assert replay.body == call("GET", f"{IMPORTS}/{first.body['import_id']}").body
    assert (replay.body["created"], [r["row"] for r in replay.body["refused"]]) == (2, [2])
    assert (reused.status, reused.error_code) == (422, "idempotency_key_reused")
    started = [item["SK"]["S"] for item in _records(table, "ORG#acme") if item["SK"]["S"].startswith("USER_IMPORT#")]
    assert [key for key in started if "#PART#" not in key] == [f"USER_IMPORT#{first.body['import_id']}"]
    # and its record keeps the import's id, not its body (which may hold 10,000 refused rows)
    [record] = [r for r in _records(table, "IDEMPOTENCY#acme") if "not#valid" not in str(r)]
    assert first.body["import_id"] in str(record) and "bea@example.com" not in str(record)


def test_a_user_import_sent_again_while_the_first_is_still_running_is_409_conflict(acme, monkeypatch):
    # Given an import sent with a key, and the same one sent again while the first is being started
    replies = []
    real_start = imports.start_import

    def start_while_a_retry_arrives(org_id, body, caller):
        replies.append(_post(IMPORTS, body.model_dump(mode="json", exclude_unset=True)))
        return real_start(org_id, body, caller)

    monkeypatch.setattr(imports, "start_import", start_while_a_retry_arrives)

    # When the first is answered
    first = _post(IMPORTS, _import_rows("bea"))

    # Then it is 202 and the second 409 conflict, the Idempotency-Key in flight, as the OpenAPI
    # document's 409 of the route shows
    assert first.status == 202, first.body
    assert (replies[0].status, replies[0].error_code) == (409, "conflict")


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # SQS exists on moto only
def test_a_user_import_whose_read_back_is_throttled_answers_its_202_so_a_retry_starts_no_second_one(
    acme, table, monkeypatch, deletions_queue
):
    # Given the import's request in the cloud, and DynamoDB throttling its read of the import once
    # the import is stored and its job queued (past botocore's retries)
    load, reads = import_items.load, []

    def throttled_once(*args, **kwargs):
        reads.append(args)
        if len(reads) == 1:
            raise ClientError({"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "x"}}, "Query")
        return load(*args, **kwargs)

    monkeypatch.setattr(import_items, "load", throttled_once)

    # When it is sent with a key, then again with it (as the client does after a 503)
    first = _post(IMPORTS, _import_rows("bea"))
    again = _post(IMPORTS, _import_rows("bea"))

    # Then the first is its 202 (the import is stored and will run: a 503 would hide it), and the
    # second is the same import, not a second one whose rows the first also has
    assert first.status == 202, first.body
    assert (first.body["status"], first.body["pending"]) == ("running", 1)
    assert again.body["import_id"] == first.body["import_id"]
    started = [item["SK"]["S"] for item in _records(table, "ORG#acme") if item["SK"]["S"].startswith("USER_IMPORT#")]
    assert [key for key in started if "#PART#" not in key] == [f"USER_IMPORT#{first.body['import_id']}"]


class _Killed(BaseException):
    """Lambda ending the function at its timeout: nothing after it runs, no handler catches it."""


def _killed_after(write: str, monkeypatch, path: str, body: dict, key: str, caller: dict = ACME_ADMIN) -> None:
    """A create with ``key`` whose ``write`` (a DynamoDB client method) goes through, then Lambda
    ends it (its time up) before anything else runs: an in-progress record is left so, expiring at
    the invocation's end."""
    client = config.dynamodb()
    real = getattr(client, write)

    def then_out_of_time(**kwargs):
        real(**kwargs)
        raise _Killed

    with monkeypatch.context() as patch:
        patch.setattr(client, write, then_out_of_time)
        patch.setattr(LambdaContext, "get_remaining_time_in_millis", lambda _: 50)
        with pytest.raises(_Killed):
            _post(path, body, key, caller)
    time.sleep(0.1)  # the invocation's time, which its in-progress record was given, is over


def test_a_ticket_ended_after_its_write_is_replayed_to_its_resend_not_opened_again(acme, monkeypatch):
    # Given a ticket opened with a key, Lambda ending its function just after the transaction that
    # wrote it (API Gateway answers 502, and cpctl sends it again with the key)
    _killed_after("transact_write_items", monkeypatch, TICKETS, {"subject": "Help"}, "k")
    made = call("GET", TICKETS).body["items"]

    # When it is sent again with the same key and body
    again = _post(TICKETS, {"subject": "Help"}, "k")

    # Then the first answer is replayed: the transaction that opened the ticket completed the
    # record with it, so there is one ticket, and the answer is the first attempt's
    assert again.status == 201, again.body
    assert [t["ticket_id"] for t in call("GET", TICKETS).body["items"]] == [made[0]["ticket_id"]]
    assert again.body == made[0]
    assert again.headers["Location"].endswith(f"/orgs/acme/tickets/{made[0]['ticket_id']}")
    assert again.headers["ETag"] == '"1"'


@pytest.mark.parametrize(
    ("path", "body", "caller", "read"),
    [
        ("/orgs", {"org_id": "newco", "name": "NewCo"}, OPERATOR, "/orgs/newco"),
        ("/orgs/acme/units", {"unit_id": "eng", "name": "Engineering"}, ACME_ADMIN, "/orgs/acme/units/eng"),
    ],
)
def test_an_org_or_unit_ended_after_its_write_is_201_to_its_resend(acme, monkeypatch, path, body, caller, read):
    # Given an org (or a unit) created with a key, Lambda ending its function after its write
    _killed_after("transact_write_items", monkeypatch, path, body, "k", caller)

    # When it is sent again with the same key and body
    again = _post(path, body, "k", caller)

    # Then its answer is the first attempt's 201, not a 409 for what that attempt made
    assert again.status == 201, again.body
    assert again.headers["Location"].endswith(read)
    assert call("GET", read).status == 200


def test_a_user_ended_after_its_write_is_409_already_exists_to_its_resend(acme, monkeypatch):
    # Given a user created with a key, Lambda ending its function after the user was written, as
    # Powertools saves the record's answer (a user's create is not sealed in its transaction: its
    # sign-in comes after it, and may undo it)
    body = {"user_id": "bob", "email": "bob@example.com", "name": "Bob"}
    with monkeypatch.context() as patch:
        patch.setattr(config.dynamodb(), "update_item", lambda **_: (_ for _ in ()).throw(_Killed()))
        patch.setattr(LambdaContext, "get_remaining_time_in_millis", lambda _: 50)
        with pytest.raises(_Killed):
            _post("/orgs/acme/users", body, "k")
    time.sleep(0.1)

    # When it is sent again with the same key and body
    again = _post("/orgs/acme/users", body, "k")

    # Then the limit docs/API.md states: the create runs again and is refused, the user being there
    assert (again.status, again.error_code) == (409, "already_exists"), again.body
    assert call("GET", "/orgs/acme/users/bob").status == 200


def test_an_attempt_whose_record_a_resend_took_over_makes_nothing_and_leaves_the_record(acme, monkeypatch, table):
    # Given a ticket opened with a key whose attempt is slow: its in-progress time (50 ms) runs out
    # before its write, and the client's resend with the key takes the record over and opens one
    opened, resent = tickets.create_ticket, []

    def slow(*args, **kwargs):
        if not resent:
            resent.append(None)
            time.sleep(0.1)
            resent[0] = _post(TICKETS, {"subject": "Help"}, "k")
        return opened(*args, **kwargs)

    monkeypatch.setattr(LambdaContext, "get_remaining_time_in_millis", lambda _: 50)
    monkeypatch.setattr(tickets, "create_ticket", slow)

    # When the first attempt comes to its write
    first = _post(TICKETS, {"subject": "Help"}, "k")

    # Then it is refused as the request in progress, and opens nothing: one ticket, the resend's,
    # whose record is kept (not deleted as a failed attempt's), so a third send replays it
    assert resent[0].status == 201, resent[0].body
    assert (first.status, first.error_code) == (409, "conflict"), first.body
    ticket_id = resent[0].body["ticket_id"]
    assert [t["ticket_id"] for t in call("GET", TICKETS).body["items"]] == [ticket_id]
    monkeypatch.setattr(tickets, "create_ticket", opened)
    assert _post(TICKETS, {"subject": "Help"}, "k").body["ticket_id"] == ticket_id


def test_a_resend_whose_record_is_in_the_first_attempts_transaction_is_409(acme, monkeypatch):
    # Given DynamoDB refusing the record's put as the item is in another request's transaction (the
    # first attempt's, completing the record as it opens the ticket)
    def in_a_transaction(**_):
        error = {"Code": "TransactionConflictException", "Message": "injected"}
        raise ClientError({"Error": error, "ResponseMetadata": {"HTTPStatusCode": 400}}, "PutItem")

    monkeypatch.setattr(config.dynamodb(), "put_item", in_a_transaction)

    # When the resend arrives
    reply = _post(TICKETS, {"subject": "Help"}, "k")

    # Then it is told the request is in progress (a retry later replays it), not a 500
    assert (reply.status, reply.error_code) == (409, "conflict"), reply.body
    monkeypatch.undo()
    assert call("GET", TICKETS).body["items"] == []


def test_an_org_whose_record_a_resend_took_over_is_409_already_exists_and_the_record_stays(table, monkeypatch):
    # Given an org created with a key whose attempt is slow: its in-progress time runs out before its
    # write, and the client's resend with the key takes the record over and creates the org
    created, resent = organizations.create_org, []
    body = {"org_id": "newco", "name": "NewCo"}

    def slow(*args, **kwargs):
        if not resent:
            resent.append(None)
            time.sleep(0.1)
            resent[0] = _post("/orgs", body, "k", OPERATOR)
        return created(*args, **kwargs)

    monkeypatch.setattr(LambdaContext, "get_remaining_time_in_millis", lambda _: 50)
    monkeypatch.setattr(organizations, "create_org", slow)

    # When the first attempt comes to its write
    first = _post("/orgs", body, "k", OPERATOR)

    # Then it is refused for the org the resend made, and the resend's record stays: a third send
    # replays its 201
    assert resent[0].status == 201, resent[0].body
    assert (first.status, first.error_code) == (409, "already_exists"), first.body
    monkeypatch.setattr(organizations, "create_org", created)
    assert _post("/orgs", body, "k", OPERATOR).status == 201


def test_a_ticket_whose_write_went_through_but_whose_answer_was_lost_is_replayed_to_its_resend(acme, monkeypatch):
    # Given a ticket opened with a key whose transaction DynamoDB applied, but whose answer never
    # came back (botocore's attempts all timed out reading it): the function answers 503, which
    # docs/API.md says to retry with the same key
    client = config.dynamodb()
    real = client.transact_write_items

    def applied_then_answer_lost(**kwargs):
        real(**kwargs)
        raise ReadTimeoutError(endpoint_url="https://dynamodb.eu-west-1.amazonaws.com")

    with monkeypatch.context() as patch:
        patch.setattr(client, "transact_write_items", applied_then_answer_lost)
        first = _post(TICKETS, {"subject": "Help"}, "k")
    assert first.status == 503, first.body
    [made] = call("GET", TICKETS).body["items"]

    # When it is sent again with the same key and body
    again = _post(TICKETS, {"subject": "Help"}, "k")

    # Then the transaction's own completion of the record answers it: the first ticket, not a second
    assert again.status == 201, again.body
    assert again.body == made
    assert [t["ticket_id"] for t in call("GET", TICKETS).body["items"]] == [made["ticket_id"]]
