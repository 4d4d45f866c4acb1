"""The tenant-keys consumer on moto's API Gateway: each org's key follows its org item through
Created, Plan Changed and Deleted, whatever the order and however often the events arrive."""

import json
import math
import uuid

import boto3
import pytest
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError
from botocore.exceptions import ClientError

from controlplane import config
from controlplane.dal import api_keys, tenant_keys
from local.apigw import run
from tests.api import call, create_org

pytestmark = pytest.mark.parametrize("table", ["moto"], indirect=True)  # moto's API Gateway and DynamoDB
PREFIX = "controlplane-test/org/"


@pytest.fixture
def usage_plans(table, monkeypatch):
    """One usage plan per plan, as the stack makes them; the consumer's environment names them."""
    client = boto3.client("apigateway")
    ids = {plan: client.create_usage_plan(name=f"test-{plan}")["id"] for plan in ("free", "pro", "enterprise")}
    monkeypatch.setenv("USAGE_PLAN_IDS", json.dumps(ids))
    monkeypatch.setenv("API_KEY_NAME_PREFIX", PREFIX)
    monkeypatch.setattr(api_keys, "WRITES_PER_SECOND", math.inf)  # its pace has a test of its own
    config.reset()
    api_keys.api_keys.cache_clear()
    tenant_keys.reset()
    yield ids
    api_keys.api_keys.cache_clear()


@pytest.fixture
def apigateway_calls(usage_plans):
    calls: list[str] = []
    config.apigateway().meta.events.register(
        "before-send.api-gateway", lambda event_name, **_: calls.append(event_name.rsplit(".", 1)[-1])
    )
    return calls


def deliver(*detail_types_and_orgs: tuple[str, str]) -> dict:
    """One SQS batch of bus events, as the rule's queue hands them to the consumer."""
    records = [
        {
            "messageId": str(uuid.uuid4()),
            "receiptHandle": "handle",
            "body": json.dumps({"source": "controlplane", "detail-type": kind, "detail": {"org_id": org_id}}),
            "attributes": {"ApproximateReceiveCount": "1"},
            "messageAttributes": {},
            "md5OfBody": "",
            "eventSource": "aws:sqs",
            "eventSourceARN": "arn:aws:sqs:us-east-1:000000000000:tenant-keys",
            "awsRegion": "us-east-1",
        }
        for kind, org_id in detail_types_and_orgs
    ]
    return run("tenantkeys", {"Records": records})


def where(org_id: str, usage_plans: dict[str, str]) -> list[str]:
    """The plans whose usage plan holds the org's key, and the key's value checked on the way."""
    client = boto3.client("apigateway")
    keys = [k for k in client.get_api_keys(includeValues=True)["items"] if k["name"] == PREFIX + org_id]
    if not keys:
        return []
    assert len(keys) == 1 and keys[0]["value"] == tenant_keys.tenant_key(org_id)
    return sorted(
        plan
        for plan, plan_id in usage_plans.items()
        if any(k["id"] == keys[0]["id"] for k in client.get_usage_plan_keys(usagePlanId=plan_id)["items"])
    )


def test_created_puts_the_orgs_derived_key_in_its_plans_usage_plan(usage_plans):
    create_org("acme", plan="pro")

    assert deliver(("Organization Created", "acme")) == {"batchItemFailures": []}

    assert where("acme", usage_plans) == ["pro"]


def test_plan_changed_moves_the_key_to_the_new_plan_only(usage_plans):
    create_org("acme")
    deliver(("Organization Created", "acme"))
    call("PATCH", "/orgs/acme", {"plan": "enterprise"})

    deliver(("Organization Plan Changed", "acme"))

    assert where("acme", usage_plans) == ["enterprise"]


def test_deleted_deletes_the_key(usage_plans):
    create_org("acme")
    deliver(("Organization Created", "acme"))
    call("DELETE", "/orgs/acme")

    deliver(("Organization Deleted", "acme"))

    assert where("acme", usage_plans) == []


