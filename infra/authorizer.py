"""The API's Lambda authorizer (functions/authorizer): its function, the layer that verifies RS256,
and its one grant.

The layer (joserfc and ``cryptography``, whose wheels are compiled) is built at ``cdk synth`` without
Docker and without the network: ``make install`` downloads the pinned wheels for Lambda's
architecture and runtime into WHEELHOUSE, and the local bundling below installs from there only.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import jsii
from aws_cdk import BundlingOptions, DockerImage, ILocalBundling, RemovalPolicy
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from controlplane.dal.keys import org_partition
from infra.constants import (
    ARCHITECTURE,
    AUTHORIZER_FUNCTION,
    AUTHORIZER_REQUIREMENTS,
    AUTHORIZER_TIMEOUT,
    LAMBDA_PLATFORM,
    LOG_LEVEL,
    RUNTIME,
    WHEELHOUSE,
)
from infra.function import ControlPlaneFunction
from infra.table import ControlPlaneTable


def pip_platform_options() -> list[str]:
    """pip's options for wheels that run on Lambda: ARCHITECTURE's platform, RUNTIME's Python."""
    return [
        "--only-binary=:all:", "--platform", LAMBDA_PLATFORM, "--implementation", "cp",
        "--python-version", RUNTIME.name.removeprefix("python"),
    ]  # fmt: skip


def download_wheels() -> None:
    """``make install``: the layer's pinned wheels into WHEELHOUSE, the one step that needs the index."""
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check"]
    command += [*pip_platform_options(), "--dest", str(WHEELHOUSE), "-r", str(AUTHORIZER_REQUIREMENTS)]
    subprocess.run(command, check=True, stdout=sys.stderr)


@jsii.implements(ILocalBundling)
class _InstallFromWheelhouse:
    """pip installs the layer's pinned requirements from WHEELHOUSE for Lambda's platform, offline."""

    def try_bundle(self, output_dir: str, options: object) -> bool:
        if not WHEELHOUSE.is_dir():
            raise RuntimeError(f"{WHEELHOUSE} is missing: `make install` downloads the authorizer's wheels there")
        command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        command += ["--no-index", "--find-links", str(WHEELHOUSE), *pip_platform_options()]
        command += ["--target", str(Path(output_dir) / "python"), "-r", str(AUTHORIZER_REQUIREMENTS)]
        subprocess.run(command, check=True, stdout=sys.stderr)
        for cache in Path(output_dir).rglob("__pycache__"):
            shutil.rmtree(cache)
        return True


def verification_layer(scope: Construct) -> lambda_.LayerVersion:
    # The asset's hash is its source's: requirements.txt alone, so a code change keeps the layer.
    code = lambda_.Code.from_asset(
        str(AUTHORIZER_REQUIREMENTS.parent),
        exclude=["*", f"!{AUTHORIZER_REQUIREMENTS.name}"],
        bundling=BundlingOptions(
            image=DockerImage.from_registry("never-used-local-bundling-only"),  # local bundling never falls back
            local=_InstallFromWheelhouse(),
        ),
    )
    return lambda_.LayerVersion(
        scope,
        "TokenVerification",
        code=code,
        compatible_runtimes=[RUNTIME],
        compatible_architectures=[ARCHITECTURE],
        description="joserfc and cryptography: RS256 verification of Cognito ID tokens",
    )


class ApiAuthorizer(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        data: ControlPlaneTable,
        user_pool: cognito.IUserPool,
        clients: list[cognito.IUserPoolClient],
        removal_policy: RemovalPolicy,
        snap_start: bool = False,
    ) -> None:
        """``clients``: exactly the app clients that sign users in; their ID tokens' ``aud``."""
        super().__init__(scope, construct_id)
        issuer = user_pool.user_pool_provider_url
        authorizer = ControlPlaneFunction(
            self,
            "Function",
            name=AUTHORIZER_FUNCTION,
            layers=[verification_layer(self)],
            environment={
                "TABLE_NAME": data.table.table_name,
                "JWKS_URL": f"{issuer}/.well-known/jwks.json",
                "TOKEN_ISSUER": issuer,
                "TOKEN_AUDIENCES": ",".join(client.user_pool_client_id for client in clients),
                "LOG_LEVEL": LOG_LEVEL,
            },
            removal_policy=removal_policy,
            snap_start=snap_start,
            timeout=AUTHORIZER_TIMEOUT,
        )
        # On the request path at every cache miss: with SnapStart, API Gateway invokes the alias.
        self.function, self.target = authorizer.function, authorizer.target
        # One action on the table itself (no index), and only on org partitions: the org item and the
        # caller's user item, in one BatchGetItem.
        self.function.add_to_role_policy(
            iam.PolicyStatement(
                actions=["dynamodb:BatchGetItem"],
                resources=[data.table.table_arn],
                conditions={"ForAllValues:StringLike": {"dynamodb:LeadingKeys": [org_partition("*")]}},
            )
        )

    def use_keys(self, tenant_key_secret: secretsmanager.ISecret, operators_key: secretsmanager.ISecret) -> None:
        """Read the secrets the usage plan keys come from, once per container."""
        self.function.add_environment("TENANT_KEY_SECRET_ARN", tenant_key_secret.secret_arn)
        self.function.add_environment("OPERATORS_KEY_ARN", operators_key.secret_arn)
        tenant_key_secret.grant_read(self.function)
        operators_key.grant_read(self.function)


if __name__ == "__main__":
    download_wheels()
