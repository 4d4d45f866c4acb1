"""The REST API: resources and methods from the route table, each behind the Lambda authorizer,
stage settings, and API Gateway's own error responses in the same JSON shape the functions answer with."""

import json

from aws_cdk import Acknowledgment, Aws, Duration, RemovalPolicy, Validations
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from authorizer.token_format import IDENTITY_VALIDATION_EXPRESSION
from controlplane.http.errors import error_body
from controlplane.http.routes import ROUTES
from controlplane.models import plans
from controlplane.models.errors import UNAUTHORIZED_MESSAGE
from infra.config import StageConfig
from infra.constants import CORS_REQUEST_HEADERS, LOG_RETENTION, WAF_RETRY_AFTER_SECONDS
from infra.waf import BLOCKED_MESSAGE

AUTHORIZER_FAILURE_MESSAGE = "The API cannot check your token right now; retry later"
# What the authorizer's Deny puts in its context (functions/authorizer/handler.py).
_DENIED_CODE, _DENIED_MESSAGE = "$context.authorizer.error_code", "$context.authorizer.error_message"

# (response type, status code or None to keep API Gateway's, error code, message or None for API
# Gateway's own, Retry-After or None). An unknown path or method is MISSING_AUTHENTICATION_TOKEN,
# whatever the token. The authorizer (functions/authorizer) raises for a missing, invalid or expired
# token (one static message: the gateway response cannot tell why): UNAUTHORIZED. Its Deny (a
# suspended org: org_suspended; a user or org deleted: session_ended) is ACCESS_DENIED, with the code
# and message it puts in its context ($context.authorizer.<key>). When it cannot decide (JWKS or
# DynamoDB down) it raises: a 503 to retry, never an Allow, as AUTHORIZER_FAILURE and as
# AUTHORIZER_CONFIGURATION_ERROR both (AWS does not say which a raised error or a timed-out authorizer
# gives; users report the latter's 500 "AuthorizerConfigurationException", else an internal_error). THROTTLED is a
# tenant's usage plan (or the stage) out of requests per second; QUOTA_EXCEEDED its daily quota (a
# static Retry-After: the template cannot count the hours to midnight UTC). INVALID_API_KEY is the
# seconds after an org's creation or plan change, before the tenant-keys consumer has put its key in
# its usage plan: a retry, not a refusal. WAF_FILTERED is the web ACL's block (infra.waf): its one rule
# is a per-address rate limit, so a throttle too, not API Gateway's default 403 bad_request "Forbidden".
_GATEWAY_ERRORS = (
    (apigw.ResponseType.DEFAULT_4_XX, None, "bad_request", None, None),
    (apigw.ResponseType.DEFAULT_5_XX, None, "internal_error", None, None),
    (apigw.ResponseType.UNAUTHORIZED, "401", "unauthorized", UNAUTHORIZED_MESSAGE, None),
    (apigw.ResponseType.ACCESS_DENIED, "403", _DENIED_CODE, _DENIED_MESSAGE, None),
    (apigw.ResponseType.AUTHORIZER_FAILURE, "503", "service_unavailable", AUTHORIZER_FAILURE_MESSAGE, "1"),
    (apigw.ResponseType.AUTHORIZER_CONFIGURATION_ERROR, "503", "service_unavailable", AUTHORIZER_FAILURE_MESSAGE, "1"),
    (apigw.ResponseType.RESOURCE_NOT_FOUND, "404", "not_found", "No route for this method and path", None),
    (apigw.ResponseType.MISSING_AUTHENTICATION_TOKEN, "404", "not_found", "No route for this method and path", None),
    (apigw.ResponseType.THROTTLED, "429", "throttled", plans.THROTTLED_MESSAGE, "1"),
    (apigw.ResponseType.QUOTA_EXCEEDED, "429", "throttled", plans.QUOTA_EXCEEDED_MESSAGE, "3600"),
    (apigw.ResponseType.INVALID_API_KEY, "503", "service_unavailable", plans.KEY_PENDING_MESSAGE, "5"),
    (apigw.ResponseType.WAF_FILTERED, "429", "throttled", BLOCKED_MESSAGE, str(WAF_RETRY_AFTER_SECONDS)),
    (apigw.ResponseType.REQUEST_TOO_LARGE, "413", "payload_too_large", "The request body is too large", None),
)


_MESSAGE = "<message>"


def error_template(code: str, message: str | None) -> str:
    """The API's error body as a mapping template. ``messageString`` is API Gateway's message, quoted;
    a ``$context`` variable of the authorizer's is a plain string, so it is quoted here."""
    if message and message.startswith("$context."):
        quoted_message = f'"{message}"'
    else:
        quoted_message = json.dumps(message) if message else "$context.error.messageString"
    # The body's message is a template expression, not a string: put it in after json.dumps.
    body = json.dumps(error_body(code, _MESSAGE, "$context.requestId"))
    return body.replace(json.dumps(_MESSAGE), quoted_message)


