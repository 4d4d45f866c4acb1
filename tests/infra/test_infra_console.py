"""The console in the stack: private bucket behind CloudFront, security headers, settings written at
deploy time, CORS for its origin only, Cognito's managed login with the code grant."""

import json

from aws_cdk.assertions import Match


def _of_type(template: dict, kind: str) -> dict[str, dict]:
    return {k: r for k, r in template["Resources"].items() if r["Type"] == kind}


def _one(template: dict, kind: str) -> tuple[str, dict]:
    found = _of_type(template, kind)
    assert len(found) == 1, (kind, list(found))
    return next(iter(found.items()))


def test_bucket_is_private_and_readable_only_through_cloudfront_with_origin_access_control(dev):
    _, bucket = _one(dev, "AWS::S3::Bucket")
    assert bucket["Properties"]["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    _, oac = _one(dev, "AWS::CloudFront::OriginAccessControl")
    assert oac["Properties"]["OriginAccessControlConfig"]["SigningBehavior"] == "always"
    _, distribution = _one(dev, "AWS::CloudFront::Distribution")
    config = distribution["Properties"]["DistributionConfig"]
    assert config["DefaultCacheBehavior"]["ViewerProtocolPolicy"] == "redirect-to-https"
    assert config["DefaultRootObject"] == "index.html"
    assert "OriginAccessControlId" in config["Origins"][0]
    _, policy = _one(dev, "AWS::S3::BucketPolicy")
    readers = [s for s in policy["Properties"]["PolicyDocument"]["Statement"] if s["Effect"] == "Allow"]
    assert [s["Principal"] for s in readers] == [{"Service": "cloudfront.amazonaws.com"}]


def test_security_headers_forbid_inline_script_and_framing(dev):
    _, policy = _one(dev, "AWS::CloudFront::ResponseHeadersPolicy")
    headers = policy["Properties"]["ResponseHeadersPolicyConfig"]["SecurityHeadersConfig"]
    csp = json.dumps(headers["ContentSecurityPolicy"]["ContentSecurityPolicy"])
    assert "script-src 'self';" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
    assert "execute-api" in csp and "amazoncognito.com" in csp  # connect-src: the API and the sign-in only
    assert headers["StrictTransportSecurity"]["AccessControlMaxAgeSec"] == 365 * 24 * 3600
    assert headers["ContentTypeOptions"] == {"Override": True}
    assert headers["FrameOptions"]["FrameOption"] == "DENY"
    assert headers["ReferrerPolicy"]["ReferrerPolicy"] == "no-referrer"


def test_settings_are_written_at_deploy_time_from_the_stack(dev):
    _, deployment = _one(dev, "Custom::CDKBucketDeployment")
    markers = json.dumps(deployment["Properties"]["SourceMarkers"])
    assert "RestApi" in markers and "ConsoleClient" in markers and "Domain" in markers
    assert deployment["Properties"]["DistributionPaths"] == ["/*"]
    assert deployment["Properties"]["RetainOnDelete"] is False  # cdk destroy empties the bucket outside prod


def test_prod_keeps_the_console_bucket_and_its_files(prod):
    _, bucket = _one(prod, "AWS::S3::Bucket")
    _, deployment = _one(prod, "Custom::CDKBucketDeployment")
    assert deployment["Properties"]["RetainOnDelete"] is True
    # even after a failed first create: once the deployment has written the files, which it keeps,
    # CloudFormation cannot delete the bucket ("The bucket you tried to delete is not empty"), so a
    # rollback that tried (RetainExceptOnCreate) would end in ROLLBACK_FAILED, and so would the
    # stack delete with which `cdk deploy` starts its next attempt
    assert bucket["DeletionPolicy"] == bucket["UpdateReplacePolicy"] == "Retain"


def _console_origin() -> dict:
    return {"Fn::Join": ["", ["https://", {"Fn::GetAtt": [Match.string_like_regexp("Distribution"), "DomainName"]}]]}


def test_cors_allows_exactly_the_console_origin(templates):
    template = templates["dev"]
    options = _of_type(template.to_json(), "AWS::ApiGateway::Method")
    preflights = [m for m in options.values() if m["Properties"]["HttpMethod"] == "OPTIONS"]
    assert preflights
    for method in preflights:
        origin = method["Properties"]["Integration"]["IntegrationResponses"][0]["ResponseParameters"][
            "method.response.header.Access-Control-Allow-Origin"
        ]
        assert "Distribution" in json.dumps(origin) and "*" not in json.dumps(origin)
    for function in _of_type(template.to_json(), "AWS::Lambda::Function").values():
        variables = function["Properties"].get("Environment", {}).get("Variables", {})
        if "CORS_ALLOW_ORIGINS" in variables:
            assert "Distribution" in json.dumps(variables["CORS_ALLOW_ORIGINS"])


def test_gateway_responses_carry_the_console_origin(dev):
    responses = _of_type(dev, "AWS::ApiGateway::GatewayResponse")
    kinds = {r["Properties"]["ResponseType"] for r in responses.values()}
    assert {"UNAUTHORIZED", "ACCESS_DENIED", "THROTTLED", "DEFAULT_5XX", "DEFAULT_4XX"} <= kinds
    for response in responses.values():
        origin = response["Properties"]["ResponseParameters"]["gatewayresponse.header.Access-Control-Allow-Origin"]
        assert "Distribution" in json.dumps(origin)


def test_console_signs_in_with_the_code_grant_and_returns_only_to_itself(dev):
    clients = _of_type(dev, "AWS::Cognito::UserPoolClient")
    console = next(c["Properties"] for k, c in clients.items() if "ConsoleClient" in k)
    assert console["AllowedOAuthFlows"] == ["code"]
    assert console["AllowedOAuthFlowsUserPoolClient"] is True
    assert console["GenerateSecret"] is False
    assert sorted(console["AllowedOAuthScopes"]) == ["email", "openid", "profile"]
    assert "Distribution" in json.dumps(console["CallbackURLs"]) and console["CallbackURLs"] == console["LogoutURLs"]
    _, domain = _one(dev, "AWS::Cognito::UserPoolDomain")
    assert domain["Properties"]["ManagedLoginVersion"] == 2
    other = [c["Properties"] for k, c in clients.items() if "ConsoleClient" not in k]
    assert all("AllowedOAuthFlows" not in c for c in other)  # the API's client keeps OAuth off


def test_cloudfronts_account_wide_names_carry_the_stack_and_its_region(templates):
    # CloudFront is global: a response headers policy's and an origin access control's name must be
    # unique in the account, so the same stage in a second region would fail ("already exists")
    # unless the region is in the name
    named = {
        "AWS::CloudFront::ResponseHeadersPolicy": "ResponseHeadersPolicyConfig",
        "AWS::CloudFront::OriginAccessControl": "OriginAccessControlConfig",
    }
    for stage in ("dev", "prod"):
        template = templates[stage].to_json()
        for kind, config in named.items():
            _, resource = _one(template, kind)
            name = resource["Properties"][config]["Name"]

            assert isinstance(name, dict), (kind, name)
            assert name["Fn::Join"][1][:2] == [f"ControlPlane-{stage}-", {"Ref": "AWS::Region"}], (kind, name)
