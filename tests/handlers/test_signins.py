"""Suspension disables an org's Cognito sign-ins off the request path, and reactivation enables them
(moto: Cognito, SQS and EventBridge). The status's lifecycle event starts the job (the table's stream,
the events function, a rule on the bus to the deletions queue, as in the cloud); the job goes through
the deletions queue one page of users per message."""

import json
import math

import boto3
import pytest
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError
from botocore.exceptions import ClientError

from controlplane import config
from controlplane.dal import batches, keys, stamps
from controlplane.dal.codec import to_dynamo
from controlplane.dal.table import api_table
from controlplane.logic import signins
from controlplane.models.errors import ServiceUnavailable
from tests.api import call, create_org, create_user, deliver, user_pool
from tests.events_support import status_changes_to_the_deletions_queue

pytestmark = pytest.mark.parametrize("table", ["moto"], indirect=True)  # Cognito and SQS exist on moto only

SUSPEND = {"status": "suspended", "suspension_reason": "Unpaid"}


@pytest.fixture
def cognito_calls(table, monkeypatch) -> list[str]:
    """A user pool and a deletions queue, and the org's status events on their way to it, as in the
    cloud; the Cognito operations sent, in order. The job's pace is lifted: the tests count calls,
    never wait for them."""
    monkeypatch.setattr(signins, "CALLS_PER_SECOND", math.inf)
    user_pool(monkeypatch)
    monkeypatch.setenv("DELETIONS_QUEUE_URL", boto3.client("sqs").create_queue(QueueName="deletions")["QueueUrl"])
    config.reset()
    monkeypatch.setitem(globals(), "_relay", status_changes_to_the_deletions_queue(table, monkeypatch))
    calls: list[str] = []
    config.directory().client.meta.events.register(
        "before-send.cognito-idp", lambda event_name, **_: calls.append(event_name.rsplit(".", 1)[-1])
    )
    create_org("acme")
    return calls


def _bulk_users(org_id: str, count: int) -> list[str]:
    """``count`` users with their sign-ins, written directly (the API would take a minute for 1,000), as
    whole as the API writes them: the events function reads their stream records."""
    cognito, pool_id = boto3.client("cognito-idp"), config.directory().pool
    ids = [f"user{i:04d}" for i in range(count)]
    users = [
        stamps.new_item(
            keys.user_keys(org_id, u),
            keys.USER,
            {"org_id": org_id, "user_id": u, "name": u, "email": f"{u}@example.com", "role": "member"},
        )
        for u in ids
    ]
    batches.write_all(api_table(), [{"PutRequest": {"Item": to_dynamo(user)}} for user in users])
    for user_id in ids:
        cognito.admin_create_user(UserPoolId=pool_id, Username=f"{org_id}.{user_id}")
    return ids


def _enabled(org_id: str) -> dict[str, bool]:
    """Each sign-in of the org: enabled or not (read with a client of the test's own)."""
    cognito, pool_id = boto3.client("cognito-idp"), config.directory().pool
    found, token = {}, None
    while True:
        page = cognito.list_users(UserPoolId=pool_id, Limit=60, **({"PaginationToken": token} if token else {}))
        found |= {u["Username"]: u["Enabled"] for u in page["Users"] if u["Username"].startswith(f"{org_id}.")}
        token = page.get("PaginationToken")
        if not token:
            return found


def _relay() -> None:
    """The status events written since the last call, to the deletions queue (set by ``cognito_calls``)."""


def _queued() -> list[dict]:
    """The messages on the deletions queue, the status events written so far among them."""
    _relay()
    sqs = boto3.client("sqs")
    found = sqs.receive_message(QueueUrl=config.settings().deletions_queue_url, MaxNumberOfMessages=10)
    return found.get("Messages", [])


def _drain() -> int:
    """Deliver queued messages to the organizations function until the queue is empty; how many."""
    delivered = 0
    while messages := _queued():
        for message in messages:
            assert deliver([message]) == {"batchItemFailures": []}
            boto3.client("sqs").delete_message(
                QueueUrl=config.settings().deletions_queue_url, ReceiptHandle=message["ReceiptHandle"]
            )
            delivered += 1
    return delivered


