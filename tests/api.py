"""The tests' callers and the resources most tests start from, on the local kit's ``call``."""

from typing import Any

import boto3

from controlplane import config
from controlplane.http.routes import ORGANIZATIONS
from controlplane.logic.access import ADMIN, MEMBER
from local import apigw
from local.apigw import OPERATOR_CONTEXT, Reply, authorizer_context, run
from tests import contract

OPERATOR = OPERATOR_CONTEXT

__all__ = [
    "OPERATOR",
    "Reply",
    "admin",
    "call",
    "create_org",
    "create_ticket",
    "create_user",
    "deliver",
    "invoke",
    "member",
    "user_pool",
]


def call(method: str, path: str, body: Any = None, **options) -> Reply:
    """``local.apigw.call``, and the answer is what the OpenAPI document says its route answers (its
    status, body and headers: ``tests.contract``): every test that calls a route checks the document
    as it goes. A path no route has is the gateway's 404 or 405, which the document gives no route."""
    reply = apigw.call(method, path, body, **options)
    route, _ = apigw.match(method, path)
    if route is not None:
        contract.check(route, reply)
    return reply


def invoke(event: dict[str, Any]) -> dict[str, Any]:
    """``local.apigw.invoke`` for a test that builds its own event, its answer held against the
    document as ``call``'s is."""
    response = apigw.invoke(event)
    route, _ = apigw.match(event["httpMethod"], event["path"])
    if route is not None:
        contract.check(route, apigw.read(response))
    return response


def user_pool(monkeypatch) -> str:
    """A Cognito user pool (moto) with the attributes the functions write, named in the functions'
    settings; its id."""
    attributes = [{"Name": n, "AttributeDataType": "String", "Mutable": True} for n in ("org_id", "user_id", "role")]
    pool_id = boto3.client("cognito-idp").create_user_pool(PoolName="users", Schema=attributes)["UserPool"]["Id"]
    monkeypatch.setenv("USER_POOL_ID", pool_id)
    config.reset()
    return pool_id


def admin(org_id: str = "acme", user_id: str = "root") -> dict:
    return authorizer_context(ADMIN, org_id, user_id)


def member(org_id: str = "acme", user_id: str = "alice") -> dict:
    return authorizer_context(MEMBER, org_id, user_id)


def create_org(org_id: str = "acme", **fields) -> Reply:
    return call("POST", "/orgs", {"org_id": org_id, "name": fields.pop("name", org_id.title()), **fields})


def create_user(org_id: str = "acme", user_id: str = "alice", caller: dict = OPERATOR, **fields) -> Reply:
    body = {"user_id": user_id, "name": user_id.title(), "email": f"{user_id}@example.com", **fields}
    return call("POST", f"/orgs/{org_id}/users", body, caller=caller)


def create_ticket(org_id: str = "acme", user_id: str = "alice", caller: dict = OPERATOR, **fields) -> Reply:
    return call("POST", f"/orgs/{org_id}/users/{user_id}/tickets", {"subject": "It broke", **fields}, caller=caller)


def deliver(messages: list[dict[str, Any]], function: str = ORGANIZATIONS) -> Any:
    """Play the SQS event source: hand messages, as ReceiveMessage returned them, to ``function``."""
    records = [
        {
            "messageId": message["MessageId"],
            "receiptHandle": message["ReceiptHandle"],
            "body": message["Body"],
            "attributes": {},
            "messageAttributes": {},
            "eventSource": "aws:sqs",
            "eventSourceARN": "arn:aws:sqs:us-east-1:000000000000:deletions",
            "awsRegion": "us-east-1",
        }
        for message in messages
    ]
    return run(function, {"Records": records})
