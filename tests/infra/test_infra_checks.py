"""Static checks of the synthesized templates: cfn-lint and cdk-nag's AWS Solutions rules."""

import json

from cdk_nag import AwsSolutionsChecks
from cfnlint.api import lint

REGIONS = ["us-east-1", "eu-west-1"]


def _cdk_function_role_dependency(match, template: dict) -> bool:
    """W3005 on a function's DependsOn its own role. CDK's Function always depends on its role
    construct, so that the role's policy exists before the function does; the role half repeats the
    GetAtt in ``Role``. Redundant and harmless, and only removable by overriding CDK's own logic."""
    resource = match.path[1]
    return (
        match.rule.id == "W3005"
        and template["Resources"][resource]["Type"] == "AWS::Lambda::Function"
        and match.message.endswith(f"'Resources/{resource}/Properties/Role'")
    )


def test_cfn_lint_finds_no_errors_or_warnings(templates):
    # Given each synthesized template (dev, prod, with CORS)
    problems = {}
    for name, template in templates.items():
        # When cfn-lint checks it for errors and warnings
        body = template.to_json()
        matches = lint(json.dumps(body), regions=REGIONS)
        problems[name] = [f"{m.rule.id} {m.message}" for m in matches if not _cdk_function_role_dependency(m, body)]

    # Then it finds nothing but CDK's redundant role dependency, explained above
    assert problems == {name: [] for name in templates}


def test_cdk_nag_aws_solutions_finds_no_unacknowledged_error_or_warning(stacks):
    # Given each stack, whose acknowledged findings each carry a written reason in infra/
    findings = {}
    for name, stack in stacks.items():
        # When the AWS Solutions pack checks it
        report = AwsSolutionsChecks(verbose=True).validate_scope(stack)
        findings[name] = [f"{v.severity} {v.rule_name}: {v.description}" for v in report.violations]

    # Then nothing is left, errors and warnings alike
    assert findings == {name: [] for name in stacks}
