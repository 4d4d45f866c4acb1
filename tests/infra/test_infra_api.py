"""The REST API: exactly the route table's methods, each behind the Lambda authorizer, the stage
settings, API Gateway's own errors."""

import json
import re

import aws_cdk as cdk
import pytest

from authorizer.token_format import IDENTITY_VALIDATION_EXPRESSION
from controlplane.http.routes import ROUTES
from controlplane.models import plans
from controlplane.models.errors import UNAUTHORIZED_MESSAGE
from infra.config import StageConfig
from local import apigw


def _resources_of(template: dict, resource_type: str) -> dict[str, dict]:
    return {k: r for k, r in template["Resources"].items() if r["Type"] == resource_type}


def _path(template: dict, resource: dict) -> str:
    """The full path of an API Gateway resource, by walking its parents up to the API's root."""
    properties = resource["Properties"]
    parent = properties["ParentId"]
    prefix = "" if "Fn::GetAtt" in parent else _path(template, template["Resources"][parent["Ref"]])
    return f"{prefix}/{properties['PathPart']}"


def _method_properties(template: dict) -> dict[tuple[str, str], dict]:
    """Every method as {(HTTP method, path): its properties}."""
    found = {}
    for method in _resources_of(template, "AWS::ApiGateway::Method").values():
        properties = method["Properties"]
        resource = properties["ResourceId"]
        path = "/" if "Fn::GetAtt" in resource else _path(template, template["Resources"][resource["Ref"]])
        found[(properties["HttpMethod"], path)] = properties
    return found


def _methods(template: dict) -> dict[tuple[str, str], dict]:
    """Every method as {(HTTP method, path): its integration}."""
    return {key: properties["Integration"] for key, properties in _method_properties(template).items()}


def _invoked_function(integration: dict) -> str:
    """The logical id of the function a Lambda proxy integration invokes."""
    [function_id] = {part["Fn::GetAtt"][0] for part in integration["Uri"]["Fn::Join"][1] if "Fn::GetAtt" in part}
    return function_id


# What the authorizer's Deny puts in its context, as API Gateway substitutes $context.authorizer.<key>.
DENIED = {"error_code": "org_suspended", "error_message": "Organization acme is suspended"}


def _render(template: str) -> dict:
    """A gateway response template as API Gateway renders it."""
    rendered = template.replace("$context.requestId", "req-1").replace("$context.error.messageString", '"Oops"')
    for key, value in DENIED.items():
        rendered = rendered.replace(f"$context.authorizer.{key}", value)
    return json.loads(rendered)


def _authorizer_function(template: dict) -> str:
    """What API Gateway invokes to authorize: the authorizer function, or with SnapStart its alias."""
    [function_id] = [
        logical_id
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Lambda::Function"
        and resource["Properties"]["Handler"] == "authorizer.handler.lambda_handler"
    ]
    aliases = [
        logical_id
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Lambda::Alias" and resource["Properties"]["FunctionName"] == {"Ref": function_id}
    ]
    return aliases[0] if aliases else function_id


def test_every_route_is_a_method_on_its_functions_proxy_integration_and_nothing_else(dev, functions):
    # Given the route table
    expected = {(route.method, route.path): functions[route.function] for route in ROUTES}

    # When reading every method of the API but the CORS preflights (the console's origin: every stage)
    methods = {key: integration for key, integration in _methods(dev).items() if key[0] != "OPTIONS"}

    # Then the methods are exactly the routes, each proxied to the function the table names
    assert {key: _invoked_function(integration) for key, integration in methods.items()} == expected
    assert {integration["Type"] for integration in methods.values()} == {"AWS_PROXY"}


def test_cors_adds_only_preflight_methods(templates):
    # Given a stage configured with an allowed origin
    methods = _methods(templates["cors"].to_json())

    # Then the routes are unchanged and every resource answers OPTIONS with that origin and the API's headers
    assert {key for key in methods if key[0] != "OPTIONS"} == {(route.method, route.path) for route in ROUTES}
    assert {path for method, path in methods if method == "OPTIONS"} >= {route.path for route in ROUTES}
    answer = methods[("OPTIONS", "/orgs")]["IntegrationResponses"][0]
    preflight = answer["ResponseParameters"]
    # The console's origin first; the configured one is echoed back when it is the request's Origin
    assert "Distribution" in json.dumps(preflight["method.response.header.Access-Control-Allow-Origin"])
    assert "https://app.example.com" in json.dumps(answer["ResponseTemplates"])
    assert {"If-Match", "Idempotency-Key"} <= set(
        preflight["method.response.header.Access-Control-Allow-Headers"].strip("'").split(",")
    )


