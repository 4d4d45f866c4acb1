"""Permission drift: every AWS request a handler really sends is granted to its function.

Each route is called on moto (DynamoDB, Cognito, SQS) the way the cloud would call it: creates with
and without an ``Idempotency-Key``, replays and failed creates, If-Match, role changes and the
cascade deletes. Every request the boto3 clients build is recorded as the IAM action it needs and
looked up in the synthesized template's policies for that route's function.
"""

import fnmatch
import json
import math
import os
from fnmatch import fnmatchcase
from urllib.parse import urlsplit

import boto3
import pytest

from authorizer import handler
from controlplane import config
from controlplane.dal import api_keys
from controlplane.http.routes import ORGANIZATIONS, ROUTES
from controlplane.logic import cascade, signins
from local.apigw import run
from tests.api import call, create_org, create_ticket, create_user, deliver
from tests.events_support import status_changes_to_the_deletions_queue

TENANT_KEYS = "tenantkeys"

pytestmark = pytest.mark.parametrize("table", ["moto"], indirect=True)  # Cognito and SQS exist on moto only

# A transaction is authorized per action inside it; it has no IAM action of its own.
_TRANSACT_ACTIONS = {
    "ConditionCheck": "ConditionCheckItem",
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
}


def _key(key: str) -> dict:
    return {"headers": {"Idempotency-Key": [key]}}


def _if_match(version: int) -> dict:
    return {"headers": {"If-Match": [f'"{version}"']}}


