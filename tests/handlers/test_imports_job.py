"""The user import's job off the request path (moto: Cognito and SQS): queued on the deletions
queue, its sign-ins created and a failed one retried, and a crashed or redelivered job continuing
where it stopped without creating anyone twice."""

import json
import math

import boto3
import pytest
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError
from botocore.exceptions import ClientError, EndpointConnectionError

from controlplane import config
from controlplane.dal import imports, keys, seats, stamps, tree
from controlplane.dal.directory import Directory
from controlplane.dal.table import api_table
from controlplane.logic import import_job
from controlplane.models import plans
from controlplane.models.errors import ServiceUnavailable
from tests.api import call, create_org, deliver, user_pool
from tests.events_support import status_changes_to_the_deletions_queue
from tests.handlers.test_org_units import create_unit

pytestmark = pytest.mark.parametrize("table", ["moto"], indirect=True)  # Cognito and SQS exist on moto only


@pytest.fixture
def cloud(table, monkeypatch):
    """A user pool and a deletions queue, and the org's status events on their way to it, as in the
    cloud; the sign-ins' pace lifted."""
    monkeypatch.setattr(import_job, "IMPORT_SIGNINS_PER_SECOND", math.inf)
    pool_id = user_pool(monkeypatch)
    monkeypatch.setenv("DELETIONS_QUEUE_URL", boto3.client("sqs").create_queue(QueueName="deletions")["QueueUrl"])
    config.reset()
    monkeypatch.setitem(globals(), "_relay", status_changes_to_the_deletions_queue(table, monkeypatch))
    create_org("acme", plan="enterprise")
    return pool_id


def _relay() -> None:
    """The status events written since the last call, to the deletions queue (set by ``cloud``)."""


def _queued() -> list[dict]:
    """The messages on the deletions queue, the status events written so far among them."""
    _relay()
    found = boto3.client("sqs").receive_message(QueueUrl=config.settings().deletions_queue_url, MaxNumberOfMessages=10)
    return found.get("Messages", [])


def _sign_ins(pool_id: str) -> list[str]:
    cognito, found, token = boto3.client("cognito-idp"), [], None
    while True:
        page = cognito.list_users(UserPoolId=pool_id, Limit=60, **({"PaginationToken": token} if token else {}))
        found += [user["Username"] for user in page["Users"]]
        token = page.get("PaginationToken")
        if not token:
            return sorted(found)


def _attribute(pool_id: str, user_id: str, name: str) -> str:
    """An attribute of acme's user's sign-in, as Cognito holds it (``sub``: its subject)."""
    attributes = boto3.client("cognito-idp").admin_get_user(UserPoolId=pool_id, Username=f"acme.{user_id}")
    return next(a["Value"] for a in attributes["UserAttributes"] if a["Name"] == name)


def _stored_subject(user_id: str) -> str:
    """The sign-in subject acme's user's item holds, which the authorizer checks tokens against."""
    return api_table().get(keys.user_key("acme", user_id), consistent=True)[stamps.SIGN_IN_SUBJECT]


def _dies_once_at(monkeypatch, owner, name: str, message: dict) -> None:
    """A delivery of ``message`` that dies as it first calls ``owner.name`` (a crash, not an error it
    answers), left for SQS to deliver again; later calls go through."""
    called = getattr(owner, name)

    def die_once(*args, **kwargs):
        monkeypatch.setattr(owner, name, called)
        raise ConnectionError("injected: the function died here")

    monkeypatch.setattr(owner, name, die_once)
    with pytest.raises(BatchProcessingError):
        deliver([message])


def _rows(count: int) -> list[dict]:
    return [{"user_id": f"user-{i:03d}", "name": "U", "email": f"u{i}@example.com"} for i in range(count)]


def _import(rows: list[dict]) -> dict:
    reply = call("POST", "/orgs/acme/user-imports", {"rows": rows})
    assert reply.status == 202, reply.body
    return reply.body


def _get(import_id: str) -> dict:
    return call("GET", f"/orgs/acme/user-imports/{import_id}").body


