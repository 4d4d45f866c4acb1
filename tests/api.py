"""The tests' callers and the resources most tests start from, on the local kit's ``call``."""

import json
from typing import Any

from controlplane.http.routes import ORGANIZATIONS
from controlplane.logic.access import ADMIN, MEMBER
from local import ROOT, apigw
from local.apigw import OPERATOR_CONTEXT, Reply, authorizer_context, run

OPERATOR = OPERATOR_CONTEXT
# Each operation's statuses in the committed OpenAPI document (tests/unit/test_routes.py: it is the code's).
_DOCUMENTED = {
    (method.upper(), path): set(operation["responses"])
    for path, item in json.loads((ROOT / "docs" / "openapi.json").read_text())["paths"].items()
    for method, operation in item.items()
    if isinstance(operation, dict) and "responses" in operation
}

__all__ = ["OPERATOR", "Reply", "admin", "call", "create_org", "create_ticket", "create_user", "deliver", "member"]


def call(method: str, path: str, body: Any = None, **options) -> Reply:
    """``local.apigw.call``, and the answer's status is one the OpenAPI document gives its route: every
    test that calls a route checks the document as it goes."""
    reply = apigw.call(method, path, body, **options)
    route, _ = apigw.match(method, path)
    if route is not None:
        documented = _DOCUMENTED[(route.method, route.path)]
        assert str(reply.status) in documented, f"{route} answered {reply.status}, undocumented: {reply.body}"
    return reply


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
