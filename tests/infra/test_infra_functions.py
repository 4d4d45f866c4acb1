"""The three functions: runtime, the official Powertools layer, environment, least privilege."""

from importlib.metadata import version

import pytest

from controlplane.http.routes import FUNCTIONS, ORGANIZATIONS, TICKETS, USERS
from infra.constants import (
    AUTHORIZER_FUNCTION,
    COGNITO_ACTIONS,
    DYNAMODB_ACTIONS,
    LAMBDA_FULL_VCPU_MB,
    MEMORY_MB,
    POWERTOOLS_VERSION,
)
from local import ROOT


def _function(template: dict, logical_id: str) -> dict:
    return template["Resources"][logical_id]["Properties"]


def _statements(template: dict, function_props: dict) -> list[dict]:
    """Every statement of every inline policy attached to the function's role."""
    role = {"Ref": function_props["Role"]["Fn::GetAtt"][0]}
    policies = [
        r["Properties"]["PolicyDocument"]["Statement"]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy" and role in r["Properties"]["Roles"]
    ]
    return [statement for policy in policies for statement in policy]


def _actions(statement: dict) -> list[str]:
    actions = statement["Action"]
    return [actions] if isinstance(actions, str) else actions


# Constructs with resources of their own, tested in their own files (test_infra_limits.py, test_infra_access.py)
_LIMITS = ("TenantKeys", "UsagePlans", "Revocations", "Waf")


def _id_of(template: dict, resource_type: str) -> str:
    # The request limits' resources (another secret, queues) have their own tests: test_infra_limits.py.
    [logical_id] = [
        k for k, r in template["Resources"].items() if r["Type"] == resource_type and not k.startswith(_LIMITS)
    ]
    return logical_id


def _queue_id(template: dict) -> str:
    """The deletions queue: the one queue with a dead-letter queue."""
    [logical_id] = [
        k
        for k, r in template["Resources"].items()
        if r["Type"] == "AWS::SQS::Queue" and "RedrivePolicy" in r["Properties"] and not k.startswith(_LIMITS)
    ]
    return logical_id


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_runs_its_handler_on_python313_arm64_traced_within_api_gateways_timeout(dev, functions, name):
    properties = _function(dev, functions[name])

    assert properties["Handler"] == f"{name}.handler.lambda_handler"
    assert properties["Runtime"] == "python3.13"
    assert properties["Architectures"] == ["arm64"]
    assert properties["TracingConfig"] == {"Mode": "Active"}
    assert properties["Timeout"] < 29
    assert properties["MemorySize"] == MEMORY_MB[name]
    assert 256 <= properties["MemorySize"] < LAMBDA_FULL_VCPU_MB  # below one vCPU, CPU time costs alike
    assert "LogGroup" in properties["LoggingConfig"]


def test_lambda_ends_an_authorizer_invocation_after_its_budget_and_before_the_10_s_aws_documents(dev):
    # The decision ends itself within DECISION_SECONDS; Lambda's timeout is the backstop for what the
    # authorizer's own timeouts bound per socket operation only (a JWKS fetch that trickles). 10 s:
    # "Timeout for Lambda authorizer response" in AWS's HTTP API quotas (its REST API quotas name none).
    from authorizer import handler

    [timeout] = [
        resource["Properties"]["Timeout"]
        for resource in dev["Resources"].values()
        if resource["Type"] == "AWS::Lambda::Function"
        and resource["Properties"].get("Handler") == f"{AUTHORIZER_FUNCTION}.handler.lambda_handler"
    ]

    assert handler.DECISION_SECONDS < timeout < 10
    assert f"Lambda ends an invocation at {timeout} s" in " ".join((ROOT / "docs" / "SECURITY.md").read_text().split())


def test_functions_use_the_official_powertools_layer_of_the_pinned_version(dev, functions):
    # Given the Powertools version requirements.txt pins, which the tests run against
    assert version("aws-lambda-powertools") == POWERTOOLS_VERSION

    # When reading each function's layers
    layers = {str(_function(dev, logical_id)["Layers"]) for logical_id in functions.values()}

    # Then all use one layer, resolved at deploy time from AWS's public parameter for that version,
    # named in the template itself: no stack parameter that `cdk deploy` would keep at its old value
    [layer] = _function(dev, functions["users"])["Layers"]
    assert len(layers) == 1
    assert layer == f"{{{{resolve:ssm:/aws/service/powertools/python/arm64/python3.13/{POWERTOOLS_VERSION}}}}}"
    assert set(dev.get("Parameters", {})) <= {"BootstrapVersion"}  # CDK's own


