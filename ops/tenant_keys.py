"""Tenants' API keys from outside the stack, with your AWS credentials (see docs/LIMITS.md).

``make tenant-keys-backfill STAGE=dev`` (``python -m ops.tenant_keys backfill --stack ControlPlane-dev``)
puts every org's key where its org item says, as the tenant-keys consumer does for one event: for
orgs created before the consumer existed, and after the key secret was lost (a destroyed and
redeployed stack), when every key's value must change. It also deletes the keys of orgs that no
longer exist. It reads the stack's settings from the consumer itself (the stack output
``TenantKeysFunctionName``, then that function's environment), so it cannot disagree with it.
Safe to run again and to interrupt: each org converges, and an org already right costs four reads.

``make tenant-keys-cleanup STAGE=dev`` (``... cleanup --stack ControlPlane-dev``) deletes every key
named ``<stack>/org/...``: the consumer creates them outside CloudFormation, so ``cdk destroy``
leaves them behind. It refuses while the stack exists, whose tenants would all be refused.

Pace: CreateApiKey and DeleteApiKey allow 5 a second per account and region (not adjustable), and
the running consumer spends up to 4 (controlplane.dal.api_keys). Both commands call them at most
``--writes-per-second`` (1 by default; up to 5 while no org is being created or deleted) and take orgs at
``ORGS_PER_SECOND``; botocore's standard retries absorb an occasional TooManyRequestsException. At
1 a second, re-keying 10,000 orgs after a secret loss (a delete and a create each) takes 5.5 hours.
"""

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any

import boto3
from botocore.exceptions import ClientError

from controlplane import config
from controlplane.dal import keys
from controlplane.dal.api_keys import ApiKeys, key_name_prefix
from controlplane.dal.table import Table
from controlplane.logic import tenant_keys
from controlplane.pacing import Throttle

CONSUMER_OUTPUT = "TenantKeysFunctionName"  # infra/tenant_keys.py
CONSUMER_SETTINGS = ("TABLE_NAME", "TENANT_KEY_SECRET_ARN", "USAGE_PLAN_IDS", "API_KEY_NAME_PREFIX")
ACCOUNT_WRITES_PER_SECOND = 5.0  # CreateApiKey's and DeleteApiKey's quota each
WRITES_PER_SECOND = 1.0  # the 1 a second the consumer leaves (it may run meanwhile)
ORGS_PER_SECOND = 2.0  # up to 4 control-plane calls each; API Gateway's total is 10 a second


def backfill(
    table: Table, keyring: ApiKeys, pace: Callable[[], None] | None = None, echo: Callable[[str], None] = print
) -> dict[str, str]:
    """Reconcile every org on GSI1's listing and every org a key is named after: org id -> its plan,
    or ``deleted`` (a key of an org that is gone)."""
    pace = pace or Throttle(ORGS_PER_SECOND).wait
    listed = {org["org_id"] for orgs in table.query_all(keys.ORGS_LISTING, on_index=True) for org in orgs}
    named = {name.removeprefix(keyring.name_prefix) for _, name in keyring.names()}
    done = {}
    for org_id in sorted(listed | named):
        pace()
        done[org_id] = tenant_keys.reconcile(org_id, table=table, keyring=keyring)
        echo(f"{org_id}: {done[org_id]}")
    return done


def cleanup(keyring: ApiKeys, echo: Callable[[str], None] = print) -> list[str]:
    """Delete every key under the keyring's name prefix; their names."""
    deleted = []
    for key_id, name in list(keyring.names()):
        keyring.delete_key(key_id)
        deleted.append(name)
        echo(f"deleted {name}")
    return deleted


def stack_exists(cloudformation: Any, stack: str) -> bool:
    """Whether the stack is there in any state but deleted (ListStacks keeps deleted ones 90 days)."""
    return any(
        summary["StackName"] == stack and summary["StackStatus"] != "DELETE_COMPLETE"
        for page in cloudformation.get_paginator("list_stacks").paginate()
        for summary in page.get("StackSummaries", [])
    )


def consumer_settings(cloudformation: Any, lambda_client: Any, stack: str) -> dict[str, str]:
    """The tenant-keys consumer's table, secret, usage plans and key name prefix, from its environment."""
    try:
        [found] = cloudformation.describe_stacks(StackName=stack)["Stacks"]
    except ClientError as error:  # a STAGE mistyped, or another region: one line, not a traceback
        if error.response.get("Error", {}).get("Code") != "ValidationError":
            raise
        raise SystemExit(f"{stack}: no such stack in this account and region (check STAGE and AWS_REGION)") from None
    outputs = {output["OutputKey"]: output["OutputValue"] for output in found.get("Outputs", [])}
    if CONSUMER_OUTPUT not in outputs:
        raise SystemExit(f"{stack} has no output {CONSUMER_OUTPUT}: deploy this version of the stack first")
    variables = lambda_client.get_function_configuration(FunctionName=outputs[CONSUMER_OUTPUT])["Environment"]
    return {name: variables["Variables"][name] for name in CONSUMER_SETTINGS}


def _keyring(settings: dict[str, str], writes_per_second: float = WRITES_PER_SECOND) -> ApiKeys:
    return ApiKeys(
        boto3.client("apigateway", config=config.CLIENT_CONFIG),
        usage_plans=json.loads(settings.get("USAGE_PLAN_IDS", "{}")),
        name_prefix=settings["API_KEY_NAME_PREFIX"],
        pace=Throttle(writes_per_second).wait,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["backfill", "cleanup"])
    parser.add_argument("--stack", required=True, help="the stack's name, e.g. ControlPlane-dev")
    parser.add_argument("--writes-per-second", type=float, default=WRITES_PER_SECOND, help="CreateApiKey+DeleteApiKey")
    args = parser.parse_args(argv)
    if not 0 < args.writes_per_second <= ACCOUNT_WRITES_PER_SECOND:
        parser.error(f"--writes-per-second must be above 0 and at most {ACCOUNT_WRITES_PER_SECOND}")
    cloudformation = boto3.client("cloudformation", config=config.CLIENT_CONFIG)
    if args.command == "cleanup":
        if stack_exists(cloudformation, args.stack):
            print(f"{args.stack} exists: its tenants need their keys. Destroy it first.", file=sys.stderr)
            return 1
        deleted = cleanup(_keyring({"API_KEY_NAME_PREFIX": key_name_prefix(args.stack)}, args.writes_per_second))
        print(f"Deleted {len(deleted)} API keys named {key_name_prefix(args.stack)}*.", file=sys.stderr)
        return 0
    settings = consumer_settings(cloudformation, boto3.client("lambda", config=config.CLIENT_CONFIG), args.stack)
    os.environ["TENANT_KEY_SECRET_ARN"] = settings["TENANT_KEY_SECRET_ARN"]  # what tenant_key() derives from
    table = Table(boto3.client("dynamodb", config=config.CLIENT_CONFIG), settings["TABLE_NAME"])
    done = backfill(table, _keyring(settings, args.writes_per_second))
    gone = sum(plan == "deleted" for plan in done.values())
    print(f"{len(done) - gone} organizations have their key in their plan; {gone} keys of deleted orgs gone.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
