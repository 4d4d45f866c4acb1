"""Tenants' API Gateway keys in the usage plans of their plans: the only module that calls API
Gateway's control API. Each step is idempotent (it looks before it writes, and takes "already
there" and "already gone" as done), so a replayed or reordered event converges, never fails."""

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from botocore.exceptions import ClientError

from controlplane import config


def _code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


@dataclass(frozen=True)
class ApiKeys:
    client: Any
    usage_plans: dict[str, str]  # plan -> usage plan id, the stack's USAGE_PLAN_IDS
    name_prefix: str  # e.g. ``controlplane-prod/org/``: key names are unique per stack

    def name(self, org_id: str) -> str:
        return f"{self.name_prefix}{org_id}"

    def find(self, org_id: str) -> str | None:
        """The id of the org's key, or None."""
        name = self.name(org_id)
        return next((key["id"] for key in self._keys(name) if key["name"] == name), None)

    def put(self, org_id: str, value: str, plan: str) -> str:
        """The org's key, with ``value``, in ``plan``'s usage plan and in no other of ours."""
        key_id = self.find(org_id) or self._create(org_id, value)
        wanted = self.usage_plans[plan]
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
        """Delete the org's key (which takes it out of its usage plan); False if there was none."""
        key_id = self.find(org_id)
        if key_id is None:
            return False
        self._ignoring("NotFoundException", self.client.delete_api_key, apiKey=key_id)
        return True

    def _create(self, org_id: str, value: str) -> str:
        try:
            return str(self.client.create_api_key(name=self.name(org_id), value=value, enabled=True)["id"])
        except ClientError as error:
            if _code(error) != "ConflictException":  # created meanwhile by a concurrent delivery
                raise
        key_id = self.find(org_id)
        if key_id is None:
            raise RuntimeError(f"API key of {org_id} conflicts but cannot be found")
        return key_id

    def _keys(self, name: str) -> Iterator[dict[str, Any]]:
        for page in self.client.get_paginator("get_api_keys").paginate(nameQuery=name, includeValues=False):
            yield from page.get("items", [])

    @staticmethod
    def _ignoring(code: str, call: Any, **request: Any) -> None:
        try:
            call(**request)
        except ClientError as error:
            if _code(error) != code:
                raise


@cache
def api_keys() -> ApiKeys:
    """From the consumer's environment: USAGE_PLAN_IDS (JSON, plan -> id) and API_KEY_NAME_PREFIX."""
    return ApiKeys(
        config.apigateway(),
        usage_plans=json.loads(os.environ["USAGE_PLAN_IDS"]),
        name_prefix=os.environ["API_KEY_NAME_PREFIX"],
    )
