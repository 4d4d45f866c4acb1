"""The browser console (console/): a private bucket behind CloudFront, and its settings.

The bucket is reachable only through the distribution (origin access control); CloudFront answers
HTTPS only (HTTP redirects) and adds the security headers: a Content-Security-Policy with no inline
script or style, HSTS, nosniff, no framing, no referrer. The settings (config.json: the API URL, the
Cognito domain and the console's client id) are written next to the files at deploy time; every
deploy invalidates the distribution, so a browser gets the new files on its next load.
"""

from aws_cdk import Acknowledgment, Aws, Duration, RemovalPolicy, Stack, Validations
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_cloudfront_origins as origins
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_deployment as s3deploy
from constructs import Construct

from infra.constants import CONSOLE_DIR, LOG_RETENTION


def content_security_policy(connect_src: str) -> str:
    connect = f"'self' {connect_src}".strip()
    return (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        f"connect-src {connect}; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    )


class Console(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, removal_policy: RemovalPolicy) -> None:
        super().__init__(scope, construct_id)
        self._removal_policy = removal_policy
        # Where the deployment keeps its files on delete (prod), CloudFormation cannot delete the bucket
        # once they are written, not even in the rollback of a failed first create: RETAIN, so that
        # rollback skips it rather than failing (ROLLBACK_FAILED) and blocking the next deploy.
        kept = removal_policy != RemovalPolicy.DESTROY
        self.bucket = s3.Bucket(
            self,
            "Files",
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            removal_policy=RemovalPolicy.RETAIN if kept else removal_policy,
        )
        # CloudFront is global: a response headers policy's and an origin access control's names are unique
        # in the account, and CDK's default names carry the stack but not its region, so the same stage in
        # a second region would fail ("already exists"). Both names carry the region.
        name = f"{Stack.of(self).stack_name}-{Aws.REGION}-console"
        # Until connect() names the API and Cognito, the page may connect to nothing else: fail closed.
        self._headers = headers = cloudfront.ResponseHeadersPolicy(
            self,
            "SecurityHeaders",
            response_headers_policy_name=f"{name}-headers",
            comment="The console: strict CSP, HSTS, nosniff, no framing, no referrer",
            security_headers_behavior=cloudfront.ResponseSecurityHeadersBehavior(
                content_security_policy=cloudfront.ResponseHeadersContentSecurityPolicy(
                    content_security_policy=content_security_policy(""), override=True
                ),
                strict_transport_security=cloudfront.ResponseHeadersStrictTransportSecurity(
                    access_control_max_age=Duration.days(365), include_subdomains=True, override=True
                ),
                content_type_options=cloudfront.ResponseHeadersContentTypeOptions(override=True),
                frame_options=cloudfront.ResponseHeadersFrameOptions(
                    frame_option=cloudfront.HeadersFrameOption.DENY, override=True
                ),
                referrer_policy=cloudfront.ResponseHeadersReferrerPolicy(
                    referrer_policy=cloudfront.HeadersReferrerPolicy.NO_REFERRER, override=True
                ),
            ),
        )
        self.distribution = cloudfront.Distribution(
            self,
            "Distribution",
            comment="The control plane's console",
            default_root_object="index.html",
            default_behavior=cloudfront.BehaviorOptions(
                origin=origins.S3BucketOrigin.with_origin_access_control(
                    self.bucket,
                    origin_access_control=cloudfront.S3OriginAccessControl(
                        self, "OriginAccess", origin_access_control_name=f"{name}-files"
                    ),
                ),
                viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
                response_headers_policy=headers,
                cache_policy=cloudfront.CachePolicy.CACHING_OPTIMIZED,
            ),
            http_version=cloudfront.HttpVersion.HTTP2_AND_3,
            price_class=cloudfront.PriceClass.PRICE_CLASS_100,
        )
        Validations.of(self).acknowledge(
            Acknowledgment(
                id="AwsSolutions-S1",
                reason="The console's bucket holds only the public static files of the console, written by the "
                "deployment; CloudFront is its only reader. Access logs would record nothing but deploys.",
            ),
            Acknowledgment(
                id="AwsSolutions-CFR1",
                reason="No geo restriction: operators and org admins sign in from anywhere; the API authorizes.",
            ),
            Acknowledgment(
                id="AwsSolutions-CFR2",
                reason="No WAF, as for the API (AwsSolutions-APIG3): static files behind sign-in; a web ACL is a "
                "separate cost decision.",
            ),
            Acknowledgment(
                id="AwsSolutions-CFR3",
                reason="No CloudFront access logs: the files are public static assets; every request that "
                "matters reaches the API, whose access logs record it.",
            ),
            Acknowledgment(
                id="AwsSolutions-CFR4",
                reason="The default *.cloudfront.net certificate, whose minimum TLS version CloudFront fixes; "
                "a custom domain with its own certificate (TLSv1.2_2021) is a per-deployment choice.",
            ),
        )

    @property
    def origin(self) -> str:
        """The console's origin: what the API's CORS allows, and Cognito redirects back to."""
        return f"https://{self.distribution.distribution_domain_name}"

    @property
    def url(self) -> str:
        return f"{self.origin}/"

    def connect(self, *, api_url: str, api_origin: str, cognito_domain: str, client_id: str) -> None:
        """Now that the API and the sign-in exist: the CSP's connect-src, and the settings file."""
        # The API is built after the distribution (its CORS names the console), so the CSP that names
        # the API is set here, on the policy's CloudFormation resource.
        policy = self._headers.node.default_child
        assert isinstance(policy, cloudfront.CfnResponseHeadersPolicy)
        policy.add_property_override(
            "ResponseHeadersPolicyConfig.SecurityHeadersConfig.ContentSecurityPolicy.ContentSecurityPolicy",
            content_security_policy(f"{api_origin} {cognito_domain}"),
        )
        protected = self._removal_policy != RemovalPolicy.DESTROY
        s3deploy.BucketDeployment(
            self,
            "Deploy",
            sources=[
                s3deploy.Source.asset(str(CONSOLE_DIR)),
                s3deploy.Source.json_data(
                    "config.json", {"apiUrl": api_url, "cognitoDomain": cognito_domain, "clientId": client_id}
                ),
            ],
            destination_bucket=self.bucket,
            distribution=self.distribution,
            distribution_paths=["/*"],
            # Outside prod, cdk destroy empties the bucket (this resource goes first), so it can go too.
            retain_on_delete=protected,
            memory_limit=256,
            log_group=logs.LogGroup(self, "DeployLogs", retention=LOG_RETENTION, removal_policy=self._removal_policy),
        )
        # CDK puts the deployment's function (and its role) at the stack's root, shared by the stack.
        stack = Stack.of(self)
        handler = next(c for c in stack.node.children if c.node.id.startswith("Custom::CDKBucketDeployment"))
        # Its findings, one by one: cdk-nag names each wildcard it found.
        Validations.of(handler).acknowledge(
            Acknowledgment(
                id="AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]",
                reason="CDK's BucketDeployment function writes its own logs with the policy Lambda documents for it.",
            ),
            *(
                Acknowledgment(
                    id=f"AwsSolutions-IAM5[{finding}]",
                    reason="CDK's BucketDeployment grants itself read on the CDK asset bucket, write on the console's "
                    "objects (CDK's grant_read/grant_read_write wildcards) and the invalidation it creates.",
                )
                for finding in (
                    "Action::s3:GetBucket*",
                    "Action::s3:GetObject*",
                    "Action::s3:List*",
                    "Action::s3:Abort*",
                    "Action::s3:DeleteObject*",
                    "Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*",
                    f"Resource::<{Stack.of(self).get_logical_id(self.bucket.node.default_child)}.Arn>/*",
                    "Resource::*",
                )
            ),
            Acknowledgment(
                id="AwsSolutions-L1",
                reason="CDK's BucketDeployment chooses its own custom resource runtime, pinned by aws-cdk-lib.",
            ),
        )
