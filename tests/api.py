"""Call the API the way API Gateway does: an HTTP-shaped request in, a proxy response out."""

import json
from dataclasses import dataclass
from typing import Any

from local.apigw import request


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: Any

    @property
    def error_code(self) -> str | None:
        return (self.body or {}).get("error", {}).get("code") if isinstance(self.body, dict) else None


def call(method: str, path: str, body: Any = None, query: dict[str, str] | None = None, **kwargs) -> Reply:
    response = request(method, path, body, query={k: [str(v)] for k, v in (query or {}).items()}, **kwargs)
    headers = {name: values[-1] for name, values in (response.get("multiValueHeaders") or {}).items()}
    headers.update(response.get("headers") or {})
    raw = response.get("body")
    return Reply(response["statusCode"], headers, json.loads(raw) if raw else None)


def create_org(org_id: str = "acme", **fields) -> Reply:
    return call("POST", "/orgs", {"org_id": org_id, "name": fields.pop("name", org_id.title()), **fields})


def create_user(org_id: str = "acme", user_id: str = "alice", **fields) -> Reply:
    body = {"user_id": user_id, "name": user_id.title(), "email": f"{user_id}@example.com", **fields}
    return call("POST", f"/orgs/{org_id}/users", body)


def create_ticket(org_id: str = "acme", user_id: str = "alice", **fields) -> Reply:
    return call("POST", f"/orgs/{org_id}/users/{user_id}/tickets", {"subject": "It broke", **fields})
