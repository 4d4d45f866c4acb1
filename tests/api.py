"""Call the API the way API Gateway does: an HTTP-shaped request in, a proxy response out."""

import json
from dataclasses import dataclass
from typing import Any

from local.apigw import build_event, invoke


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: Any

    @property
    def error_code(self) -> str | None:
        return (self.body or {}).get("error", {}).get("code") if isinstance(self.body, dict) else None


def claims(org_id: str | None = None, user_id: str | None = None, role: str | None = None, operator=False) -> dict:
    """What the Cognito authorizer puts in ``requestContext.authorizer.claims`` for a caller."""
    found = {"sub": f"sub-{org_id}-{user_id}", "cognito:username": f"{org_id}.{user_id}"}
    found |= {"custom:org_id": org_id, "custom:user_id": user_id, "custom:role": role} if org_id else {}
    return found | ({"cognito:groups": "operators"} if operator else {})


OPERATOR = claims(operator=True)


def admin(org_id: str = "acme", user_id: str = "root") -> dict:
    return claims(org_id, user_id, "admin")


def member(org_id: str = "acme", user_id: str = "alice") -> dict:
    return claims(org_id, user_id, "member")


def call(
    method: str,
    path: str,
    body: Any = None,
    query: dict[str, str] | None = None,
    caller: dict | None = OPERATOR,
    **kwargs,
) -> Reply:
    """Call as ``caller`` (claims; None for no token). Tests act as an operator unless they say."""
    raw_body = body if isinstance(body, str) or body is None else json.dumps(body)
    event = build_event(method, path, body=raw_body, query={k: [str(v)] for k, v in (query or {}).items()}, **kwargs)
    if caller is not None:
        event["requestContext"]["authorizer"] = {"claims": caller}
    response = invoke(event)
    headers = {name: values[-1] for name, values in (response.get("multiValueHeaders") or {}).items()}
    headers.update(response.get("headers") or {})
    raw = response.get("body")
    return Reply(response["statusCode"], headers, json.loads(raw) if raw else None)


def create_org(org_id: str = "acme", **fields) -> Reply:
    return call("POST", "/orgs", {"org_id": org_id, "name": fields.pop("name", org_id.title()), **fields})


def create_user(org_id: str = "acme", user_id: str = "alice", caller: dict = OPERATOR, **fields) -> Reply:
    body = {"user_id": user_id, "name": user_id.title(), "email": f"{user_id}@example.com", **fields}
    return call("POST", f"/orgs/{org_id}/users", body, caller=caller)


def create_ticket(org_id: str = "acme", user_id: str = "alice", caller: dict = OPERATOR, **fields) -> Reply:
    return call("POST", f"/orgs/{org_id}/users/{user_id}/tickets", {"subject": "It broke", **fields}, caller=caller)