def test_the_request_only_stores_the_rows_and_queues_the_job_which_creates_users_and_sign_ins(cloud):
    started = _import(_rows(3))

    assert (started["status"], started["created"], started["pending"]) == ("running", 0, 3)
    [message] = _queued()
    assert json.loads(message["Body"]) == {"kind": "user-import", "org_id": "acme", "import_id": started["import_id"]}
    assert _sign_ins(cloud) == []

    assert deliver([message]) == {"batchItemFailures": []}

    done = _get(started["import_id"])
    assert (done["status"], done["created"], done["pending"]) == ("done", 3, 0)
    assert done["sign_ins"] == {"done": 3, "pending": 0, "failed": []}
    assert _sign_ins(cloud) == ["acme.user-000", "acme.user-001", "acme.user-002"]
    # each user's item keeps their sign-in's subject, which the authorizer checks tokens against
    for user_id in ("user-000", "user-001", "user-002"):
        assert _stored_subject(user_id) == _attribute(cloud, user_id, "sub")


def test_an_import_whose_job_cannot_be_queued_is_503_and_leaves_no_import_running_without_a_job(cloud, monkeypatch):
    # Given a queue that cannot be reached
    def unreachable(*args):
        raise EndpointConnectionError(endpoint_url="https://sqs.us-east-1.amazonaws.com")

    monkeypatch.setattr(import_job, "enqueue", unreachable)

    # When an import is sent
    reply = call("POST", "/orgs/acme/user-imports", {"rows": _rows(3)})

    # Then it is refused as an outage, and nothing of it is stored (no import stays running for good)
    assert reply.status == 503, reply.body
    found, _ = api_table().query(keys.org_partition("acme"), prefix=keys.IMPORT_PREFIX, limit=100, consistent=True)
    assert found == []


def test_a_job_that_crashed_after_its_users_went_in_continues_and_creates_nobody_twice(cloud, monkeypatch):
    # Given an import of 150 (two parts) whose first delivery dies right after the first part's
    # transaction, before it could write the part's progress
    started = _import(_rows(150))
    [message] = _queued()
    _dies_once_at(monkeypatch, imports, "advance", message)
    _, counter = seats.read(api_table(), "acme", consistent=True)
    assert counter is not None and counter[plans.USER_COUNT] == imports.PART_ROWS

    # When SQS delivers the message again
    assert deliver([message]) == {"batchItemFailures": []}

    # Then every row is a user once, counted once, with its sign-in
    done = _get(started["import_id"])
    assert (done["status"], done["created"], done["refused"]) == ("done", 150, [])
    users, _ = api_table().query(keys.org_partition("acme"), prefix=keys.USER_PREFIX, limit=1000, consistent=True)
    _, counter = seats.read(api_table(), "acme", consistent=True)
    assert counter is not None and counter[plans.USER_COUNT] == len(users) == 150
    assert len(_sign_ins(cloud)) == 150


def test_a_user_deleted_between_a_crashed_delivery_and_the_next_is_not_created_again(cloud, monkeypatch):
    # Given an import of 3 whose first delivery dies right after its part's transaction put the
    # users, before it wrote the part's decision; and an admin deletes user-001 in that gap
    started = _import(_rows(3))
    [message] = _queued()
    _dies_once_at(monkeypatch, imports, "advance", message)
    assert call("DELETE", "/orgs/acme/users/user-001").status == 204

    # When SQS delivers the message again
    assert deliver([message]) == {"batchItemFailures": []}

    # Then user-001 stays deleted (no user, no seat, no sign-in); the import counts it created, as it
    # would had the delete come after the decision
    done = _get(started["import_id"])
    assert (done["status"], done["created"], done["refused"]) == ("done", 3, [])
    users, _ = api_table().query(keys.org_partition("acme"), prefix=keys.USER_PREFIX, limit=100, consistent=True)
    assert sorted(user["user_id"] for user in users) == ["user-000", "user-002"]
    _, counter = seats.read(api_table(), "acme", consistent=True)
    assert counter is not None and counter[plans.USER_COUNT] == 2
    assert _sign_ins(cloud) == ["acme.user-000", "acme.user-002"]