def test_a_sam_local_synth_takes_the_layer_as_the_parameter_sam_sets(templates, functions):
    # SAM CLI resolves no SSM reference: `sam local invoke --parameter-overrides PowertoolsLayerArn=<arn>`
    sam = templates["sam"].to_json()
    by_handler = {
        r["Properties"]["Handler"]: r["Properties"]
        for r in sam["Resources"].values()
        if "Handler" in r.get("Properties", {})
    }

    assert by_handler["users.handler.lambda_handler"]["Layers"] == [{"Ref": "PowertoolsLayerArn"}]
    assert sam["Parameters"]["PowertoolsLayerArn"]["Type"] == "AWS::SSM::Parameter::Value<String>"
    path = sam["Parameters"]["PowertoolsLayerArn"]["Default"]
    assert path == f"/aws/service/powertools/python/arm64/python3.13/{POWERTOOLS_VERSION}"


@pytest.mark.parametrize(
    ("name", "extra"),
    [
        (ORGANIZATIONS, {"USER_POOL_ID", "DELETIONS_QUEUE_URL"}),  # the cascade delete, and its queue
        (USERS, {"USER_POOL_ID", "DELETIONS_QUEUE_URL"}),  # and a deleted user's ticket sweep
        (TICKETS, set()),
    ],
)
def test_function_environment_names_the_table_the_cursor_secret_powertools_and_what_it_calls(
    dev, functions, name, extra
):
    environment = _function(dev, functions[name])["Environment"]["Variables"]

    common = {
        "TABLE_NAME": {"Ref": _id_of(dev, "AWS::DynamoDB::Table")},
        "CURSOR_SECRET_ARN": {"Ref": _id_of(dev, "AWS::SecretsManager::Secret")},
        "POWERTOOLS_SERVICE_NAME": "control-plane",
        "POWERTOOLS_METRICS_NAMESPACE": "ControlPlane",
        "POWERTOOLS_TRACER_CAPTURE_RESPONSE": "false",  # no tenant data in X-Ray
        "LOG_LEVEL": "INFO",
        "CORS_ALLOW_ORIGINS": {
            "Fn::Join": ["", ["https://", {"Fn::GetAtt": [_id_of(dev, "AWS::CloudFront::Distribution"), "DomainName"]}]]
        },
    }
    references = {
        "USER_POOL_ID": {"Ref": _id_of(dev, "AWS::Cognito::UserPool")},
        "DELETIONS_QUEUE_URL": {"Ref": _queue_id(dev)},
    }
    assert environment == common | {variable: references[variable] for variable in extra}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_may_use_exactly_its_declared_dynamodb_actions_on_the_table_and_its_indexes(dev, functions, name):
    # Given the function's role
    statements = _statements(dev, _function(dev, functions[name]))

    # When collecting what it may do on DynamoDB
    dynamodb = [s for s in statements if any(action.startswith("dynamodb:") for action in _actions(s))]

    # Then that is its declared list, on the table and its indexes only
    [statement] = dynamodb
    table_arn = {"Fn::GetAtt": [_id_of(dev, "AWS::DynamoDB::Table"), "Arn"]}
    assert set(_actions(statement)) == set(DYNAMODB_ACTIONS[name])
    assert statement["Resource"] == [table_arn, {"Fn::Join": ["", [table_arn, "/index/*"]]}]


_USER_POOL_WRITES = {
    "cognito-idp:AdminCreateUser",
    "cognito-idp:AdminUpdateUserAttributes",
    "cognito-idp:AdminDeleteUser",
}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (USERS, _USER_POOL_WRITES | {"cognito-idp:AdminGetUser"}),  # a sign-in per user, kept in step
        (
            # the cascade delete removes sign-ins (and lists the org's left); a status change
            # disables or enables them; a user import creates them (and reads one that exists already)
            ORGANIZATIONS,
            {
                "cognito-idp:AdminCreateUser",
                "cognito-idp:AdminGetUser",
                "cognito-idp:AdminDeleteUser",
                "cognito-idp:ListUsers",
                "cognito-idp:AdminDisableUser",
                "cognito-idp:AdminEnableUser",
                "cognito-idp:AdminUserGlobalSignOut",
            },
        ),
        (TICKETS, set()),
    ],
)
def test_function_may_use_exactly_its_cognito_actions_on_the_user_pool(dev, functions, name, expected):
    # Given the function's role
    statements = _statements(dev, _function(dev, functions[name]))

    # When collecting what it may do on Cognito
    cognito = [s for s in statements if any(action.startswith("cognito-idp:") for action in _actions(s))]

    # Then that is exactly what its code calls, as infra/constants.py declares it, on the pool only
    granted = {action for statement in cognito for action in _actions(statement)}
    assert granted == expected == set(COGNITO_ACTIONS[name])
    pool_arn = {"Fn::GetAtt": [_id_of(dev, "AWS::Cognito::UserPool"), "Arn"]}
    assert all(statement["Resource"] == pool_arn for statement in cognito)


def _sqs_statements(template: dict, function_id: str) -> list[dict]:
    statements = _statements(template, _function(template, function_id))
    return [s for s in statements if any(action.startswith("sqs:") for action in _actions(s))]