def test_a_replay_changes_nothing_and_writes_nothing(usage_plans, apigateway_calls):
    create_org("acme")
    deliver(("Organization Created", "acme"))
    apigateway_calls.clear()

    deliver(("Organization Created", "acme"), ("Organization Plan Changed", "acme"))

    assert where("acme", usage_plans) == ["free"]
    assert apigateway_calls == ["GetApiKeys", "GetUsagePlans"] * 2  # reads only


def test_a_late_created_after_the_delete_creates_no_key(usage_plans):
    create_org("acme")
    call("DELETE", "/orgs/acme")

    deliver(("Organization Deleted", "acme"), ("Organization Created", "acme"))

    assert where("acme", usage_plans) == []


def test_an_early_deleted_leaves_a_living_orgs_key(usage_plans):
    create_org("acme", plan="pro")
    deliver(("Organization Created", "acme"))

    deliver(("Organization Deleted", "acme"), ("Organization Plan Changed", "acme"))

    assert where("acme", usage_plans) == ["pro"]


def test_keys_of_two_orgs_are_distinct_and_independent(usage_plans):
    create_org("acme")
    create_org("bolt", plan="enterprise")

    deliver(("Organization Created", "acme"), ("Organization Created", "bolt"))

    assert (where("acme", usage_plans), where("bolt", usage_plans)) == (["free"], ["enterprise"])
    assert tenant_keys.tenant_key("acme") != tenant_keys.tenant_key("bolt")


def test_a_throttled_create_fails_its_message_only_and_its_redelivery_converges(usage_plans, monkeypatch):
    # API Gateway allows 5 CreateApiKey a second per account: a burst of sign-ups meets TooManyRequests.
    create_org("acme")
    create_org("bolt", plan="pro")
    client, real = config.apigateway(), config.apigateway().create_api_key

    def throttled_for_acme(**request):
        if request["name"].endswith("/acme"):
            error = {"Error": {"Code": "TooManyRequestsException", "Message": "Too Many Requests"}}
            raise ClientError(error, "CreateApiKey")
        return real(**request)

    monkeypatch.setattr(client, "create_api_key", throttled_for_acme)

    reply = deliver(("Organization Created", "acme"), ("Organization Created", "bolt"))

    assert len(reply["batchItemFailures"]) == 1  # acme's goes back to the queue; bolt's went through
    assert (where("acme", usage_plans), where("bolt", usage_plans)) == ([], ["pro"])
    monkeypatch.undo()
    assert deliver(("Organization Created", "acme")) == {"batchItemFailures": []}
    assert where("acme", usage_plans) == ["free"]


def test_other_events_are_ignored(usage_plans, apigateway_calls):
    create_org("acme")

    assert deliver(("User Created", "acme"), ("Ticket Opened", "acme")) == {"batchItemFailures": []}

    assert apigateway_calls == []


def _leftover_key(org_id: str, plan_id: str, value: str = "v" * 40) -> str:
    """A key of the org's name whose value came from another secret: a destroyed stack's."""
    client = boto3.client("apigateway")
    key_id = client.create_api_key(name=PREFIX + org_id, value=value, enabled=True)["id"]
    client.create_usage_plan_key(usagePlanId=plan_id, keyId=key_id, keyType="API_KEY")
    return key_id


def test_a_leftover_key_with_another_value_is_replaced_by_the_derived_one(usage_plans):
    # Given a key of acme's name left by a destroyed stack, in the pro usage plan, with another value
    old = _leftover_key("acme", usage_plans["pro"])
    create_org("acme")

    # When acme is created on the new stack
    assert deliver(("Organization Created", "acme")) == {"batchItemFailures": []}

    # Then acme has one key, of the value the authorizer derives, in its plan only; the old one is gone
    assert where("acme", usage_plans) == ["free"]
    assert old not in {k["id"] for k in boto3.client("apigateway").get_api_keys()["items"]}


def test_a_replaced_key_converges_a_replay_writes_nothing(usage_plans, apigateway_calls):
    _leftover_key("acme", usage_plans["free"])
    create_org("acme")
    deliver(("Organization Created", "acme"))
    apigateway_calls.clear()

    deliver(("Organization Created", "acme"))

    assert where("acme", usage_plans) == ["free"]
    assert apigateway_calls == ["GetApiKeys", "GetUsagePlans"]