def test_a_user_deleted_before_the_job_reaches_their_sign_in_gets_no_invitation(cloud, monkeypatch):
    # Given an import of 3 whose users are in (the part decided), and an admin who deletes user-001
    # before the job makes the sign-ins (paced at 10 a second, 10,000 take 17 minutes)
    started = _import(_rows(3))
    [message] = _queued()
    invited = []
    create = Directory.create

    def invites(self, org_id, user_id, email, role):
        invited.append(user_id)
        return create(self, org_id, user_id, email, role)

    def deleted_meanwhile(*args, **kwargs):
        assert call("DELETE", "/orgs/acme/users/user-001").status == 204
        return sign_in(*args, **kwargs)

    sign_in = import_job._sign_in
    monkeypatch.setattr(import_job, "_sign_in", deleted_meanwhile)
    monkeypatch.setattr(Directory, "create", invites)

    # When the job runs
    assert deliver([message]) == {"batchItemFailures": []}

    # Then Cognito was never asked to invite user-001 (AdminCreateUser e-mails a temporary password)
    assert invited == ["user-000", "user-002"]
    assert _sign_ins(cloud) == ["acme.user-000", "acme.user-002"]
    assert _get(started["import_id"])["status"] == "done"


def test_a_failed_sign_in_is_shown_with_why_and_retried_by_a_later_pass(cloud, monkeypatch):
    monkeypatch.setattr(import_job, "RETRY_SECONDS", 0)  # the queue's delay: a minute in the cloud
    started = _import(_rows(3))
    [message] = _queued()
    boto3.client("sqs").delete_message(
        QueueUrl=config.settings().deletions_queue_url, ReceiptHandle=message["ReceiptHandle"]
    )
    create = Directory.create

    def refuse_user_001(self, org_id, user_id, email, role):
        if user_id == "user-001":
            raise ClientError(
                {"Error": {"Code": "CodeDeliveryFailureException", "Message": "Email not sent"}}, "Create"
            )
        return create(self, org_id, user_id, email, role)

    with monkeypatch.context() as patch:
        patch.setattr(Directory, "create", refuse_user_001)
        assert deliver([message]) == {"batchItemFailures": []}

    # The user is in; their sign-in failed, shown with why, and a later pass is queued
    after_one = _get(started["import_id"])
    assert (after_one["status"], after_one["created"]) == ("running", 3)
    [failed] = after_one["sign_ins"]["failed"]
    assert (failed["user_id"], failed["attempts"]) == ("user-001", 1)
    assert "Email not sent" in failed["reason"]
    [retry] = _queued()

    assert deliver([retry]) == {"batchItemFailures": []}

    done = _get(started["import_id"])
    assert (done["status"], done["sign_ins"]) == ("done", {"done": 3, "pending": 0, "failed": []})
    assert "acme.user-001" in _sign_ins(cloud)


def test_an_address_cognito_will_not_take_is_the_rows_failed_sign_in_with_cognitos_words(cloud, monkeypatch):
    started = _import(_rows(2))
    [message] = _queued()
    client = config.directory().client
    create_user = client.admin_create_user

    def refuse_user_001(**request):
        if request["Username"] == "acme.user-001":
            raise ClientError({"Error": {"Code": "InvalidParameterException", "Message": "Invalid email"}}, "Create")
        return create_user(**request)

    monkeypatch.setattr(client, "admin_create_user", refuse_user_001)
    assert deliver([message]) == {"batchItemFailures": []}

    # Then the job goes on: the row's sign-in is listed as failed, with Cognito's words
    after = _get(started["import_id"])
    assert after["created"] == 2
    [failed] = after["sign_ins"]["failed"]
    assert failed["user_id"] == "user-001" and "refused this user: Invalid email" in failed["reason"]
    assert _sign_ins(cloud) == ["acme.user-000"]