# Per route: the requests that take each of its code paths, as (path, body, options, expected status).
_ROW = {"user_id": "zoe", "name": "Zoe", "email": "zoe@example.com"}
REQUESTS = {
    ("POST", "/orgs"): [
        ("/orgs", {"org_id": "newco", "name": "NewCo"}, {}, 201),
        ("/orgs", {"org_id": "keyco", "name": "KeyCo"}, _key("org-1"), 201),
        ("/orgs", {"org_id": "keyco", "name": "KeyCo"}, _key("org-1"), 201),  # the replay
        ("/orgs", {"org_id": "acme", "name": "Acme"}, _key("org-2"), 409),  # a failed create drops its record
    ],
    ("GET", "/orgs"): [("/orgs", None, {}, 200)],
    ("GET", "/orgs/{org_id}"): [
        ("/orgs/acme", None, {}, 200),
        ("/orgs/acme", None, {"query": {"include": "users"}}, 200),
    ],
    ("PATCH", "/orgs/{org_id}"): [
        ("/orgs/acme", {"name": "Acme 2"}, _if_match(1), 200),
        ("/orgs/acme", {"status": "suspended", "suspension_reason": "Unpaid"}, {}, 200),  # its event starts the job
    ],
    ("DELETE", "/orgs/{org_id}"): [("/orgs/acme", None, _if_match(1), 204)],  # users, tickets, records
    ("GET", "/plans"): [("/plans", None, {}, 200)],  # the catalogue, from code: no AWS request at all
    ("POST", "/orgs/{org_id}/users"): [
        ("/orgs/acme/users", {"user_id": "carol", "name": "Carol", "email": "carol@example.com"}, {}, 201),
        ("/orgs/acme/users", {"user_id": "dave", "name": "Dave", "email": "dave@example.com"}, _key("user-1"), 201),
        ("/orgs/acme/users", {"user_id": "dave", "name": "Dave", "email": "dave@example.com"}, _key("user-1"), 201),
        ("/orgs/ghost/users", {"user_id": "erin", "name": "Erin", "email": "erin@example.com"}, _key("user-2"), 404),
        ("/orgs/acme/users", {"user_id": "fay", "name": "Fay", "email": "fay@example.com", "unit": "eng"}, {}, 201),
    ],
    ("GET", "/orgs/{org_id}/activity"): [("/orgs/acme/activity", None, {}, 200)],
    ("POST", "/orgs/{org_id}/user-imports"): [("/orgs/acme/user-imports", {"rows": [_ROW]}, {}, 202)],  # queues its job
    ("GET", "/orgs/{org_id}/user-imports/{import_id}"): [("/orgs/acme/user-imports/{import_id}", None, {}, 200)],
    ("GET", "/orgs/{org_id}/users"): [("/orgs/acme/users", None, {}, 200)],
    ("GET", "/orgs/{org_id}/users/{user_id}"): [
        ("/orgs/acme/users/alice", None, {}, 200),
        ("/orgs/acme/users/alice", None, {"query": {"include": "tickets"}}, 200),
    ],
    ("PATCH", "/orgs/{org_id}/users/{user_id}"): [
        ("/orgs/acme/users/alice", {"role": "admin"}, {}, 200),  # the sign-in first
        ("/orgs/acme/users/alice", {"role": "member"}, _if_match(1), 412),  # and its role put back
        ("/orgs/acme/users/alice", {"unit": "ops"}, {}, 200),  # a move, checked against its unit
        ("/orgs/acme/users/alice", {"unit": "root"}, {}, 200),
    ],
    ("DELETE", "/orgs/{org_id}/users/{user_id}"): [("/orgs/acme/users/alice", None, _if_match(1), 204)],
    ("POST", "/orgs/{org_id}/users/{user_id}/tickets"): [
        ("/orgs/acme/users/alice/tickets", {"subject": "Help"}, {}, 201),
        ("/orgs/acme/users/alice/tickets", {"subject": "Again"}, _key("ticket-1"), 201),
        ("/orgs/acme/users/alice/tickets", {"subject": "Again"}, _key("ticket-1"), 201),
        ("/orgs/acme/users/ghost/tickets", {"subject": "Lost"}, _key("ticket-2"), 404),
    ],
    ("GET", "/orgs/{org_id}/users/{user_id}/tickets"): [("/orgs/acme/users/alice/tickets", None, {}, 200)],
    ("GET", "/orgs/{org_id}/tickets/{ticket_id}"): [("/orgs/acme/tickets/{ticket_id}", None, {}, 200)],
    ("PATCH", "/orgs/{org_id}/tickets/{ticket_id}"): [
        ("/orgs/acme/tickets/{ticket_id}", {"status": "pending"}, _if_match(1), 200)
    ],
    ("DELETE", "/orgs/{org_id}/tickets/{ticket_id}"): [("/orgs/acme/tickets/{ticket_id}", None, _if_match(1), 204)],
    ("POST", "/orgs/{org_id}/units"): [
        ("/orgs/acme/units", {"unit_id": "web", "name": "Web", "parent_id": "eng"}, {}, 201),
        ("/orgs/acme/units", {"unit_id": "db", "name": "DB"}, _key("unit-1"), 201),
    ],
    ("GET", "/orgs/{org_id}/units"): [
        ("/orgs/acme/units", None, {}, 200),
        ("/orgs/acme/units", None, {"query": {"under": "eng"}}, 200),
    ],
    ("GET", "/orgs/{org_id}/units/{unit_id}"): [("/orgs/acme/units/eng", None, {}, 200)],
    ("PATCH", "/orgs/{org_id}/units/{unit_id}"): [
        ("/orgs/acme/units/eng", {"name": "Engineering"}, _if_match(1), 200),
        ("/orgs/acme/units/eng", {"parent_id": "ops"}, {}, 200),  # a move, within the request
    ],
    ("DELETE", "/orgs/{org_id}/units/{unit_id}"): [
        ("/orgs/acme/units/eng", None, {}, 409),  # bob is in it
        ("/orgs/acme/units/ops", None, _if_match(1), 204),
    ],
    ("GET", "/orgs/{org_id}/units/{unit_id}/users"): [("/orgs/acme/units/eng/users", None, {}, 200)],
}


@pytest.fixture
def aws_requests(table, monkeypatch) -> list[str]:
    """The IAM action of every request boto3 builds from here on, by any client the code creates;
    with a user pool and a deletions queue on moto, as in the cloud."""
    session = boto3.Session()
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", session)
    recorded: list[str] = []

    def record(params: dict, model, **_) -> None:
        if model.name == "TransactWriteItems":
            recorded.extend(f"dynamodb:{_TRANSACT_ACTIONS[next(iter(item))]}" for item in params["TransactItems"])
        else:
            recorded.append(f"{model.service_model.signing_name}:{model.name}")

    session.events.register("before-parameter-build", record)
    pool_id = session.client("cognito-idp").create_user_pool(
        PoolName="users",
        Schema=[{"Name": n, "AttributeDataType": "String", "Mutable": True} for n in ("org_id", "user_id", "role")],
    )["UserPool"]["Id"]
    monkeypatch.setenv("USER_POOL_ID", pool_id)
    monkeypatch.setenv("DELETIONS_QUEUE_URL", session.client("sqs").create_queue(QueueName="deletions")["QueueUrl"])
    config.reset()  # every client, the queue's too, must come from the recording session
    yield recorded
    config.reset()