def test_deleted_deletes_every_key_of_the_orgs_name(usage_plans):
    _leftover_key("acme", usage_plans["pro"])
    create_org("acme")
    deliver(("Organization Created", "acme"))
    call("DELETE", "/orgs/acme")

    deliver(("Organization Deleted", "acme"))

    assert [k for k in boto3.client("apigateway").get_api_keys()["items"] if k["name"] == PREFIX + "acme"] == []


def test_each_create_and_delete_of_a_key_waits_for_its_pace_and_nothing_else_does(usage_plans):
    # Given a keyring whose pace is counted (the consumer's waits WRITES_PER_SECOND between writes)
    waits: list[str] = []
    keyring = api_keys.ApiKeys(config.apigateway(), usage_plans, PREFIX, pace=lambda: waits.append("wait"))
    _leftover_key("acme", usage_plans["pro"])

    # When putting acme's key (a delete and a create), moving it (no key write), then deleting it
    keyring.put("acme", tenant_keys.tenant_key("acme"), "free")
    replaced = len(waits)
    keyring.put("acme", tenant_keys.tenant_key("acme"), "enterprise")
    moved = len(waits) - replaced
    keyring.delete("acme")

    # Then only CreateApiKey and DeleteApiKey waited
    assert (replaced, moved, len(waits)) == (2, 0, 3)


def test_the_consumers_keyring_paces_its_key_writes(usage_plans, monkeypatch):
    monkeypatch.setattr(api_keys, "WRITES_PER_SECOND", 2.0)
    api_keys.api_keys.cache_clear()

    pace = api_keys.api_keys().pace

    assert pace.__self__.rate == 2.0  # a bound Throttle.wait, shared by every batch of the container


def test_a_delete_that_races_the_orgs_creation_again_leaves_the_new_org_its_key(usage_plans, monkeypatch):
    # Given acme deleted, and, while one consumer deletes its key, acme is created again and another
    # consumer puts the new acme's key (the same value) in its plan
    create_org("acme")
    deliver(("Organization Created", "acme"))
    call("DELETE", "/orgs/acme")
    delete, created_again = api_keys.ApiKeys.delete, []

    def created_meanwhile(self, org_id):
        if not created_again:
            created_again.append(create_org("acme", plan="pro").status)
            deliver(("Organization Created", "acme"))
        return delete(self, org_id)

    monkeypatch.setattr(api_keys.ApiKeys, "delete", created_meanwhile)

    # When the first consumer's delete goes through
    deliver(("Organization Deleted", "acme"))

    # Then the new acme has its key, in its plan
    assert created_again == [201]
    assert where("acme", usage_plans) == ["pro"]


def test_a_plan_change_that_races_a_put_leaves_the_key_in_the_new_plan(usage_plans, monkeypatch):
    # Given acme (free), and, after one consumer has read it for its Created, an operator moves it to
    # pro and another consumer puts its key in pro for the Plan Changed
    create_org("acme")
    put, changed = api_keys.ApiKeys.put, []

    def changed_meanwhile(self, org_id, value, plan):
        if not changed:
            changed.append(call("PATCH", "/orgs/acme", {"plan": "pro"}).status)
            deliver(("Organization Plan Changed", "acme"))
        return put(self, org_id, value, plan)

    monkeypatch.setattr(api_keys.ApiKeys, "put", changed_meanwhile)

    # When the first consumer's put, for the plan it read, goes through
    deliver(("Organization Created", "acme"))

    # Then the key is where the org is now
    assert changed == [200]
    assert where("acme", usage_plans) == ["pro"]


def test_a_delete_that_races_a_put_leaves_no_key(usage_plans, monkeypatch):
    # Given acme, and, after one consumer has read it for its Created, acme is deleted and another
    # consumer handles the Deleted
    create_org("acme")
    put, deleted = api_keys.ApiKeys.put, []

    def deleted_meanwhile(self, org_id, value, plan):
        if not deleted:
            deleted.append(call("DELETE", "/orgs/acme").status)
            deliver(("Organization Deleted", "acme"))
        return put(self, org_id, value, plan)

    monkeypatch.setattr(api_keys.ApiKeys, "put", deleted_meanwhile)

    # When the first consumer's put goes through
    deliver(("Organization Created", "acme"))

    # Then the gone org keeps no key
    assert deleted == [204]
    assert where("acme", usage_plans) == []