def test_sign_ins_made_after_the_org_was_suspended_are_disabled(cloud):
    # Given an import whose users went in, and whose pass ran out of time before their sign-ins
    started = _import(_rows(2))
    _queued()  # the job's message: run by hand here
    budget = iter([math.inf])
    assert import_job.run("acme", started["import_id"], time_left=lambda: next(budget, 0.0)) == 0
    assert (_get(started["import_id"])["created"], _sign_ins(cloud)) == (2, [])

    # When the org is suspended, and the next pass makes the sign-ins
    assert call("PATCH", "/orgs/acme", {"status": "suspended", "suspension_reason": "Unpaid"}).status == 200
    assert import_job.run("acme", started["import_id"]) is None

    # Then they exist, disabled like every other sign-in of the org
    cognito = boto3.client("cognito-idp")
    found = [cognito.admin_get_user(UserPoolId=cloud, Username=name) for name in _sign_ins(cloud)]
    assert [user["Enabled"] for user in found] == [False, False]
    assert _get(started["import_id"])["status"] == "done"


def test_sign_ins_made_while_the_org_is_reactivated_are_enabled_like_the_others(cloud, monkeypatch):
    from controlplane.logic import signins

    # Given a suspended org whose import's users went in before their sign-ins were made
    monkeypatch.setattr(signins, "CALLS_PER_SECOND", math.inf)
    started = _import(_rows(2))
    _queued()
    budget = iter([math.inf])
    assert import_job.run("acme", started["import_id"], time_left=lambda: next(budget, 0.0)) == 0
    assert call("PATCH", "/orgs/acme", {"status": "suspended", "suspension_reason": "Unpaid"}).status == 200
    assert deliver(_queued()) == {"batchItemFailures": []}  # the job that disables the org's sign-ins
    create, reactivated = Directory.create, []

    def reactivated_meanwhile(self, *args):
        if not reactivated:  # the org is reactivated, and its job enables the sign-ins there are, as the pass goes
            reactivated.append(call("PATCH", "/orgs/acme", {"status": "active"}).status)
            assert deliver(_queued()) == {"batchItemFailures": []}
        return create(self, *args)

    monkeypatch.setattr(Directory, "create", reactivated_meanwhile)

    # When the pass makes the sign-ins
    assert import_job.run("acme", started["import_id"]) is None

    # Then they are enabled, as the org is active
    cognito = boto3.client("cognito-idp")
    assert reactivated == [200]
    assert [cognito.admin_get_user(UserPoolId=cloud, Username=name)["Enabled"] for name in _sign_ins(cloud)] == [
        True,
        True,
    ]


def test_a_left_over_sign_in_of_an_imported_users_name_is_replaced_and_its_tokens_never_pass(cloud):
    # Given a sign-in acme.user-000 left over from before (no user item holds its subject)
    cognito = boto3.client("cognito-idp")
    left = cognito.admin_create_user(UserPoolId=cloud, Username="acme.user-000")["User"]["Attributes"]
    left_sub = next(a["Value"] for a in left if a["Name"] == "sub")
    started = _import(_rows(1))
    [message] = _queued()

    # When the import's job makes that user's sign-in
    assert deliver([message]) == {"batchItemFailures": []}

    # Then the left-over is replaced, and the item keeps the new sign-in's subject
    assert _get(started["import_id"])["sign_ins"] == {"done": 1, "pending": 0, "failed": []}
    sub = _attribute(cloud, "user-000", "sub")
    assert sub != left_sub
    assert _stored_subject("user-000") == sub


def test_a_sign_in_replaced_while_another_delivery_stores_the_old_ones_subject_is_the_one_the_item_keeps(
    cloud, monkeypatch
):
    # Given an import's user, in the table without a sign-in yet, and another delivery of its job
    # that has just made the sign-in but not stored its subject
    started = _import(_rows(1))
    [message] = _queued()
    budget = iter([math.inf])
    import_job.run("acme", started["import_id"], time_left=lambda: next(budget, 0.0))
    other = config.directory().create("acme", "user-000", "u0@example.com", "member")
    real_delete = Directory.delete

    def other_stores_its_subject_first(self, org_id, user_id):
        monkeypatch.setattr(Directory, "delete", real_delete)
        api_table().mark(keys.user_key("acme", "user-000"), stamps.SIGN_IN_SUBJECT, other)
        return real_delete(self, org_id, user_id)

    # When this delivery finds that sign-in (no item holds its subject yet) and replaces it, while the
    # other delivery stores the subject it made
    monkeypatch.setattr(Directory, "delete", other_stores_its_subject_first)
    assert deliver([message]) == {"batchItemFailures": []}

    # Then the item keeps the subject of the sign-in that exists: the user can sign in
    live = _attribute(cloud, "user-000", "sub")
    assert live != other
    assert _stored_subject("user-000") == live