def test_suspending_answers_before_any_sign_in_changes_and_its_event_queues_the_job(cognito_calls):
    for user_id in ("alice", "bob"):
        create_user("acme", user_id)
    cognito_calls.clear()

    reply = call("PATCH", "/orgs/acme", SUSPEND)

    assert reply.status == 200
    assert cognito_calls == []
    assert set(_enabled("acme").values()) == {True}
    [message] = _queued()
    event = json.loads(message["Body"])
    assert (event["source"], event["detail-type"], event["detail"]["org_id"]) == (
        "controlplane",
        "Organization Suspended",
        "acme",
    )
    assert signins.job(event) == {"kind": "sign-ins", "org_id": "acme", "enabled": False, "after": None}


@pytest.mark.parametrize("status", ["suspended", "active"])
def test_a_status_change_whose_request_cannot_reach_sqs_still_brings_every_sign_in_in_line(
    cognito_calls, monkeypatch, status
):
    # Given acme with two users (for a reactivation: suspended first, its job done), and SQS refusing
    # every send of the organizations function during the PATCH
    for user_id in ("alice", "bob"):
        create_user("acme", user_id)
    if status == "active":
        call("PATCH", "/orgs/acme", SUSPEND)
        assert _drain() == 1 and set(_enabled("acme").values()) == {False}
    body = SUSPEND if status == "suspended" else {"status": "active"}

    def unavailable(**_):
        error = {"Error": {"Code": "ServiceUnavailable", "Message": "injected"}}
        raise ClientError({**error, "ResponseMetadata": {"HTTPStatusCode": 503}}, "SendMessage")

    with monkeypatch.context() as patched:
        patched.setattr(config.sqs(), "send_message", unavailable)
        reply = call("PATCH", "/orgs/acme", body)

    # Then the status is written and answered: the request queues nothing, so no 503 after the write
    # (a client retrying with its If-Match would get a 412, read the new status and never resend)
    assert reply.status == 200, reply.body
    assert reply.body["status"] == status

    # When the status's lifecycle event reaches the deletions queue and the organizations function
    assert _drain() == 1

    # Then every sign-in follows the status
    assert _enabled("acme") == {"acme.alice": status == "active", "acme.bob": status == "active"}


def test_a_suspension_repeated_with_a_new_reason_starts_no_job_and_the_sign_ins_stay_disabled(cognito_calls):
    # Given acme suspended, its job done
    create_user("acme", "alice")
    call("PATCH", "/orgs/acme", SUSPEND)
    assert _drain() == 1
    cognito_calls.clear()

    # When it is suspended again, with a new reason
    reply = call("PATCH", "/orgs/acme", {"status": "suspended", "suspension_reason": "Still unpaid"})

    # Then the status did not change, so no transition is sent and no job runs: none is needed
    assert reply.status == 200 and reply.body["suspension_reason"] == "Still unpaid"
    assert _drain() == 0 and cognito_calls == []
    assert _enabled("acme") == {"acme.alice": False}


def test_the_job_disables_and_signs_out_every_user_and_reactivation_enables_them(cognito_calls):
    for user_id in ("alice", "bob"):
        create_user("acme", user_id)
    call("PATCH", "/orgs/acme", SUSPEND)
    cognito_calls.clear()

    assert _drain() == 1
    assert _enabled("acme") == {"acme.alice": False, "acme.bob": False}
    assert cognito_calls == ["AdminDisableUser", "AdminUserGlobalSignOut"] * 2

    cognito_calls.clear()
    call("PATCH", "/orgs/acme", {"status": "active"})
    assert _drain() == 1
    assert _enabled("acme") == {"acme.alice": True, "acme.bob": True}
    assert cognito_calls == ["AdminEnableUser"] * 2