def test_a_create_that_another_delivery_made_first_takes_the_key_it_made(usage_plans, monkeypatch):
    # Given acme, and another delivery of its Created that creates its key just before this one does
    create_org("acme")
    client, real = config.apigateway(), config.apigateway().create_api_key

    def made_first(**request):
        real(**request)  # the other delivery's
        raise ClientError({"Error": {"Code": "ConflictException", "Message": "exists"}}, "CreateApiKey")

    monkeypatch.setattr(client, "create_api_key", made_first)

    # When this delivery's CreateApiKey meets the key the other made
    reply = deliver(("Organization Created", "acme"))

    # Then it takes that key as its own and puts it in the plan: the message is done
    assert reply == {"batchItemFailures": []}
    assert where("acme", usage_plans) == ["free"]


def test_a_conflicting_create_whose_key_cannot_be_found_goes_back_to_the_queue(usage_plans, monkeypatch):
    # Given acme, and API Gateway answering a conflict for a key it then does not list (not visible yet)
    create_org("acme")

    def conflict(**_):
        raise ClientError({"Error": {"Code": "ConflictException", "Message": "exists"}}, "CreateApiKey")

    monkeypatch.setattr(config.apigateway(), "create_api_key", conflict)

    # When its Created is delivered, then its batch fails, to be delivered again, and nothing is in a plan
    with pytest.raises(BatchProcessingError, match="conflicts but cannot be found"):
        deliver(("Organization Created", "acme"))

    assert where("acme", usage_plans) == []
    monkeypatch.undo()
    assert deliver(("Organization Created", "acme")) == {"batchItemFailures": []}
    assert where("acme", usage_plans) == ["free"]


def test_a_throttled_move_out_of_the_old_plan_goes_back_to_the_queue_and_converges(usage_plans, monkeypatch):
    # Given acme's key in free, then acme moved to pro, and API Gateway throttling DeleteUsagePlanKey
    create_org("acme")
    deliver(("Organization Created", "acme"))
    call("PATCH", "/orgs/acme", {"plan": "pro"})

    def throttled(**_):
        error = {"Error": {"Code": "TooManyRequestsException", "Message": "Too Many Requests"}}
        raise ClientError(error, "DeleteUsagePlanKey")

    monkeypatch.setattr(config.apigateway(), "delete_usage_plan_key", throttled)

    # When its Plan Changed is delivered, then its batch fails (throttling is not "already gone"), the
    # key stays where it was, and the redelivery moves it
    with pytest.raises(BatchProcessingError, match="TooManyRequestsException"):
        deliver(("Organization Plan Changed", "acme"))

    assert where("acme", usage_plans) == ["free"]
    monkeypatch.undo()
    assert deliver(("Organization Plan Changed", "acme")) == {"batchItemFailures": []}
    assert where("acme", usage_plans) == ["pro"]


def test_an_org_whose_plan_changes_during_every_pass_goes_back_to_the_queue_and_its_redelivery_converges(
    usage_plans, monkeypatch
):
    # Given acme, whose plan an operator changes while each of the consumer's passes puts its key
    create_org("acme")
    put, plans = api_keys.ApiKeys.put, iter(["pro", "enterprise", "free"])

    def changed_meanwhile(self, org_id, value, plan):
        key_id = put(self, org_id, value, plan)
        if (after := next(plans, None)) is not None:
            assert call("PATCH", "/orgs/acme", {"plan": after}).status == 200
        return key_id

    monkeypatch.setattr(api_keys.ApiKeys, "put", changed_meanwhile)

    # When its Created is delivered, then after its passes the batch fails, to be delivered again
    with pytest.raises(BatchProcessingError, match="kept changing"):
        deliver(("Organization Created", "acme"))

    # And the redelivery puts the key where the org is now
    monkeypatch.undo()
    assert deliver(("Organization Created", "acme")) == {"batchItemFailures": []}
    assert where("acme", usage_plans) == ["free"]
