"""A web ACL on the API's stage: one rate-based rule per client IP, before API Gateway, the
authorizer or a usage plan sees the request (docs/SECURITY.md: one abuser and the tenants).

Cost (AWS WAF's pricing, the same in every region): 5 USD a month for the web ACL, 1 USD a month for
the rule, and 0.60 USD per million requests it inspects, allowed or blocked: about 6 USD a month plus
0.60 USD per million requests. Off with ``-c waf=false``; on by default in protected stages (prod).
"""

from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_wafv2 as wafv2
from constructs import Construct

from infra.constants import WAF_EVALUATION_WINDOW_SECONDS

RATE_RULE = "PerIpRate"
# What a caller the rule blocks reads (infra.api's WAF_FILTERED response): the one rule is a rate limit.
BLOCKED_MESSAGE = "Too many requests from this address (requests per minute); retry after Retry-After seconds"


class RateLimit(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, stage: apigw.Stage, name: str, limit: int) -> None:
        super().__init__(scope, construct_id)
        self.web_acl = wafv2.CfnWebACL(
            self,
            "WebAcl",
            scope="REGIONAL",  # a regional REST API's stage
            default_action=wafv2.CfnWebACL.DefaultActionProperty(allow={}),
            visibility_config=_visibility(name),
            rules=[
                wafv2.CfnWebACL.RuleProperty(
                    name=RATE_RULE,
                    priority=0,
                    action=wafv2.CfnWebACL.RuleActionProperty(block={}),
                    statement=wafv2.CfnWebACL.StatementProperty(
                        rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                            aggregate_key_type="IP",
                            limit=limit,
                            evaluation_window_sec=WAF_EVALUATION_WINDOW_SECONDS,
                        )
                    ),
                    visibility_config=_visibility(f"{name}-{RATE_RULE}"),
                )
            ],
        )
        wafv2.CfnWebACLAssociation(self, "Association", resource_arn=stage.stage_arn, web_acl_arn=self.web_acl.attr_arn)


def _visibility(metric_name: str) -> wafv2.CfnWebACL.VisibilityConfigProperty:
    """Blocked and allowed counts in CloudWatch, and sampled requests to see who was blocked."""
    return wafv2.CfnWebACL.VisibilityConfigProperty(
        metric_name=metric_name, cloud_watch_metrics_enabled=True, sampled_requests_enabled=True
    )