def test_an_org_of_1000_users_is_suspended_one_page_per_message_and_leaves_other_orgs_alone(cognito_calls):
    users = _bulk_users("acme", 1000)
    create_org("bolt")
    create_user("bolt", "zed")
    call("PATCH", "/orgs/acme", SUSPEND)
    cognito_calls.clear()

    delivered = _drain()

    assert delivered == math.ceil(len(users) / signins.PAGE)
    enabled = _enabled("acme")
    assert len(enabled) == 1000 and not any(enabled.values())
    assert cognito_calls.count("AdminDisableUser") == cognito_calls.count("AdminUserGlobalSignOut") == 1000
    assert _enabled("bolt") == {"bolt.zed": True}


def test_a_job_that_failed_half_way_resumes_from_its_message_and_finishes(cognito_calls, monkeypatch):
    _bulk_users("acme", 150)
    call("PATCH", "/orgs/acme", SUSPEND)
    [message] = _queued()
    client = config.directory().client
    disable, done = client.admin_disable_user, []

    def throttled_after_30(**params):
        if len(done) == 30:
            raise ClientError({"Error": {"Code": "TooManyRequestsException", "Message": "slow down"}}, "Disable")
        done.append(params["Username"])
        return disable(**params)

    # When the first delivery is throttled (after botocore's own retries) at its 31st user: a batch
    # whose every record failed fails the invocation, and SQS keeps the message
    with monkeypatch.context() as patch:
        patch.setattr(client, "admin_disable_user", throttled_after_30)
        with pytest.raises(BatchProcessingError):
            deliver([message])
    assert sum(not enabled for enabled in _enabled("acme").values()) == 30

    # Then SQS delivers the same message again: it redoes its page from the start, and the rest follows
    assert deliver([message]) == {"batchItemFailures": []}
    assert _drain() == 1  # the second page, queued by the redelivery
    assert not any(_enabled("acme").values())


def test_a_cognito_outage_during_the_job_keeps_its_message_and_the_redelivery_finishes(cognito_calls, monkeypatch):
    # Given acme suspended with two users, and Cognito failing on its side (5xx) on every disable
    for user_id in ("alice", "bob"):
        create_user("acme", user_id)
    call("PATCH", "/orgs/acme", SUSPEND)
    [message] = _queued()
    client = config.directory().client

    def failing(**_):
        error = {"Error": {"Code": "InternalErrorException", "Message": "injected"}}
        raise ClientError({**error, "ResponseMetadata": {"HTTPStatusCode": 500}}, "AdminDisableUser")

    # When the job's message is delivered: the failure is not taken for "the sign-in is gone", so
    # the invocation fails and SQS keeps the message
    with monkeypatch.context() as patch:
        patch.setattr(client, "admin_disable_user", failing)
        with pytest.raises(BatchProcessingError):
            deliver([message])
    assert set(_enabled("acme").values()) == {True}

    # Then its redelivery disables both
    assert deliver([message]) == {"batchItemFailures": []}
    assert set(_enabled("acme").values()) == {False}


def test_a_suspension_superseded_by_reactivation_stops_and_the_users_stay_enabled(cognito_calls):
    create_user("acme", "alice")
    call("PATCH", "/orgs/acme", SUSPEND)
    call("PATCH", "/orgs/acme", {"status": "active"})
    cognito_calls.clear()

    assert _drain() == 2

    assert cognito_calls == ["AdminEnableUser"]  # the disable job saw the org active and did nothing
    assert _enabled("acme") == {"acme.alice": True}


def test_a_reactivation_during_a_suspensions_page_leaves_no_user_disabled(cognito_calls, monkeypatch):
    for user_id in ("alice", "bob", "carol"):
        create_user("acme", user_id)
    call("PATCH", "/orgs/acme", SUSPEND)
    [suspension] = _queued()
    directory = config.directory()
    disable = directory.disable

    def reactivated_meanwhile(org_id: str, user_id: str) -> bool:
        done = disable(org_id, user_id)
        if user_id == "alice":  # another consumer: the operator reactivates, and the new job runs to its end
            assert call("PATCH", "/orgs/acme", {"status": "active"}).status == 200
            assert _drain() == 1
        return done

    # When the suspension's page goes on after alice while the reactivation's job passes every user
    monkeypatch.setattr(directory, "disable", reactivated_meanwhile)
    signins.resume(signins.job(json.loads(suspension["Body"])), lambda: math.inf)

    # Then the org is active and no one is locked out
    assert _enabled("acme") == {"acme.alice": True, "acme.bob": True, "acme.carol": True}


