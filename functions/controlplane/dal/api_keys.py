"""Tenants' API Gateway keys in the usage plans of their plans: the only module that calls API
Gateway's control API. Each step is idempotent (it looks before it writes, and takes "already
there" and "already gone" as done), so a replayed or reordered event converges, never fails.

A key counts as the org's only if it carries the value the authorizer derives (``value``): a key of
the same name with another value (left by a destroyed stack whose secret is gone) is deleted and the
key created again, since the authorizer's ``usageIdentifierKey`` could never match it.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from botocore.exceptions import ClientError

from controlplane import config
from controlplane.pacing import Throttle

# CreateApiKey and DeleteApiKey: 5 a second per account and region, not adjustable. The consumer runs
# at most 2 at once (infra: TENANT_KEYS_MAX_CONCURRENCY), each at this pace: 4 a second, 1 to spare.
WRITES_PER_SECOND = 2.0
PAGE_SIZE = 500  # GetApiKeys' largest page


def key_name_prefix(stack_name: str) -> str:
    """What the names of a stack's tenant keys start with: ``<stack>/org/``, then the org id."""
    return f"{stack_name}/org/"


def _code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def _no_pace() -> None:
    return None


@dataclass(frozen=True)
class ApiKeys:
    client: Any
    usage_plans: dict[str, str]  # plan -> usage plan id, the stack's USAGE_PLAN_IDS
    name_prefix: str  # e.g. ``ControlPlane-prod/org/``: key names are unique per stack
    pace: Callable[[], None] = _no_pace  # waits before each CreateApiKey and DeleteApiKey

    def name(self, org_id: str) -> str:
        return f"{self.name_prefix}{org_id}"

    def put(self, org_id: str, value: str, plan: str) -> str:
        """The org's key, with ``value``, in ``plan``'s usage plan and in no other of ours."""
        found = self._named(org_id)
        key_id = next((key["id"] for key in found if key.get("value") == value), None)
        for stale in found:
            if stale["id"] != key_id:
                self.delete_key(stale["id"])
        wanted = self.usage_plans[plan]
        if key_id is None:
            key_id, current = self._create(org_id, value), set()
        else:
            ours = set(self.usage_plans.values())
            current = {p["id"] for p in self.client.get_usage_plans(keyId=key_id).get("items", [])} & ours
        # A key may be in one usage plan per stage: out of the old one first. In between, the
        # authorizer's key is in no plan and API Gateway answers INVALID_API_KEY (503, retry).
        for plan_id in current - {wanted}:
            self._ignoring("NotFoundException", self.client.delete_usage_plan_key, usagePlanId=plan_id, keyId=key_id)
        if wanted not in current:
            self._ignoring(
                "ConflictException",
                self.client.create_usage_plan_key,
                usagePlanId=wanted,
                keyId=key_id,
                keyType="API_KEY",
            )
        return key_id

    def delete(self, org_id: str) -> bool:
        """Delete the org's keys (which takes them out of their usage plans); False if there was none."""
        found = self._named(org_id)
        for key in found:
            self.delete_key(key["id"])
        return bool(found)

    def names(self) -> Iterator[tuple[str, str]]:
        """(id, name) of every key under our name prefix, whatever org or value: every page of the
        account's keys, filtered here (GetApiKeys' ``nameQuery`` is not documented as a prefix match)."""
        for page in self.client.get_paginator("get_api_keys").paginate(
            includeValues=False, PaginationConfig={"PageSize": PAGE_SIZE}
        ):
            for key in page.get("items", []):
                if str(key.get("name", "")).startswith(self.name_prefix):
                    yield str(key["id"]), str(key["name"])

    def _create(self, org_id: str, value: str) -> str:
        self.pace()
        try:
            return str(self.client.create_api_key(name=self.name(org_id), value=value, enabled=True)["id"])
        except ClientError as error:
            if _code(error) != "ConflictException":  # created meanwhile by a concurrent delivery
                raise
        key_id = next((key["id"] for key in self._named(org_id) if key.get("value") == value), None)
        if key_id is None:
            raise RuntimeError(f"API key of {org_id} conflicts but cannot be found")
        return str(key_id)

    def delete_key(self, key_id: str) -> None:
        """Delete one key by id (gone already counts as done)."""
        self.pace()
        self._ignoring("NotFoundException", self.client.delete_api_key, apiKey=key_id)

    def _named(self, org_id: str) -> list[dict[str, Any]]:
        """The keys named as the org's, with their values (one GetApiKeys, paged)."""
        name = self.name(org_id)
        return [
            key
            for page in self.client.get_paginator("get_api_keys").paginate(nameQuery=name, includeValues=True)
            for key in page.get("items", [])
            if key["name"] == name
        ]

    @staticmethod
    def _ignoring(code: str, call: Any, **request: Any) -> None:
        try:
            call(**request)
        except ClientError as error:
            if _code(error) != code:
                raise


@cache
def api_keys() -> ApiKeys:
    """From the consumer's environment: USAGE_PLAN_IDS (JSON, plan -> id) and API_KEY_NAME_PREFIX.
    Cached per container, so its pace holds across the batches a warm container takes."""
    usage_plans, name_prefix = config.usage_plans()
    return ApiKeys(
        config.apigateway(),
        usage_plans=usage_plans,
        name_prefix=name_prefix,
        pace=Throttle(WRITES_PER_SECOND).wait,
    )