def test_the_local_gateway_answers_every_preflight_as_the_stacks_options_method_does(templates):
    # Given the stack's OPTIONS methods, with an origin beside the console's
    methods = _method_properties(templates["cors"].to_json())
    preflights = {path: properties for (method, path), properties in methods.items() if method == "OPTIONS"}
    origins = ["https://console.example.com", "https://app.example.com"]  # the console's first, as the stack's

    for path, properties in preflights.items():
        [stacks] = properties["Integration"]["IntegrationResponses"]
        # When the local gateway is asked OPTIONS on a concrete path of that resource, by the other origin
        local = apigw.preflight(re.sub(r"\{[^}]+\}", "x", path), {"Origin": "https://app.example.com"}, origins)

        # Then it answers with the stack's status and headers, naming the asker as the stack's template does
        assert local is not None, path
        assert stacks["StatusCode"] == str(apigw.PREFLIGHT_STATUS)
        expected = {
            name.removeprefix("method.response.header."): value.strip("'")
            for name, value in stacks["ResponseParameters"].items()
            if name != "method.response.header.Access-Control-Allow-Origin"
        }
        assert {name: value for name, value in local if name in expected} == expected, path
        added = {"Access-Control-Allow-Origin", "Content-Type", "x-amzn-RequestId"}  # by API Gateway or the template
        assert set(expected) | added == {name for name, _ in local}
        assert dict(local)["Access-Control-Allow-Origin"] == "https://app.example.com"
        assert '$origin == "https://app.example.com"' in stacks["ResponseTemplates"]["application/json"]
    # And a path that is no resource of the stack has no OPTIONS method, there or here
    assert apigw.preflight("/orgs/x/nowhere", {"Origin": "https://app.example.com"}, origins) is None


def test_every_route_requires_a_token_the_lambda_authorizer_decided_on(templates):
    for name, template in templates.items():
        # Given each stack, with and without CORS
        body = template.to_json()
        [(authorizer_id, authorizer)] = _resources_of(body, "AWS::ApiGateway::Authorizer").items()

        # When reading every method but CORS preflights, which browsers send without credentials
        methods = {key: p for key, p in _method_properties(body).items() if key[0] != "OPTIONS"}

        # Then each is a route, authorized by the one TOKEN authorizer, the authorizer function,
        # whose decision API Gateway caches per Authorization header for the default minute
        assert set(methods) == {(route.method, route.path) for route in ROUTES}, name
        for key, properties in methods.items():
            assert properties["AuthorizationType"] == "CUSTOM", key
            assert properties["AuthorizerId"] == {"Ref": authorizer_id}, key
        assert authorizer["Properties"]["Type"] == "TOKEN"
        assert authorizer["Properties"]["IdentitySource"] == "method.request.header.Authorization"
        assert authorizer["Properties"]["AuthorizerResultTtlInSeconds"] == 60
        assert _authorizer_function(body) in json.dumps(authorizer["Properties"]["AuthorizerUri"])
        # A malformed header is refused before the function, the scheme in any case (authorizer.token_format)
        assert authorizer["Properties"]["IdentityValidationExpression"] == IDENTITY_VALIDATION_EXPRESSION


def test_the_authorizer_ttl_is_a_context_key_of_at_most_five_minutes():
    app = cdk.App(context={"authorizer_ttl_seconds": "300"})
    assert StageConfig.from_context(app.node).authorizer_ttl_seconds == 300
    assert StageConfig.from_context(cdk.App(context={"authorizer_ttl_seconds": 0}).node).authorizer_ttl_seconds == 0
    with pytest.raises(ValueError, match="authorizer_ttl_seconds"):
        StageConfig.from_context(cdk.App(context={"authorizer_ttl_seconds": "301"}).node)


def test_cors_preflights_need_no_token(templates):
    methods = _method_properties(templates["cors"].to_json())

    preflights = [properties for (method, _), properties in methods.items() if method == "OPTIONS"]
    assert preflights
    assert {p.get("AuthorizationType", "NONE") for p in preflights} == {"NONE"}


def test_one_invoke_permission_per_function_scoped_to_this_api(dev, functions):
    [api_id] = _resources_of(dev, "AWS::ApiGateway::RestApi")
    permissions = _resources_of(dev, "AWS::Lambda::Permission").values()

    invoked = sorted(p["Properties"]["FunctionName"]["Fn::GetAtt"][0] for p in permissions)
    assert invoked == sorted([*functions.values(), _authorizer_function(dev)])
    for permission in permissions:
        assert permission["Properties"]["Principal"] == "apigateway.amazonaws.com"
        assert {"Ref": api_id} in permission["Properties"]["SourceArn"]["Fn::Join"][1]