def test_organizations_function_may_send_to_and_consume_the_deletions_queue_only(dev, functions):
    [statement] = _sqs_statements(dev, functions[ORGANIZATIONS])

    # Send: a delete that runs short of time queues the rest; the others: what the event source needs
    assert {"sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility"} <= set(
        _actions(statement)
    )
    assert statement["Resource"] == {"Fn::GetAtt": [_queue_id(dev), "Arn"]}


def test_users_function_may_only_send_to_the_deletions_queue(dev, functions):
    [statement] = _sqs_statements(dev, functions[USERS])

    # A deleted user's ticket sweep, queued for when GSI1 has caught up; it never consumes the queue
    assert set(_actions(statement)) <= {"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"}
    assert "sqs:SendMessage" in _actions(statement)
    assert statement["Resource"] == {"Fn::GetAtt": [_queue_id(dev), "Arn"]}


def test_the_tickets_function_may_not_touch_the_deletions_queue(dev, functions):
    assert _sqs_statements(dev, functions[TICKETS]) == []


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_may_read_the_cursor_secret(dev, functions, name):
    statements = _statements(dev, _function(dev, functions[name]))

    secret_reads = [s for s in statements if "secretsmanager:GetSecretValue" in _actions(s)]
    assert [s["Resource"] for s in secret_reads] == [{"Ref": _id_of(dev, "AWS::SecretsManager::Secret")}]


def test_no_policy_allows_a_wildcard_action_or_scan(dev):
    actions = {
        action
        for r in dev["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy"
        for statement in r["Properties"]["PolicyDocument"]["Statement"]
        for action in _actions(statement)
    }

    assert actions.isdisjoint({"dynamodb:*", "dynamodb:Scan", "cognito-idp:*", "sqs:*", "*"})
    assert "dynamodb:Query" in actions  # the set above is not vacuously empty


def test_cursor_secret_is_generated_by_the_stack(dev):
    secret = dev["Resources"][_id_of(dev, "AWS::SecretsManager::Secret")]["Properties"]

    assert secret["GenerateSecretString"] == {"ExcludePunctuation": True, "PasswordLength": 64}


def test_only_a_sam_local_synth_declares_the_local_variables_for_env_vars_to_set(templates, dev):
    sam = templates["sam"].to_json()
    local_only = {"AWS_ENDPOINT_URL_DYNAMODB", "CURSOR_SECRET"}

    for template, declared in ((sam, local_only), (dev, set())):
        for resource in template["Resources"].values():
            if resource["Type"] == "AWS::Lambda::Function" and resource["Properties"]["Handler"].endswith(
                ".lambda_handler"
            ):
                # The authorizer reads one item and no page: DynamoDB's endpoint, no cursor secret.
                if resource["Properties"]["Handler"] == "authorizer.handler.lambda_handler":
                    declared_here = declared - {"CURSOR_SECRET"}
                else:
                    declared_here = declared
                assert local_only & set(resource["Properties"]["Environment"]["Variables"]) == declared_here


def test_configured_cors_origins_reach_every_function(templates):
    cors = templates["cors"].to_json()

    variables = {
        resource["Properties"]["Handler"]: resource["Properties"]["Environment"]["Variables"]
        for resource in cors["Resources"].values()
        if resource["Type"] == "AWS::Lambda::Function" and resource["Properties"]["Handler"].endswith(".lambda_handler")
    }
    api_functions = [variables.pop(f"{name}.handler.lambda_handler") for name in FUNCTIONS]
    # The console's origin, then the configured one
    assert all(v["CORS_ALLOW_ORIGINS"]["Fn::Join"][1][-1] == ",https://app.example.com" for v in api_functions)
    assert "CORS_ALLOW_ORIGINS" not in variables.pop("events.handler.lambda_handler")  # it answers no browser
    assert "CORS_ALLOW_ORIGINS" not in variables.pop("authorizer.handler.lambda_handler")  # API Gateway calls it
    assert "CORS_ALLOW_ORIGINS" not in variables.pop("tenantkeys.handler.lambda_handler")  # nor does it
    assert "CORS_ALLOW_ORIGINS" not in variables.pop("revocations.handler.lambda_handler")  # nor this one
    assert variables == {}


def test_every_function_ends_before_a_units_delete_mark_or_placement_stamp_is_taken_for_stale(dev):
    from controlplane.dal import tree

    # Given every function of ours in the stack (the API's, the jobs', the consumers'; not the CDK's own)
    timeouts = {
        logical_id: r["Properties"].get("Timeout", 3)
        for logical_id, r in dev["Resources"].items()
        if r["Type"] == "AWS::Lambda::Function" and r["Properties"].get("Handler", "").endswith(".lambda_handler")
    }

    # Then each ends within the lifetime a delete's mark and a placement's stamp are given
    assert timeouts and all(seconds < tree.REQUEST_LIFETIME for seconds in timeouts.values()), timeouts
