"""How access is checked and ended, in the template: the authorizer's audiences (exactly the app
clients that sign users in), its identity validation expression, the one 401 message, the
revocations consumer (rule, queue, its one grant) and the web ACL."""

import json

import pytest
from botocore.exceptions import ClientError

from authorizer.token_format import IDENTITY_VALIDATION_EXPRESSION
from controlplane.lifecycle.access import ACCESS_CHANGES
from controlplane.lifecycle.contract import SOURCE
from controlplane.models.errors import UNAUTHORIZED_MESSAGE
from cpctl import retries
from infra.config import StageConfig
from infra.constants import (
    AUTHORIZER_TIMEOUT,
    REVOCATIONS_BATCH_SIZE,
    REVOCATIONS_MAX_CONCURRENCY,
    WAF_EVALUATION_WINDOW_SECONDS,
)


def _of_type(template: dict, kind: str) -> dict[str, dict]:
    return {logical_id: r for logical_id, r in template["Resources"].items() if r["Type"] == kind}


def _function(template: dict, handler: str) -> tuple[str, dict]:
    [(logical_id, found)] = [
        (logical_id, r)
        for logical_id, r in _of_type(template, "AWS::Lambda::Function").items()
        if r["Properties"]["Handler"] == f"{handler}.handler.lambda_handler"
    ]
    return logical_id, found["Properties"]