def test_a_job_whose_unit_is_being_moved_stops_for_the_queue_and_a_later_delivery_places_its_users(cloud):
    # Given an import into eng, and a move that has marked eng by the time the job runs
    assert create_unit("eng").status == 201
    started = _import([{**row, "unit": "eng"} for row in _rows(2)])
    eng = keys.unit_key("acme", "eng")
    api_table().mark(eng, tree.MOVING, "a-move")

    # When the job runs, its transaction's check of eng refuses: it stops, and places no one
    with pytest.raises(ServiceUnavailable):
        import_job.run("acme", started["import_id"])
    assert _get(started["import_id"])["created"] == 0

    # Then once the move is done, the next delivery places both at eng's path
    tree.rewrite(api_table(), eng, {tree.MOVING: "a-move"}, {}, removed=(tree.MOVING,))
    assert import_job.run("acme", started["import_id"]) is None
    assert _get(started["import_id"])["created"] == 2
    users = call("GET", "/orgs/acme/units/eng/users").body["items"]
    assert [u["user_id"] for u in users] == ["user-000", "user-001"]


def test_a_sign_in_made_as_the_orgs_delete_passes_its_user_is_not_left_behind_once_the_org_is_gone(cloud, monkeypatch):
    from controlplane.dal import batches
    from controlplane.logic import cascade

    # Given an import whose users went in, and the org's delete that starts as the job makes the
    # first sign-in: the delete marks the org and removes that user's sign-in (none yet) just before
    _import(_rows(1))
    [message] = _queued()
    create, marks = Directory.create, []

    def delete_passes_the_user_first(self, org_id, user_id, *args):
        if not marks:
            marks.append(stamps.now())
            api_table().mark(keys.org_key("acme"), stamps.DELETING, marks[0])
            cascade.remove_sign_in(org_id, user_id)
        return create(self, org_id, user_id, *args)

    monkeypatch.setattr(Directory, "create", delete_passes_the_user_first)
    assert deliver([message]) == {"batchItemFailures": []}

    # When the delete goes on: that user's item, then the rest of the org
    batches.delete_all(api_table(), [keys.user_key("acme", "user-000")])
    assert cascade.continue_delete("acme", marks[0])
    assert api_table().get(keys.org_key("acme"), consistent=True) is None

    # Then nothing of the org is left: no sign-in either
    assert _sign_ins(cloud) == []


def test_a_sign_in_whose_user_went_meanwhile_goes_only_while_it_is_still_the_one_the_job_made(cloud, monkeypatch):
    from controlplane.dal.table import Table

    # Given an import of one user, whose job makes the sign-in; then, before it stores its subject,
    # an admin deletes the user (sign-in and item) and creates a user of that id again
    started = _import(_rows(1))
    [message] = _queued()
    mark, recreated = Table.mark, []

    def deleted_and_created_again(self, key, attribute, *args, **options):
        if recreated or key != keys.user_key("acme", "user-000"):
            return mark(self, key, attribute, *args, **options)
        recreated.append(True)
        assert call("DELETE", "/orgs/acme/users/user-000").status == 204
        try:
            return mark(self, key, attribute, *args, **options)  # the job's: the user is gone
        finally:
            reply = call("POST", "/orgs/acme/users", {"user_id": "user-000", "name": "U", "email": "new@example.com"})
            assert reply.status == 201, reply.body

    monkeypatch.setattr(Table, "mark", deleted_and_created_again)

    # When the job finds the user gone as it stores the subject
    assert deliver([message]) == {"batchItemFailures": []}
    assert recreated and _get(started["import_id"])["status"] == "done"

    # Then the new user keeps the sign-in their create made, whose subject their item holds
    assert _sign_ins(cloud) == ["acme.user-000"]
    assert _stored_subject("user-000") == _attribute(cloud, "user-000", "sub")