def test_the_job_reads_the_orgs_users_strongly_consistent(cognito_calls):
    # Given an org suspended, and every Query its job sends, recorded
    create_org("acme")
    create_user("acme", "alice")
    assert call("PATCH", "/orgs/acme", SUSPEND).status == 200
    queries: list[dict] = []
    config.dynamodb().meta.events.register(
        "provide-client-params.dynamodb.Query", lambda params, **_: queries.append(params)
    )

    # When the job runs
    _drain()

    # Then its pages of users are consistent reads: an eventually consistent one may miss a user
    # created just before the suspension, whose sign-in would stay enabled in a suspended org
    pages = [q for q in queries if "IndexName" not in q]
    assert pages
    assert [q["KeyConditionExpression"] for q in pages if not q.get("ConsistentRead")] == []
    assert _enabled("acme") == {"acme.alice": False}


def test_a_sign_in_deleted_meanwhile_is_skipped(cognito_calls):
    for user_id in ("alice", "bob"):
        create_user("acme", user_id)
    boto3.client("cognito-idp").admin_delete_user(UserPoolId=config.directory().pool, Username="acme.alice")
    call("PATCH", "/orgs/acme", SUSPEND)

    assert _drain() == 1
    assert _enabled("acme") == {"acme.bob": False}


def test_without_a_queue_the_job_runs_within_the_request(cognito_calls, monkeypatch):
    create_user("acme", "alice")
    monkeypatch.delenv("DELETIONS_QUEUE_URL")
    config.reset()

    assert call("PATCH", "/orgs/acme", SUSPEND).status == 200

    assert _enabled("acme") == {"acme.alice": False}


def test_a_patch_without_a_status_starts_no_job(cognito_calls):
    create_user("acme", "alice")
    cognito_calls.clear()

    call("PATCH", "/orgs/acme", {"name": "Acme 2"})

    assert _queued() == [] and cognito_calls == []


def _suspended_in_the_table(org_id: str) -> None:
    """The org suspended as a PATCH's write leaves it, without the request around it (so from
    within another request's step, as a concurrent PATCH would)."""
    api_table().client.update_item(
        TableName=api_table().name,
        Key=to_dynamo(keys.org_key(org_id)),
        UpdateExpression="SET #status = :suspended, suspension_reason = :why",
        ExpressionAttributeNames={"#status": "status"},
        ExpressionAttributeValues={":suspended": {"S": "suspended"}, ":why": {"S": "Unpaid"}},
    )


def test_a_user_created_while_the_org_is_suspended_gets_a_disabled_sign_in(cognito_calls, monkeypatch):
    # Given a create that the table took while acme was active; before its sign-in is made, acme is
    # suspended and the suspension's job passes every user (bob's sign-in does not exist yet)
    directory = config.directory()
    make = directory.create

    def suspended_meanwhile(org_id: str, user_id: str, email: str, role: str) -> str:
        _suspended_in_the_table("acme")
        signins.resume({"kind": "sign-ins", "org_id": "acme", "enabled": False, "after": None}, lambda: math.inf)
        return make(org_id, user_id, email, role)

    monkeypatch.setattr(directory, "create", suspended_meanwhile)

    # When the create makes bob's sign-in
    assert create_user("acme", "bob").status == 201

    # Then bob cannot sign in while acme is suspended
    assert _enabled("acme") == {"acme.bob": False}


