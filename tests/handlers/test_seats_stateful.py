"""Seats, proven over random histories: creates (some replayed with their Idempotency-Key, some
whose Cognito sign-in fails), deletes and plan changes. After every step the org's ``user_count``
equals its user items and stays within its limit, and every answer is the one a model predicts."""

import itertools

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from controlplane import config
from controlplane.dal import keys
from controlplane.models import plans
from tests.api import call, create_org, user_pool

pytestmark = pytest.mark.parametrize("table", ["moto"], indirect=True)  # Cognito exists on moto only

USER_IDS = [f"user-{i}" for i in range(8)]  # more than the free plan's 5 seats
_orgs = itertools.count()


class Seats(RuleBasedStateMachine):
    """The model: which users exist, the plan, and the first answer of each Idempotency-Key."""

    @initialize(plan=st.sampled_from(["free", "pro"]))
    def new_org(self, plan):
        self.org_id = f"org-{next(_orgs)}"  # one org per example, on the one table
        assert create_org(self.org_id, plan=plan).status == 201
        self.plan = plan
        self.users: set[str] = set()
        self.answers: dict[str, tuple[dict, dict]] = {}  # key -> (body, first 201 body)
        self.keys = itertools.count()

    def _post(self, body: dict, key: str | None):
        headers = {"Idempotency-Key": [key]} if key else {}
        return call("POST", f"/orgs/{self.org_id}/users", body, headers=headers)

    @rule(user_id=st.sampled_from(USER_IDS), with_key=st.booleans(), sign_in_fails=st.booleans())
    def create(self, user_id, with_key, sign_in_fails):
        body = {"user_id": user_id, "name": user_id.title(), "email": f"{user_id}@example.com"}
        key = f"key-{next(self.keys)}" if with_key else None
        directory = config.directory()
        if sign_in_fails:
            directory.create = _cognito_is_down
        try:
            reply = self._post(body, key)
        finally:
            directory.__dict__.pop("create", None)

        limit = plans.limit(self.plan)
        if user_id in self.users:
            assert (reply.status, reply.error_code) == (409, "already_exists")
        elif len(self.users) >= limit:
            assert (reply.status, reply.error_code) == (409, "quota_exceeded")
            used = len(self.users)
            assert reply.body["error"]["details"] == {"quota": "users", "limit": limit, "used": used, "plan": self.plan}
        elif sign_in_fails:
            assert reply.status == 500
        else:
            assert reply.status == 201, reply.body
            self.users.add(user_id)
            if key:
                self.answers[key] = (body, reply.body)

    @precondition(lambda self: self.answers)
    @rule(data=st.data())
    def replay(self, data):
        key = data.draw(st.sampled_from(sorted(self.answers)))
        body, first = self.answers[key]

        reply = self._post(body, key)

        assert (reply.status, reply.body) == (201, first)  # even if the user has gone since

    @rule(user_id=st.sampled_from(USER_IDS))
    def delete(self, user_id):
        reply = call("DELETE", f"/orgs/{self.org_id}/users/{user_id}")

        assert reply.status == (204 if user_id in self.users else 404)
        self.users.discard(user_id)

    @rule(plan=st.sampled_from(list(plans.CATALOGUE)))
    def change_plan(self, plan):
        reply = call("PATCH", f"/orgs/{self.org_id}", {"plan": plan})

        if len(self.users) <= plans.limit(plan):
            assert reply.status == 200
            assert reply.body["limits"] == {"users": plans.limit(plan)}
            self.plan = plan
        else:
            assert (reply.status, reply.error_code) == (409, "quota_exceeded")

    @invariant()
    def count_equals_the_user_items_and_stays_within_the_limit(self):
        client = config.dynamodb()
        seats = client.get_item(TableName=config.settings().table_name, Key=_key(keys.seats_key(self.org_id)))["Item"]
        users = client.query(
            TableName=config.settings().table_name,
            KeyConditionExpression="PK = :pk AND begins_with(SK, :users)",
            ExpressionAttributeValues={
                ":pk": {"S": keys.org_partition(self.org_id)},
                ":users": {"S": keys.USER_PREFIX},
            },
        )["Items"]
        count, limit = int(seats["user_count"]["N"]), int(seats["user_limit"]["N"])

        assert count == len(users) == len(self.users)
        assert {item["user_id"]["S"] for item in users} == self.users
        assert count <= limit == plans.limit(self.plan)


def _key(key: dict) -> dict:
    return {name: {"S": value} for name, value in key.items()}


def _cognito_is_down(*_, **__):
    raise ConnectionError("injected: Cognito is unreachable")


def test_user_count_equals_the_users_through_any_history(table, monkeypatch):
    user_pool(monkeypatch)
    assert config.directory() is not None

    Seats.TestCase.settings = settings(
        max_examples=20, stateful_step_count=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    Seats.TestCase().runTest()