def test_api_gateway_errors_answer_with_the_api_error_contract(dev):
    # Given API Gateway's own responses (no or bad token, unknown path, throttling, body too large, defaults)
    responses = {
        r["Properties"]["ResponseType"]: r["Properties"]
        for r in _resources_of(dev, "AWS::ApiGateway::GatewayResponse").values()
    }

    # When each is rendered the way API Gateway renders it
    bodies = {kind: _render(r["ResponseTemplates"]["application/json"]) for kind, r in responses.items()}

    # Then each is {"error": {code, message, request_id}} with the request's id
    for body in bodies.values():
        assert set(body) == {"error"}
        assert set(body["error"]) == {"code", "message", "request_id"}
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", body["error"]["code"])
        assert body["error"]["request_id"] == "req-1"
    # And the explicit ones carry their status and code; the defaults keep API Gateway's status
    explicit = {kind: (r.get("StatusCode"), bodies[kind]["error"]["code"]) for kind, r in responses.items()}
    assert explicit == {
        "DEFAULT_4XX": (None, "bad_request"),
        "DEFAULT_5XX": (None, "internal_error"),
        "UNAUTHORIZED": ("401", "unauthorized"),
        "ACCESS_DENIED": ("403", "org_suspended"),  # the code and message of the authorizer's Deny
        "AUTHORIZER_FAILURE": ("503", "service_unavailable"),  # JWKS or DynamoDB down: retry
        "AUTHORIZER_CONFIGURATION_ERROR": ("503", "service_unavailable"),  # the same: AWS does not say which
        "RESOURCE_NOT_FOUND": ("404", "not_found"),
        "MISSING_AUTHENTICATION_TOKEN": ("404", "not_found"),
        "THROTTLED": ("429", "throttled"),
        "QUOTA_EXCEEDED": ("429", "throttled"),
        "INVALID_API_KEY": ("503", "service_unavailable"),
        "REQUEST_TOO_LARGE": ("413", "payload_too_large"),
        "WAF_FILTERED": ("429", "throttled"),  # the web ACL's per-address rate limit
    }
    # And a throttled caller is told which limit, and when to come back
    assert bodies["THROTTLED"]["error"]["message"] == plans.THROTTLED_MESSAGE
    assert bodies["QUOTA_EXCEEDED"]["error"]["message"] == plans.QUOTA_EXCEEDED_MESSAGE
    retry_after = {
        kind: r.get("ResponseParameters", {}).get("gatewayresponse.header.Retry-After") for kind, r in responses.items()
    }
    assert {kind: value for kind, value in retry_after.items() if value} == {
        "THROTTLED": "'1'",
        "QUOTA_EXCEEDED": "'3600'",
        "INVALID_API_KEY": "'5'",
        "AUTHORIZER_FAILURE": "'1'",  # the authorizer could not decide: retry
        "AUTHORIZER_CONFIGURATION_ERROR": "'1'",
        "WAF_FILTERED": "'30'",
    }
    assert bodies["DEFAULT_4XX"]["error"]["message"] == "Oops"  # API Gateway's own message, kept
    # One static message for every 401: the gateway response cannot tell why the token was refused
    assert bodies["UNAUTHORIZED"]["error"]["message"] == UNAUTHORIZED_MESSAGE
    assert bodies["ACCESS_DENIED"]["error"]["message"] == "Organization acme is suspended"


def test_stage_is_named_after_the_stage_traced_throttled_and_access_logged_as_json(dev):
    [stage] = _resources_of(dev, "AWS::ApiGateway::Stage").values()
    properties = stage["Properties"]

    assert properties["StageName"] == "dev"
    assert properties["TracingEnabled"] is True
    assert properties["MethodSettings"] == [
        {
            "DataTraceEnabled": False,
            "HttpMethod": "*",
            "ResourcePath": "/*",
            "ThrottlingBurstLimit": 5000,
            "ThrottlingRateLimit": 10000,
        }
    ]
    access_log = json.loads(properties["AccessLogSetting"]["Format"])
    assert access_log["requestId"] == "$context.requestId"
    assert access_log["status"] == "$context.status"


def test_context_sets_the_account_limit_the_stage_throttle_derives_from_and_cors_origins():
    # Given context as the CLI passes it: every value a string, origins comma-separated
    app = cdk.App(
        context={
            "stage": "prod",
            "account_rps_limit": "5000",
            "cors_allow_origins": "https://a.example.com, https://b.example.com",
        }
    )

    # When reading the configuration
    config = StageConfig.from_context(app.node)

    # Then every key is honoured, and the stage's burst is API Gateway's: half the rate
    assert config == StageConfig(
        stage="prod",
        account_rps_limit=5000,
        cors_allow_origins=("https://a.example.com", "https://b.example.com"),
    )
    assert (config.throttle_rate_limit, config.throttle_burst_limit) == (5000, 2500)
    assert config.stack_name == "ControlPlane-prod"
    assert config.protected


def test_an_account_limit_below_one_plans_rate_is_refused_at_synth_naming_the_fix():
    with pytest.raises(ValueError, match=r"below the enterprise plan's own rate \(1000 .*Service Quotas"):
        StageConfig(account_rps_limit=999)


def test_a_region_with_a_2500_rps_account_limit_synthesizes_with_the_accounts_burst():
    # Given Cape Town, Milan, Jakarta, Zurich...: 2,500 a second, burst 1,250, below enterprise's 2,000
    config = StageConfig(stage="prod", account_rps_limit=2500)

    # Then the stage takes the account's own limits, and the plan's rate still fits under them
    assert (config.throttle_rate_limit, config.throttle_burst_limit) == (2500, 1250)
    assert plans.request_limits("enterprise").burst > config.throttle_burst_limit
    assert plans.request_limits("enterprise").per_second <= config.throttle_rate_limit


def test_without_context_the_stage_is_dev_without_cors():
    config = StageConfig.from_context(cdk.App().node)

    assert (config.stack_name, config.protected, config.cors_allow_origins) == ("ControlPlane-dev", False, ())