@pytest.fixture
def seeded(aws_requests) -> dict:
    """An org with two units (eng, ops), two users (one with an idempotency record, in eng) and
    tickets, then a clean record."""
    create_org("acme")
    for unit_id in ("eng", "ops"):
        call("POST", "/orgs/acme/units", {"unit_id": unit_id, "name": unit_id.title()})
    create_user("acme", "alice")
    bob = {"user_id": "bob", "name": "Bob", "email": "bob@example.com", "unit": "eng"}
    call("POST", "/orgs/acme/users", bob, **_key("seed"))
    ticket_id = create_ticket("acme", "alice").body["ticket_id"]
    create_ticket("acme", "bob")
    import_id = call("POST", "/orgs/acme/user-imports", {"rows": [_ROW]}).body["import_id"]
    sqs, queue_url = boto3.client("sqs"), config.settings().deletions_queue_url
    for queued in sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", []):
        sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=queued["ReceiptHandle"])  # the import's job
    aws_requests.clear()
    return {"ticket_id": ticket_id, "import_id": import_id}


@pytest.fixture
def granted(dev, functions) -> dict[str, set[str]]:
    """Every action each function's role may take, from the synthesized dev template."""
    found = {}
    for name, logical_id in functions.items():
        role = {"Ref": dev["Resources"][logical_id]["Properties"]["Role"]["Fn::GetAtt"][0]}
        statements = [
            statement
            for r in dev["Resources"].values()
            if r["Type"] == "AWS::IAM::Policy" and role in r["Properties"]["Roles"]
            for statement in r["Properties"]["PolicyDocument"]["Statement"]
        ]
        found[name] = {a for s in statements for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])}
    return found


@pytest.mark.parametrize("route", ROUTES, ids=str)
def test_every_request_a_route_sends_is_granted_to_its_function(seeded, aws_requests, granted, route):
    # Given the requests that take each code path of the route
    requests = REQUESTS[(route.method, route.path)]

    # When calling it the way API Gateway does, as an operator
    for path, body, options, status in requests:
        reply = call(route.method, path.format(**seeded), body, **options)
        assert reply.status == status, (path, reply.body)

    # Then the route talked to AWS (all but the plan catalogue), and its function may make every one of them
    assert bool(aws_requests) == (route.path != "/plans")
    assert set(aws_requests) - granted[route.function] == set()


def test_a_delete_finished_from_the_queue_sends_only_what_the_organizations_function_may(
    seeded, aws_requests, granted, monkeypatch
):
    # Given a delete with no time for a single step: it queues the rest and answers 202
    monkeypatch.setattr(cascade, "DELETE_STEP_SECONDS", 10_000)
    assert call("DELETE", "/orgs/acme").status == 202
    monkeypatch.setattr(cascade, "DELETE_STEP_SECONDS", 0)
    sent = list(aws_requests)
    [message] = boto3.client("sqs").receive_message(QueueUrl=config.settings().deletions_queue_url)["Messages"]
    mark = call("GET", "/orgs/acme").body["deleting_since"]
    aws_requests.clear()

    # When the event source delivers the message to the organizations function
    result = deliver([message])
    consumed = list(aws_requests)

    # Then the delete finished, and the request and the consumer sent only what the function may send
    assert result == {"batchItemFailures": []}
    assert json.loads(message["Body"]) == {"org_id": "acme", "deleting_since": mark}  # the job is that delete's
    assert call("GET", "/orgs/acme").status == 404
    assert "sqs:SendMessage" in sent
    assert "cognito-idp:AdminDeleteUser" in consumed
    assert set(sent + consumed) - granted[ORGANIZATIONS] == set()