def _statements(template: dict, function: dict) -> list[dict]:
    role = {"Ref": function["Role"]["Fn::GetAtt"][0]}
    return [
        statement
        for policy in _of_type(template, "AWS::IAM::Policy").values()
        if role in policy["Properties"]["Roles"]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def test_the_authorizer_accepts_exactly_the_app_clients_that_sign_users_in_the_consoles_among_them(dev):
    _, authorizer = _function(dev, "authorizer")
    separator, parts = authorizer["Environment"]["Variables"]["TOKEN_AUDIENCES"]["Fn::Join"]
    audiences = {part["Ref"] for part in parts if isinstance(part, dict)}
    assert separator == "" and all(part == "," for part in parts if isinstance(part, str))

    clients = _of_type(dev, "AWS::Cognito::UserPoolClient")
    # The console's: the client whose sign-in returns to the console's distribution
    console = {
        logical_id
        for logical_id, client in clients.items()
        if "ConsoleDistribution" in json.dumps(client["Properties"].get("CallbackURLs"))
    }
    assert len(console) == 1 and console <= audiences
    assert audiences == set(clients)  # every client of the pool signs users in, and no other id is accepted
    assert len(audiences) == 2


def test_the_token_authorizer_refuses_a_malformed_header_without_invoking_the_function(dev):
    [authorizer] = _of_type(dev, "AWS::ApiGateway::Authorizer").values()

    assert authorizer["Properties"]["Type"] == "TOKEN"
    assert authorizer["Properties"]["IdentityValidationExpression"] == IDENTITY_VALIDATION_EXPRESSION


def test_every_401_from_api_gateway_says_the_functions_message(dev):
    [response] = [
        r
        for r in _of_type(dev, "AWS::ApiGateway::GatewayResponse").values()
        if r["Properties"]["ResponseType"] == "UNAUTHORIZED"
    ]

    body = response["Properties"]["ResponseTemplates"]["application/json"].replace("$context.requestId", "id")
    assert json.loads(body)["error"]["message"] == UNAUTHORIZED_MESSAGE


def test_the_revocations_rule_sends_exactly_the_events_that_change_access_to_its_queue(dev):
    [rule] = [
        r["Properties"]
        for r in _of_type(dev, "AWS::Events::Rule").values()
        if "flush the authorizer cache" in r["Properties"].get("Description", "")
    ]

    assert rule["EventPattern"] == {"source": [SOURCE], "detail-type": list(ACCESS_CHANGES)}
    [target] = rule["Targets"]
    assert "DeadLetterConfig" in target and target["Arn"]["Fn::GetAtt"][1] == "Arn"


def test_the_revocations_consumer_is_paced_and_its_only_grant_on_api_gateway_is_the_flush(dev):
    logical_id, consumer = _function(dev, "revocations")
    [mapping] = [
        r["Properties"]
        for r in _of_type(dev, "AWS::Lambda::EventSourceMapping").values()
        if r["Properties"]["FunctionName"] == {"Ref": logical_id}
    ]
    assert mapping["BatchSize"] == REVOCATIONS_BATCH_SIZE
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": REVOCATIONS_MAX_CONCURRENCY}

    grants = [s for s in _statements(dev, consumer) if "apigateway" in json.dumps(s["Action"])]
    [grant] = grants
    assert grant["Action"] == "apigateway:DELETE"
    _, parts = grant["Resource"]["Fn::Join"]
    text = "".join(part if isinstance(part, str) else json.dumps(part) for part in parts)
    assert text.startswith("arn:") and text.endswith("/cache/authorizers")
    variables = consumer["Environment"]["Variables"]
    assert {"Ref": variables["REST_API_ID"]["Ref"]} in parts  # this API
    [stage] = _of_type(dev, "AWS::ApiGateway::Stage")  # this stage: a Stage's Ref is its name
    assert {"Ref": stage} in parts and variables["STAGE"] == {"Ref": stage}


def test_the_revocations_second_flush_goes_to_its_own_queue_after_the_authorizers_timeout(dev):
    from revocations import handler

    logical_id, consumer = _function(dev, "revocations")
    [mapping] = [
        r["Properties"]
        for r in _of_type(dev, "AWS::Lambda::EventSourceMapping").values()
        if r["Properties"]["FunctionName"] == {"Ref": logical_id}
    ]
    queue = mapping["EventSourceArn"]["Fn::GetAtt"][0]
    assert consumer["Environment"]["Variables"]["QUEUE_URL"] == {"Ref": queue}  # a queue's Ref is its URL
    sends = [s for s in _statements(dev, consumer) if "sqs:SendMessage" in json.dumps(s["Action"])]
    assert [s["Resource"] for s in sends] == [{"Fn::GetAtt": [queue, "Arn"]}]
    # A decision that read before the change began before it: the authorizer's timeout has ended it by then
    assert AUTHORIZER_TIMEOUT.to_seconds() < handler.AGAIN_AFTER_SECONDS


def test_the_flush_the_function_sends_is_the_path_its_grant_names(monkeypatch):
    """FlushStageAuthorizersCache as boto3 sends it: DELETE /restapis/<id>/stages/<stage>/cache/authorizers."""
    from revocations import handler

    monkeypatch.setenv("REST_API_ID", "abc123")
    monkeypatch.setenv("STAGE", "dev")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setattr(handler, "_apigateway", None)
    monkeypatch.setattr(handler.time, "sleep", lambda seconds: None)
    sent: list[tuple[str, str]] = []

    def capture(request, **_):
        sent.append((request.method, request.url.split(".amazonaws.com", 1)[1]))
        raise ClientError({"Error": {"Code": "Stop", "Message": "captured"}}, "FlushStageAuthorizersCache")

    handler.apigateway().meta.events.register("before-send.api-gateway", capture)
    body = json.dumps({"detail-type": ACCESS_CHANGES[0]})
    with pytest.raises(ClientError):
        handler.lambda_handler({"Records": [{"body": body}]}, None)

    assert sent[0] == ("DELETE", "/restapis/abc123/stages/dev/cache/authorizers")


def test_prod_has_a_per_ip_rate_based_web_acl_on_its_stage_and_dev_none(prod, dev):
    assert _of_type(dev, "AWS::WAFv2::WebACL") == {}
    [web_acl] = _of_type(prod, "AWS::WAFv2::WebACL").values()
    [association] = _of_type(prod, "AWS::WAFv2::WebACLAssociation").values()

    assert web_acl["Properties"]["Scope"] == "REGIONAL"
    assert web_acl["Properties"]["DefaultAction"] == {"Allow": {}}
    [rule] = web_acl["Properties"]["Rules"]
    assert rule["Action"] == {"Block": {}}
    assert rule["Statement"]["RateBasedStatement"] == {
        "AggregateKeyType": "IP",
        "Limit": StageConfig().waf_rate_limit,
        "EvaluationWindowSec": WAF_EVALUATION_WINDOW_SECONDS,
    }
    assert "Stage" in json.dumps(association["Properties"]["ResourceArn"])


def test_a_caller_the_web_acl_blocks_is_told_429_throttled_and_when_to_retry(prod):
    # Given the web ACL's one rule, a per-address rate limit, whose block API Gateway answers with its
    # WAF_FILTERED response: by default 403 "Forbidden" through DEFAULT_4XX, code bad_request, no
    # Retry-After, which tells a client over the limit that it may never call again
    responses = {
        r["Properties"]["ResponseType"]: r["Properties"]
        for r in _of_type(prod, "AWS::ApiGateway::GatewayResponse").values()
    }

    # When a blocked caller reads the answer
    blocked = responses.get("WAF_FILTERED")

    # Then it is a throttle like a usage plan's, with a wait the client may retry after (when it fits in
    # the request's timeout: cpctl --timeout 60, not the default 30), not one it takes for the daily
    # quota's (a Retry-After above its own longest wait, which it never retries)
    assert blocked is not None, "a WAF block is API Gateway's default: 403 bad_request"
    body = json.loads(blocked["ResponseTemplates"]["application/json"].replace("$context.requestId", "r"))
    assert (blocked["StatusCode"], body["error"]["code"]) == ("429", "throttled")
    retry_after = int(blocked["ResponseParameters"]["gatewayresponse.header.Retry-After"].strip("'"))
    assert 0 < retry_after <= retries.MAX_WAIT_SECONDS


def test_the_web_acl_follows_its_context_key_and_refuses_a_limit_under_wafs_least():
    assert StageConfig(stage="prod").waf_enabled
    assert not StageConfig(stage="prod", waf=False).waf_enabled
    assert StageConfig(stage="dev", waf=True).waf_enabled
    with pytest.raises(ValueError, match="at least 10"):
        StageConfig(waf_rate_limit=9)