def test_a_sign_in_whose_user_is_created_again_before_the_job_stores_its_subject_is_not_the_new_users(
    cloud, monkeypatch
):
    from controlplane.dal.table import Table

    # Given an import of one user, whose job makes the sign-in; then, before it stores its subject,
    # an admin deletes the user and creates a user of that id again, and the job's store of its
    # subject reaches the new user's item before that create stores its own
    started = _import(_rows(1))
    [message] = _queued()
    mark, job = Table.mark, {}

    def overtaken(self, key, attribute, *args, **options):
        if key != keys.user_key("acme", "user-000"):
            return mark(self, key, attribute, *args, **options)
        if not job:  # the job's: the new user comes now, and this store lands within their create
            job["call"] = (self, key, attribute, *args)
            job["options"] = options
            assert call("DELETE", "/orgs/acme/users/user-000").status == 204
            reply = call("POST", "/orgs/acme/users", {"user_id": "user-000", "name": "U", "email": "new@example.com"})
            assert reply.status == 201, reply.body
            if "refused" in job:
                raise job["refused"]
            return job["answer"]
        try:  # the create's: the job's lands first
            job["answer"] = mark(*job["call"], **job["options"])
        except Exception as refused:
            job["refused"] = refused
        return mark(self, key, attribute, *args, **options)

    monkeypatch.setattr(Table, "mark", overtaken)

    # When the job goes on
    assert deliver([message]) == {"batchItemFailures": []}
    assert job and _get(started["import_id"])["status"] == "done"

    # Then the new user's item holds the subject of the sign-in their create made (the authorizer
    # lets them in), the only sign-in of that name
    assert _sign_ins(cloud) == ["acme.user-000"]
    assert _stored_subject("user-000") == _attribute(cloud, "user-000", "sub")


def test_a_new_users_sign_in_not_stored_yet_is_not_replaced_by_the_job_as_a_left_over(cloud, monkeypatch):
    from controlplane.dal.table import Table

    # Given an import of one user; before its job makes the sign-in, an admin deletes the user and
    # creates a user of that id again, whose create has made their sign-in but not stored its
    # subject yet when the job meets that sign-in
    started = _import(_rows(1))
    [message] = _queued()
    new_sign_in, mark, job = import_job._new_sign_in, Table.mark, {}

    def meets_the_new_users_sign_in(self, key, attribute, *args, **options):
        if "args" in job and "done" not in job and key == keys.user_key("acme", "user-000"):
            job["done"] = True
            try:
                job["answer"] = new_sign_in(*job["args"])
            except Exception as failed:
                job["failed"] = failed
        return mark(self, key, attribute, *args, **options)

    def overtaken(*args):
        if "args" in job:
            return new_sign_in(*args)
        job["args"] = args
        assert call("DELETE", "/orgs/acme/users/user-000").status == 204
        reply = call("POST", "/orgs/acme/users", {"user_id": "user-000", "name": "U", "email": "new@example.com"})
        assert reply.status == 201, reply.body
        if "failed" in job:
            raise job["failed"]
        return job["answer"]

    monkeypatch.setattr(import_job, "_new_sign_in", overtaken)
    monkeypatch.setattr(Table, "mark", meets_the_new_users_sign_in)

    # When the job goes on
    assert deliver([message]) == {"batchItemFailures": []}
    assert job.get("done") and _get(started["import_id"])["status"] == "done"

    # Then the new user keeps the sign-in their create made (their e-mail, not the row's), whose
    # subject their item holds
    assert _sign_ins(cloud) == ["acme.user-000"]
    assert _attribute(cloud, "user-000", "email") == "new@example.com"
    assert _stored_subject("user-000") == _attribute(cloud, "user-000", "sub")


def test_a_get_of_a_running_import_in_the_cloud_runs_no_job_the_queue_does(cloud):
    # Given an import whose job is queued, not delivered yet
    started = _import(_rows(2))

    # When it is read
    reply = call("GET", f"/orgs/acme/user-imports/{started['import_id']}")

    # Then the read runs nothing: the import is as the request left it, no user, no sign-in
    assert reply.status == 200
    assert (reply.body["status"], reply.body["created"], reply.body["pending"]) == ("running", 0, 2)
    found, _ = api_table().query(keys.org_partition("acme"), prefix=keys.USER_PREFIX, limit=10, consistent=True)
    assert found == [] and _sign_ins(cloud) == []
    assert len(_queued()) == 1