def test_the_authorizer_sends_one_batch_get_on_an_org_partition_its_only_grant(seeded, aws_requests, dev):
    # Given the authorizer's role, from the template
    [function] = [
        r for r in dev["Resources"].values() if r["Properties"].get("Handler") == "authorizer.handler.lambda_handler"
    ]
    role = {"Ref": function["Properties"]["Role"]["Fn::GetAtt"][0]}
    [policy] = [
        r for r in dev["Resources"].values() if r["Type"] == "AWS::IAM::Policy" and role in r["Properties"]["Roles"]
    ]
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    dynamodb = [s for s in statements if "dynamodb" in json.dumps(s["Action"])]

    # When it decides for member alice of acme (the token already verified, its sub hers)
    handler.reset()
    key = {"PK": {"S": "ORG#acme"}, "SK": {"S": "USER#alice"}}
    subject = handler.dynamodb().get_item(TableName=config.settings().table_name, Key=key)["Item"]["sign_in_sub"]["S"]
    aws_requests.clear()
    claims = {"sub": subject, "custom:org_id": "acme", "custom:user_id": "alice", "custom:role": "member"}
    decision = handler.decide(claims, "arn:aws:execute-api:us-east-1:1:api/dev/GET/orgs/acme")
    handler.reset()

    # Then it read the org and her item with one BatchGetItem, all its role may do on the table, on ORG# keys only
    assert decision["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    assert aws_requests == ["dynamodb:BatchGetItem"]
    [statement] = dynamodb
    assert statement["Action"] == "dynamodb:BatchGetItem"
    assert "index" not in json.dumps(statement["Resource"])
    assert statement["Condition"] == {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["ORG#*"]}}
    assert fnmatch.fnmatchcase("ORG#acme", "ORG#*")


@pytest.mark.parametrize("status", ["suspended", "active"])
def test_a_sign_ins_job_sends_only_what_the_organizations_function_may(
    seeded, aws_requests, granted, status, table, monkeypatch
):
    # Given a suspension (or a reactivation after one), whose lifecycle event queues its sign-ins job
    relay = status_changes_to_the_deletions_queue(table, monkeypatch)
    if status == "active":
        call("PATCH", "/orgs/acme", {"status": "suspended", "suspension_reason": "Unpaid"})
        relay()
        boto3.client("sqs").purge_queue(QueueUrl=config.settings().deletions_queue_url)
    body = {"status": status} | ({"suspension_reason": "Unpaid"} if status == "suspended" else {})
    assert call("PATCH", "/orgs/acme", body).status == 200
    relay()
    [message] = boto3.client("sqs").receive_message(QueueUrl=config.settings().deletions_queue_url)["Messages"]
    aws_requests.clear()

    # When the event source delivers it to the organizations function
    assert deliver([message]) == {"batchItemFailures": []}

    # Then it changed the users' sign-ins, and the function may send every request it made
    expected = (
        {"cognito-idp:AdminEnableUser"}
        if status == "active"
        else {
            "cognito-idp:AdminDisableUser",
            "cognito-idp:AdminUserGlobalSignOut",
        }
    )
    assert expected <= set(aws_requests)
    job = signins.job(json.loads(message["Body"]))  # the status's event: that status's job
    assert job is not None and job["enabled"] == (status == "active")
    assert set(aws_requests) - granted[ORGANIZATIONS] == set()


def test_a_user_imports_job_sends_only_what_the_organizations_function_may(seeded, aws_requests, granted):
    # Given an import of two users, one already in the org, whose job is queued
    rows = [_ROW, {"user_id": "alice", "name": "Alice", "email": "alice@example.com"}]
    assert call("POST", "/orgs/acme/user-imports", {"rows": rows}).status == 202
    [message] = boto3.client("sqs").receive_message(QueueUrl=config.settings().deletions_queue_url)["Messages"]
    aws_requests.clear()

    # When the event source delivers it to the organizations function
    assert deliver([message]) == {"batchItemFailures": []}

    # Then it created the user and their sign-in, and the function may send every request it made
    assert {"dynamodb:BatchGetItem", "dynamodb:ConditionCheckItem", "cognito-idp:AdminCreateUser"} <= set(aws_requests)
    assert set(aws_requests) - granted[ORGANIZATIONS] == set()


