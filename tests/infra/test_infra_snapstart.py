"""SnapStart (context key ``snap_start``, on for prod): a published version per function, snapshotted,
and an alias that API Gateway (the routes and the authorizer), the deletions queue and the table's
stream invoke; without it, the functions themselves."""

import aws_cdk as cdk
import pytest

from controlplane.http.routes import FUNCTIONS, ORGANIZATIONS
from infra.config import StageConfig
from infra.constants import AUTHORIZER_FUNCTION, EVENTS_FUNCTION
from infra.function import LIVE_ALIAS


def _of_type(template: dict, resource_type: str) -> dict[str, dict]:
    return {k: r["Properties"] for k, r in template["Resources"].items() if r["Type"] == resource_type}


def _function_ids(template: dict) -> dict[str, str]:
    return {
        properties["Handler"].split(".")[0]: logical_id
        for logical_id, properties in _of_type(template, "AWS::Lambda::Function").items()
    }


def _aliases(template: dict) -> dict[str, str]:
    """{function name: logical id of its ``live`` alias}."""
    by_function = {v: k for k, v in _function_ids(template).items()}
    return {
        by_function[properties["FunctionName"]["Ref"]]: logical_id
        for logical_id, properties in _of_type(template, "AWS::Lambda::Alias").items()
        if properties["Name"] == LIVE_ALIAS
    }


def test_prod_snapshots_every_function_behind_a_live_alias_on_its_published_version(prod):
    functions, versions = _function_ids(prod), _of_type(prod, "AWS::Lambda::Version")
    aliases = _aliases(prod)

    assert set(aliases) == {*FUNCTIONS, EVENTS_FUNCTION, AUTHORIZER_FUNCTION}
    for name in aliases:
        assert prod["Resources"][functions[name]]["Properties"]["SnapStart"] == {"ApplyOn": "PublishedVersions"}
        alias = prod["Resources"][aliases[name]]["Properties"]
        [version_id] = [k for k, v in versions.items() if v["FunctionName"] == {"Ref": functions[name]}]
        assert alias["FunctionVersion"] == {"Fn::GetAtt": [version_id, "Version"]}


def test_prod_api_gateway_invokes_only_the_aliases(prod):
    aliases = {alias for name, alias in _aliases(prod).items() if name in FUNCTIONS}
    methods = _of_type(prod, "AWS::ApiGateway::Method").values()
    integrations = [m["Integration"] for m in methods if m["Integration"]["Type"] == "AWS_PROXY"]

    invoked = {part["Ref"] for i in integrations for part in i["Uri"]["Fn::Join"][1] if "Ref" in part}
    assert invoked - {"AWS::Partition", "AWS::Region"} == aliases
    permissions = [p["FunctionName"] for p in _of_type(prod, "AWS::Lambda::Permission").values()]
    # an invoke permission on $LATEST would let a call skip the snapshot: every one names an alias
    assert all("Ref" in name for name in permissions)
    assert {name["Ref"] for name in permissions} == aliases | {_aliases(prod)[AUTHORIZER_FUNCTION]}


def test_prod_api_gateway_asks_the_authorizers_alias(prod):
    # The authorizer is on the request path at every cache miss: its cold starts restore a snapshot too
    [authorizer] = _of_type(prod, "AWS::ApiGateway::Authorizer").values()

    uri = authorizer["AuthorizerUri"]["Fn::Join"][1]
    assert {"Ref": _aliases(prod)[AUTHORIZER_FUNCTION]} in uri
    assert not [part for part in uri if "Fn::GetAtt" in part]  # not the function's own ARN ($LATEST)


@pytest.mark.parametrize(
    ("stream", "function"), [(False, ORGANIZATIONS), (True, EVENTS_FUNCTION)], ids=["queue", "stream"]
)
def test_prod_event_sources_invoke_their_functions_alias(prod, stream, function):
    mappings = [
        m
        for k, m in _of_type(prod, "AWS::Lambda::EventSourceMapping").items()
        if not k.startswith(("TenantKeys", "Revocations"))
    ]
    [mapping] = [m for m in mappings if ("StartingPosition" in m) is stream]  # only a stream has one

    alias = _aliases(prod)[function]
    parts = mapping["FunctionName"]["Fn::Join"][1]
    assert parts[-1] == f":{LIVE_ALIAS}" and {"Ref": alias} in parts[0]["Fn::Select"][1]["Fn::Split"]


def test_dev_has_no_snapstart_versions_or_aliases(dev):
    assert all("SnapStart" not in p for p in _of_type(dev, "AWS::Lambda::Function").values())
    assert _of_type(dev, "AWS::Lambda::Version") == {} and _of_type(dev, "AWS::Lambda::Alias") == {}


@pytest.mark.parametrize(
    ("context", "expected"),
    [
        ({"stage": "prod"}, True),
        ({}, False),
        ({"stage": "prod", "snap_start": "false"}, False),  # the CLI passes strings
        ({"stage": "dev", "snap_start": "true"}, True),
        ({"stage": "prod", "snap_start": False}, False),  # cdk.json passes JSON booleans
    ],
)
def test_snap_start_context_key_overrides_the_stages_default(context, expected):
    assert StageConfig.from_context(cdk.App(context=context).node).snap_start_enabled is expected


def test_a_snap_start_value_that_is_not_a_boolean_is_refused():
    with pytest.raises(ValueError, match="true or false"):
        StageConfig.from_context(cdk.App(context={"snap_start": "yes"}).node)


def test_prod_versions_are_not_retained_so_a_deploy_drops_the_previous_snapshot(prod):
    # A retained version would keep its snapshot, billed while it exists, after every deploy
    # (docs/OPERATIONS.md: each function pays for one snapshot at a time)
    versions = _of_type(prod, "AWS::Lambda::Version")

    assert len(versions) == len(FUNCTIONS) + 2  # the API functions, the events function, the authorizer
    for version in versions.values():
        assert version.get("DeletionPolicy", "Delete") == "Delete"
        assert version.get("UpdateReplacePolicy", "Delete") == "Delete"
