"""A small evaluator of the resource policies in a synthesized template: may this request go through?

It answers the way IAM does for a request within one account: an explicit Deny that matches wins;
otherwise an Allow must match the principal, the action, the resource and every condition; otherwise
the request is denied implicitly. Intrinsic functions are resolved in one made-up deployment
(ENVIRONMENT), a resource's Ref or ``Arn`` to the ARN it would have there. Whatever it does not know (a
condition operator, an intrinsic, NotPrincipal) raises instead of guessing, so a test cannot pass
through something the evaluator skipped.
"""

import re
from dataclasses import dataclass, field
from enum import Enum

ENVIRONMENT = {
    "AWS::Partition": "aws",
    "AWS::Region": "eu-west-1",
    "AWS::AccountId": "111122223333",
    "AWS::URLSuffix": "amazonaws.com",
}
ACCOUNT, REGION = ENVIRONMENT["AWS::AccountId"], ENVIRONMENT["AWS::Region"]


class Decision(Enum):
    ALLOW = "allow"
    EXPLICIT_DENY = "explicit deny"
    IMPLICIT_DENY = "implicit deny"


@dataclass(frozen=True)
class Request:
    principal: tuple[str, str]  # ("Service", "cloudwatch.amazonaws.com") or ("AWS", "<an IAM ARN>")
    action: str
    resource: str
    context: dict[str, str] = field(default_factory=dict)  # condition keys: aws:SourceArn, aws:SecureTransport...


def arn_of(template: dict, logical_id: str) -> str:
    resource = template["Resources"][logical_id]
    properties = resource.get("Properties", {})
    match resource["Type"]:
        case "AWS::SNS::Topic":
            return f"arn:aws:sns:{REGION}:{ACCOUNT}:{properties.get('TopicName', logical_id)}"
        case "AWS::CloudWatch::Alarm":
            return f"arn:aws:cloudwatch:{REGION}:{ACCOUNT}:alarm:{properties.get('AlarmName', logical_id)}"
    raise NotImplementedError(f"the ARN of a {resource['Type']}")


def resolve(template: dict, value) -> str:
    """A template value as a string, its intrinsics resolved in ENVIRONMENT."""
    if isinstance(value, str):
        return value
    match value:
        case {"Ref": name} if name in ENVIRONMENT:
            return ENVIRONMENT[name]
        case {"Ref": logical_id} if template["Resources"][logical_id]["Type"] == "AWS::SNS::Topic":
            return arn_of(template, logical_id)  # a topic's Ref is its ARN
        case {"Fn::GetAtt": [logical_id, "Arn"]}:
            return arn_of(template, logical_id)
        case {"Fn::Join": [separator, parts]}:
            return separator.join(resolve(template, part) for part in parts)
    raise NotImplementedError(f"resolving {value!r}")


def decide(template: dict, statements: list[dict], request: Request) -> Decision:
    matching = [s["Effect"] for s in statements if _matches(template, s, request)]
    if "Deny" in matching:
        return Decision.EXPLICIT_DENY
    return Decision.ALLOW if "Allow" in matching else Decision.IMPLICIT_DENY


def _matches(template: dict, statement: dict, request: Request) -> bool:
    for unsupported in ("NotPrincipal", "NotAction", "NotResource"):
        if unsupported in statement:
            raise NotImplementedError(unsupported)
    return (
        _principal_matches(statement["Principal"], request.principal)
        and any(_like(pattern, request.action, case_sensitive=False) for pattern in _listed(statement["Action"]))
        and any(_like(resolve(template, r), request.resource) for r in _listed(statement["Resource"]))
        and all(
            _condition_holds(template, operator, key, values, request.context)
            for operator, keys in statement.get("Condition", {}).items()
            for key, values in keys.items()
        )
    )


def _principal_matches(principal, requester: tuple[str, str]) -> bool:
    if principal == "*":
        return True
    kind, name = requester
    return any(entry in ("*", name) for entry in _listed(principal.get(kind, [])))


def _condition_holds(template: dict, operator: str, key: str, values, context: dict[str, str]) -> bool:
    operator, if_exists = operator.removesuffix("IfExists"), operator.endswith("IfExists")
    keys = {name.lower(): value for name, value in context.items()}  # condition keys ignore case
    if key.lower() not in keys:
        return if_exists
    actual, expected = keys[key.lower()], [resolve(template, v) for v in _listed(values)]
    match operator:
        case "Bool":
            return actual.lower() in [str(v).lower() for v in expected]
        case "StringEquals" | "ArnEquals":
            return actual in expected
        case "StringLike" | "ArnLike":
            return any(_like(pattern, actual) for pattern in expected)
    raise NotImplementedError(f"condition operator {operator}")


def _like(pattern: str, value: str, *, case_sensitive: bool = True) -> bool:
    """IAM's wildcards: * any run of characters, ? one character."""
    regex = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    return re.fullmatch(regex, value, flags=0 if case_sensitive else re.IGNORECASE) is not None


def _listed(value) -> list:
    return value if isinstance(value, list) else [value]


def sns_default_policy(topic_arn: str) -> list[dict]:
    """The policy SNS gives a topic that has none of its own: the owning account may publish (and manage)."""
    return [
        {
            "Effect": "Allow",
            "Principal": {"AWS": "*"},
            "Action": ["SNS:Publish", "SNS:Subscribe", "SNS:GetTopicAttributes", "SNS:SetTopicAttributes"],
            "Resource": topic_arn,
            "Condition": {"StringEquals": {"AWS:SourceOwner": ACCOUNT}},
        }
    ]


def topic_policy(template: dict, topic_arn: str) -> list[dict]:
    """The statements that govern ``topic_arn``: its topic policies', or SNS's default without one
    (a topic policy replaces the default, it does not add to it)."""
    statements = [
        statement
        for resource in template["Resources"].values()
        if resource["Type"] == "AWS::SNS::TopicPolicy"
        and topic_arn in [resolve(template, topic) for topic in resource["Properties"]["Topics"]]
        for statement in resource["Properties"]["PolicyDocument"]["Statement"]
    ]
    return statements or sns_default_policy(topic_arn)