@pytest.mark.parametrize("delete_fails_too", [False, True])
def test_a_create_whose_sign_in_cannot_follow_the_suspension_leaves_nothing(
    cognito_calls, monkeypatch, delete_fails_too
):
    # Given a create whose sign-in is made after acme was suspended (and its job passed bob), and
    # Cognito throttling the disable that would follow the suspension (and, maybe, the delete of the
    # sign-in that undoes the create: the same rate category)
    directory = config.directory()
    make = directory.create

    def suspended_meanwhile(org_id: str, user_id: str, email: str, role: str) -> str:
        _suspended_in_the_table("acme")
        return make(org_id, user_id, email, role)

    def throttled(org_id: str, user_id: str) -> bool:
        raise ServiceUnavailable("The sign-in directory is busy; retry later")

    # When bob is created
    with monkeypatch.context() as patched:
        patched.setattr(directory, "create", suspended_meanwhile)
        patched.setattr(directory, "disable", throttled)
        if delete_fails_too:
            patched.setattr(directory, "delete", throttled)
        reply = create_user("acme", "bob")

    # Then the answer is a 503 to retry, and no bob: no item, so no token of a sign-in left over
    # passes the authorizer, and the next create of bob replaces it
    assert reply.status == 503, reply.body
    assert call("GET", "/orgs/acme/users/bob").status == 404
    assert _enabled("acme") == ({"acme.bob": True} if delete_fails_too else {})


def test_a_create_that_finds_its_org_gone_never_removes_the_sign_in_of_the_next_org_of_that_id(
    cognito_calls, monkeypatch
):
    from controlplane.dal.table import Table
    from controlplane.logic import cascade

    # Given a create of alice in acme, whose org's whole delete runs right after alice's sign-in is made
    # and stored; then, between its read of the org (gone) and its removal of the sign-in, acme is
    # created again, with a new alice (Cognito's retries of a throttled call can hold that gap open)
    as_its_org_is, get, steps = signins.as_its_org_is, Table.get, []

    def org_deleted_first(*args):
        if not steps:
            assert cascade.delete_org("acme")
            steps.append("deleted")
        return as_its_org_is(*args)

    def recreated_after_the_read(self, key, *args, **kwargs):
        found = get(self, key, *args, **kwargs)
        if found is None and key == keys.org_key("acme") and steps == ["deleted"]:
            steps.append("created again")
            assert create_org("acme").status == 201
            assert create_user("acme", "alice").status == 201
        return found

    monkeypatch.setattr(signins, "as_its_org_is", org_deleted_first)
    monkeypatch.setattr(Table, "get", recreated_after_the_read)
    assert create_user("acme", "alice").status == 201
    assert steps == ["deleted", "created again"]

    # Then the new org's alice keeps the sign-in her item names
    stored = api_table().get(keys.user_key("acme", "alice"), consistent=True)
    assert config.directory().subject("acme", "alice") == stored[stamps.SIGN_IN_SUBJECT]


def test_without_a_queue_a_job_of_several_pages_runs_them_all_within_the_request(cognito_calls, monkeypatch):
    # Given an org of five users, read two a page, and no queue
    monkeypatch.setattr(signins, "PAGE", 2)
    for user_id in ("alice", "bob", "carol", "dave", "erin"):
        create_user("acme", user_id)
    monkeypatch.delenv("DELETIONS_QUEUE_URL")
    config.reset()

    # When the org is suspended
    assert call("PATCH", "/orgs/acme", SUSPEND).status == 200

    # Then every page was done: no sign-in is left enabled
    assert set(_enabled("acme").values()) == {False} and len(_enabled("acme")) == 5


def test_a_job_out_of_time_half_way_through_its_page_queues_the_rest_after_the_last_user_done(
    cognito_calls, monkeypatch
):
    # Given a suspension's job, and a delivery with time for one user only
    for user_id in ("alice", "bob", "carol"):
        create_user("acme", user_id)
    call("PATCH", "/orgs/acme", SUSPEND)
    [message] = _queued()
    budget = iter([math.inf])

    # When it runs
    signins.resume(signins.job(json.loads(message["Body"])), lambda: next(budget, 0.0))

    # Then alice is done, and the rest is queued to go on after her
    boto3.client("sqs").delete_message(
        QueueUrl=config.settings().deletions_queue_url, ReceiptHandle=message["ReceiptHandle"]
    )
    [rest] = _queued()
    assert json.loads(rest["Body"]) == {"kind": "sign-ins", "org_id": "acme", "enabled": False, "after": "alice"}
    assert _enabled("acme") == {"acme.alice": False, "acme.bob": True, "acme.carol": True}
    assert deliver([rest]) == {"batchItemFailures": []}
    assert _enabled("acme") == {"acme.alice": False, "acme.bob": False, "acme.carol": False}