class Api(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        authorizer: lambda_.IFunction,
        removal_policy: RemovalPolicy,
        console_origin: str,
    ):
        super().__init__(scope, construct_id)
        access_logs = logs.LogGroup(self, "AccessLogs", retention=LOG_RETENTION, removal_policy=removal_policy)
        # The console's origin, and any other the stage's context adds.
        cors = apigw.CorsOptions(
            allow_origins=[console_origin, *config.cors_allow_origins],
            allow_headers=[*apigw.Cors.DEFAULT_HEADERS, *CORS_REQUEST_HEADERS],
        )
        self.api = apigw.RestApi(
            self,
            "RestApi",
            rest_api_name=config.stack_name,
            endpoint_types=[apigw.EndpointType.REGIONAL],
            # Each org's usage plan key comes from the authorizer (usageIdentifierKey), never from a client.
            api_key_source_type=apigw.ApiKeySourceType.AUTHORIZER,
            # Access logs need the account's CloudWatch role in this region: without it the stage fails to
            # create ("CloudWatch Logs role ARN must be set in account settings to enable logging"). The
            # setting outlives the stack, so the role it names is kept when the stack is deleted.
            cloud_watch_role=config.api_gateway_account_role,
            cloud_watch_role_removal_policy=RemovalPolicy.RETAIN if config.api_gateway_account_role else None,
            default_cors_preflight_options=cors,
            deploy_options=apigw.StageOptions(
                stage_name=config.stage,
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=apigw.AccessLogFormat.json_with_standard_fields(
                    caller=True,
                    http_method=True,
                    ip=True,
                    protocol=True,
                    request_time=True,
                    resource_path=True,
                    response_length=True,
                    status=True,
                    user=True,
                ),
                tracing_enabled=True,
                throttling_rate_limit=config.throttle_rate_limit,
                throttling_burst_limit=config.throttle_burst_limit,
            ),
        )
        if config.api_gateway_account_role:
            Validations.of(self.api.node.find_child("CloudWatchRole")).acknowledge(
                Acknowledgment(
                    id="AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                    "AmazonAPIGatewayPushToCloudWatchLogs]",
                    reason="The policy AWS keeps for exactly this role: API Gateway writing the account's "
                    "API logs to CloudWatch Logs. A copy of it here would only fall behind.",
                )
            )
        # TOKEN type: the decision depends on the Authorization header alone, which is then the cache key;
        # a cached decision covers every method, so one token costs one authorizer call per TTL.
        self.authorizer = apigw.TokenAuthorizer(
            self,
            "Authorizer",
            handler=authorizer,
            identity_source=apigw.IdentitySource.header("Authorization"),
            # A header that is not a bearer JWT is 401 without invoking the authorizer (authorizer.token_format).
            validation_regex=IDENTITY_VALIDATION_EXPRESSION,
            results_cache_ttl=Duration.seconds(config.authorizer_ttl_seconds),
        )
        # The stack outputs the URL without the trailing slash, under a plain name, instead of this one.
        self.api.node.try_remove_child("Endpoint")
        for response_type, status, code, message, retry_after in _GATEWAY_ERRORS:
            self.api.add_gateway_response(
                response_type.response_type,
                type=response_type,
                status_code=status,
                templates={"application/json": error_template(code, message)},
                # So the console can read API Gateway's own refusals (401, 403, 429, 5xx) too. One
                # static value is all a gateway response can carry: the console's.
                response_headers={
                    "Access-Control-Allow-Origin": f"'{console_origin}'",
                    "Access-Control-Expose-Headers": "'Retry-After'",
                    "Vary": "'Origin'",
                    **({"Retry-After": f"'{retry_after}'"} if retry_after else {}),
                },
            )
        Validations.of(self.api).acknowledge(
            Acknowledgment(
                id="AwsSolutions-APIG2",
                reason="The functions validate every request against their pydantic models and answer 422 "
                "with the API's error contract; API Gateway models would be a second copy that could drift.",
            ),
            Acknowledgment(
                id="AwsSolutions-COG4",
                reason="A Lambda authorizer (functions/authorizer) verifies the user pool's ID tokens as the "
                "Cognito authorizer did (RS256 against the pool's JWKS, iss, aud, token_use, exp) and also "
                "denies suspended tenants, which a Cognito authorizer cannot know.",
            ),
            *(
                ()
                if config.waf_enabled
                else (
                    Acknowledgment(
                        id="AwsSolutions-APIG3",
                        reason="The web ACL is off in this stage (-c waf=false, or not prod): stage throttling "
                        "and the usage plans bound abuse; infra/waf.py has its cost.",
                    ),
                )
            ),
            Acknowledgment(
                id="AwsSolutions-APIG6",
                reason="Execution logging is off on purpose: it would log each request a second time, at a cost "
                "per request; the stage's JSON access logs, X-Ray and the functions' structured logs cover "
                "every request. (Access logs need the account's CloudWatch role too: api_gateway_account_role.)",
            ),
        )

    @property
    def url(self) -> str:
        """The stage's base URL, without a trailing slash: append paths like ``/orgs``."""
        return f"{self.origin}/{self.api.deployment_stage.stage_name}"

    @property
    def origin(self) -> str:
        """Where the API answers browsers from: the console's CSP lets it connect there."""
        return f"https://{self.api.rest_api_id}.execute-api.{Aws.REGION}.{Aws.URL_SUFFIX}"

    def add_routes(self, functions: dict[str, lambda_.IFunction]) -> None:
        """Every route of the route table, each to its function behind the authorizer; one integration
        (and one invoke permission for the whole API) per function, not per route."""
        integrations = {
            name: apigw.LambdaIntegration(function, scope_permission_to_method=False)
            for name, function in functions.items()
        }
        for route in ROUTES:
            self.api.root.resource_for_path(route.path).add_method(
                route.method,
                integrations[route.function],
                authorizer=self.authorizer,
                api_key_required=self.tenant_keys_required,
            )

    @property
    def tenant_keys_required(self) -> bool:
        """Methods require a usage plan key where the authorizer can return one: a Lambda
        authorizer (usageIdentifierKey). Cognito's cannot, and would then refuse every request."""
        return isinstance(self.authorizer, apigw.RequestAuthorizer | apigw.TokenAuthorizer)