def _resolved(value, refs: dict[str, str]) -> str:
    """A resource ARN of the template, with its Refs replaced by ``refs``."""
    if isinstance(value, str):
        return value
    if "Ref" in value:
        return refs[value["Ref"]]
    separator, parts = value["Fn::Join"]
    return separator.join(_resolved(part, refs) for part in parts)


def test_the_tenant_keys_consumer_may_send_its_api_gateway_requests_and_nothing_more(table, dev, monkeypatch):
    # Given the consumer's grants on API Gateway, with the template's usage plans as moto's
    client = boto3.client("apigateway")
    usage_plans = {
        logical_id: client.create_usage_plan(name=r["Properties"]["UsagePlanName"])["id"]
        for logical_id, r in dev["Resources"].items()
        if r["Type"] == "AWS::ApiGateway::UsagePlan"
    }
    refs = {"AWS::Partition": "aws", "AWS::Region": "us-east-1", **usage_plans}
    [consumer] = [
        r["Properties"]
        for r in dev["Resources"].values()
        if r["Type"] == "AWS::Lambda::Function" and r["Properties"]["Handler"] == "tenantkeys.handler.lambda_handler"
    ]
    role = {"Ref": consumer["Role"]["Fn::GetAtt"][0]}
    granted = {
        (action, _resolved(resource, refs))
        for r in dev["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy" and role in r["Properties"]["Roles"]
        for s in r["Properties"]["PolicyDocument"]["Statement"]
        for action in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
        if action.startswith("apigateway:")
        for resource in (s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]])
    }
    plan_ids = json.loads(_resolved(consumer["Environment"]["Variables"]["USAGE_PLAN_IDS"], refs))
    monkeypatch.setenv("USAGE_PLAN_IDS", json.dumps(plan_ids))
    monkeypatch.setenv("API_KEY_NAME_PREFIX", consumer["Environment"]["Variables"]["API_KEY_NAME_PREFIX"])
    monkeypatch.setattr(api_keys, "WRITES_PER_SECOND", math.inf)
    config.reset()
    api_keys.api_keys.cache_clear()
    sent: list[tuple[str, str]] = []
    config.apigateway().meta.events.register(
        "before-send.api-gateway",
        lambda request, **_: sent.append((f"apigateway:{request.method}", urlsplit(request.url).path)),
    )
    # And a key of acme's name left by a destroyed stack, with another value
    left = client.create_api_key(name=os.environ["API_KEY_NAME_PREFIX"] + "acme", value="v" * 40)["id"]
    client.create_usage_plan_key(usagePlanId=plan_ids["free"], keyId=left, keyType="API_KEY")

    # When acme is created, moves through every plan, and is deleted
    create_org("acme", plan="pro")
    events = [("Organization Created", "pro")]
    events += [("Organization Plan Changed", plan) for plan in ("free", "enterprise", "pro")]
    for kind, plan in events:
        assert call("PATCH", "/orgs/acme", {"plan": plan}).status == 200
        assert run(TENANT_KEYS, _bus_event(kind, "acme")) == {"batchItemFailures": []}
    call("DELETE", "/orgs/acme")
    assert run(TENANT_KEYS, _bus_event("Organization Deleted", "acme")) == {"batchItemFailures": []}

    # Then each request is granted, and each grant was used: nothing on other plans, nor on a plan itself
    arn = "arn:aws:apigateway:us-east-1::{}".format
    ungranted = {(a, p) for a, p in sent if not any(a == g and fnmatchcase(arn(p), r) for g, r in granted)}
    unused = {(g, r) for g, r in granted if not any(a == g and fnmatchcase(arn(p), r) for a, p in sent)}
    assert (ungranted, unused) == (set(), set())
    assert "apigateway:DELETE" in {a for a, p in sent if p.startswith("/apikeys/")}  # the leftover, then acme's
    assert set(plan_ids.values()) < set(usage_plans.values())  # the operators' plan is not the consumer's


def _bus_event(kind: str, org_id: str) -> dict:
    body = json.dumps({"source": "controlplane", "detail-type": kind, "detail": {"org_id": org_id}})
    record = {"messageId": kind, "receiptHandle": "h", "body": body, "attributes": {}, "messageAttributes": {}}
    return {"Records": [record | {"eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:0:q"}]}