def test_a_job_out_of_time_before_its_first_user_is_queued_again_not_dropped(cognito_calls, monkeypatch):
    # Given a reactivation's job (every sign-in disabled by the suspension before it), and a delivery
    # that starts with too little time for any user (a slow read of the org, say)
    for user_id in ("alice", "bob"):
        create_user("acme", user_id)
    call("PATCH", "/orgs/acme", SUSPEND)
    _drain()
    call("PATCH", "/orgs/acme", {"status": "active"})
    [message] = _queued()
    boto3.client("sqs").delete_message(
        QueueUrl=config.settings().deletions_queue_url, ReceiptHandle=message["ReceiptHandle"]
    )

    # When it runs out of time before its first user
    signins.resume(signins.job(json.loads(message["Body"])), lambda: 0.0)

    # Then the job is queued again from the start, not dropped: the active org's users are not left locked out
    [again] = _queued()
    assert json.loads(again["Body"]) == {"kind": "sign-ins", "org_id": "acme", "enabled": True, "after": None}
    assert deliver([again]) == {"batchItemFailures": []}
    assert _enabled("acme") == {"acme.alice": True, "acme.bob": True}


def test_a_job_whose_org_is_deleted_during_its_page_stops_without_an_error(cognito_calls, monkeypatch):
    # Given a suspension's job, and the org's delete, which runs to its end after the job's first user
    for user_id in ("alice", "bob"):
        create_user("acme", user_id)
    call("PATCH", "/orgs/acme", SUSPEND)
    [message] = _queued()
    boto3.client("sqs").delete_message(
        QueueUrl=config.settings().deletions_queue_url, ReceiptHandle=message["ReceiptHandle"]
    )
    directory = config.directory()
    disable, deleted = directory.disable, []

    def deleted_meanwhile(org_id: str, user_id: str) -> None:
        disable(org_id, user_id)
        if not deleted:
            deleted.append(call("DELETE", "/orgs/acme").status)

    monkeypatch.setattr(directory, "disable", deleted_meanwhile)

    # When the job goes on, then it stops there: no error for SQS to retry, no call for bob (gone)
    cognito_calls.clear()
    assert deliver([message]) == {"batchItemFailures": []}
    assert deleted in ([204], [202])
    assert "AdminDisableUser" not in cognito_calls[cognito_calls.index("AdminDeleteUser") :]
    assert _enabled("acme") == {}


def test_a_new_sign_in_whose_orgs_status_flips_at_each_change_stops_after_three_and_the_orgs_jobs_settle_it(
    cognito_calls, monkeypatch
):
    # Given an operator who flips acme's status (each a PATCH, with its job queued) as soon as bob's
    # new sign-in is made, and again after every change of it
    directory = config.directory()
    make, disable, enable, flips = directory.create, directory.disable, directory.enable, []

    def flip() -> None:
        flips.append(call("PATCH", "/orgs/acme", SUSPEND if len(flips) % 2 == 0 else {"status": "active"}).status)

    def made_then_flipped(*args):
        subject = make(*args)
        flip()
        return subject

    def flipped_after(change):
        def changed(*args):
            change(*args)
            flip()

        return changed

    # When bob is created, the create follows the status three times (not for ever) and answers
    with monkeypatch.context() as patched:
        patched.setattr(directory, "create", made_then_flipped)
        patched.setattr(directory, "disable", flipped_after(disable))
        patched.setattr(directory, "enable", flipped_after(enable))
        assert create_user("acme", "bob").status == 201
    assert flips == [200] * 4

    # Then the org's own jobs bring the sign-in in line with its last status
    assert _drain() == 4
    assert call("GET", "/orgs/acme").body["status"] == "active"
    assert _enabled("acme") == {"acme.bob": True}