def test_a_sign_in_cognito_throttles_is_a_failure_to_retry_not_a_sign_in_made(cloud, monkeypatch):
    # Given an import of two whose job meets Cognito's rate limit for one of them (botocore's retries spent)
    monkeypatch.setattr(import_job, "RETRY_SECONDS", 0)
    started = _import(_rows(2))
    [message] = _queued()
    boto3.client("sqs").delete_message(
        QueueUrl=config.settings().deletions_queue_url, ReceiptHandle=message["ReceiptHandle"]
    )
    client = config.directory().client
    create_user = client.admin_create_user

    def throttle_user_001(**request):
        if request["Username"] == "acme.user-001":
            raise ClientError({"Error": {"Code": "TooManyRequestsException", "Message": "Rate exceeded"}}, "Create")
        return create_user(**request)

    with monkeypatch.context() as patch:
        patch.setattr(client, "admin_create_user", throttle_user_001)
        assert deliver([message]) == {"batchItemFailures": []}

    # Then that sign-in is listed as failed, to be tried again, and not counted as made
    after = _get(started["import_id"])
    assert after["status"] == "running"
    assert after["sign_ins"]["done"] == 1
    [failed] = after["sign_ins"]["failed"]
    assert (failed["user_id"], failed["attempts"]) == ("user-001", 1)
    assert "busy" in failed["reason"]
    assert _sign_ins(cloud) == ["acme.user-000"]

    # And the pass queued after it makes it
    [retry] = _queued()
    assert deliver([retry]) == {"batchItemFailures": []}
    assert _get(started["import_id"])["sign_ins"] == {"done": 2, "pending": 0, "failed": []}
    assert _stored_subject("user-001") == _attribute(cloud, "user-001", "sub")


def test_a_sign_in_the_job_made_and_stored_before_it_died_is_kept_by_the_next_delivery(cloud, monkeypatch):
    # Given an import whose job made a user's sign-in and stored its subject on the item, then died
    # before it wrote the part's progress
    from controlplane.logic import signins

    started = _import(_rows(1))
    [message] = _queued()
    _dies_once_at(monkeypatch, signins, "as_its_org_is", message)
    made = _attribute(cloud, "user-000", "sub")
    assert _stored_subject("user-000") == made
    assert _get(started["import_id"])["sign_ins"]["pending"] == 1

    # When SQS delivers the message again
    assert deliver([message]) == {"batchItemFailures": []}

    # Then the sign-in is the one made (not replaced: no second invitation, the item's subject holds)
    assert _get(started["import_id"])["sign_ins"] == {"done": 1, "pending": 0, "failed": []}
    assert _sign_ins(cloud) == ["acme.user-000"]
    assert _attribute(cloud, "user-000", "sub") == made == _stored_subject("user-000")


def test_an_email_corrected_after_the_jobs_sign_in_was_made_is_kept_when_a_redelivery_replaces_it(cloud, monkeypatch):
    # Given an import whose job made user-000's sign-in, then died before storing its subject on the item
    from controlplane.dal.table import Table

    started = _import(_rows(1))
    [message] = _queued()
    _dies_once_at(monkeypatch, Table, "mark", message)

    # And an admin corrects their e-mail and makes them an admin meanwhile (their sign-in exists: allowed)
    fixed = call("PATCH", "/orgs/acme/users/user-000", {"email": "fixed@example.com", "role": "admin"})
    assert fixed.status == 200, fixed.body

    # When SQS delivers the message again, and the job replaces the sign-in whose subject no item holds
    assert deliver([message]) == {"batchItemFailures": []}

    # Then the new sign-in (and its invitation) has the user's e-mail and role as the item has them,
    # not the row's from before the correction
    assert _get(started["import_id"])["sign_ins"] == {"done": 1, "pending": 0, "failed": []}
    assert _stored_subject("user-000") == _attribute(cloud, "user-000", "sub")
    assert (_attribute(cloud, "user-000", "email"), _attribute(cloud, "user-000", "custom:role")) == (
        "fixed@example.com",
        "admin",
    )
