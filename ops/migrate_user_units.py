"""One-off migration: put every user stored before org units (issue 27) in their org's root unit,
with the GSI2 keys that list them by unit.

``make migrate-user-units TABLE=<table>`` (``python -m ops.migrate_user_units --table <table>``)
runs it with your AWS credentials against any table. No downtime: until it has run, such users read
as in the root (the API's default) and are missing only from the unit listings; it can run while the
API serves, and again, and be interrupted: a user that has GSI2 keys (created, moved or migrated
since) is left alone.

Per org (GSI1 ``ORGS``, every page): its users (every page of ``USER#``), then per user without
``GSI2PK`` one UpdateItem on condition ``attribute_not_exists(GSI2PK)``.
"""

import argparse
import sys

import boto3

from controlplane import config
from controlplane.dal import keys
from controlplane.dal.codec import to_dynamo
from controlplane.dal.conditions import ConditionFailed
from controlplane.dal.schema import GSI2_PARTITION_KEY, GSI2_SORT_KEY, PARTITION_KEY
from controlplane.dal.table import Table, translate
from controlplane.models.ids import ROOT_UNIT
from ops.tables import refused_if_missing


def migrate(table: Table, echo=print) -> int:
    """Place each unplaced user in the root; how many this run placed."""
    placed = 0
    for orgs in table.query_all(keys.ORGS_LISTING, on_index=True):
        for org in orgs:
            for users in table.query_all(keys.org_partition(org["org_id"]), prefix=keys.USER_PREFIX):
                placed += sum(place_in_root(table, user) for user in users if GSI2_PARTITION_KEY not in user)
            echo(f"{org['org_id']}: done")
    return placed


def place_in_root(table: Table, user: dict) -> bool:
    member = keys.member_keys(user["org_id"], user["user_id"], ())
    try:
        with translate():
            table.client.update_item(
                TableName=table.name,
                Key=to_dynamo(keys.base_key(user)),
                UpdateExpression="SET #gpk = :gpk, #gsk = :gsk, #unit = :unit, #path = :path",
                ConditionExpression="attribute_exists(#pk) AND attribute_not_exists(#gpk)",
                ExpressionAttributeNames={
                    "#pk": PARTITION_KEY,
                    "#gpk": GSI2_PARTITION_KEY,
                    "#gsk": GSI2_SORT_KEY,
                    "#unit": "unit",
                    "#path": "unit_path",
                },
                ExpressionAttributeValues=to_dynamo(
                    {
                        ":gpk": member[GSI2_PARTITION_KEY],
                        ":gsk": member[GSI2_SORT_KEY],
                        ":unit": ROOT_UNIT,
                        ":path": "/",
                    }
                ),
            )
    except ConditionFailed:  # deleted, or placed by the API meanwhile
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", required=True, help="the table (the stack's TableName output)")
    args = parser.parse_args(argv)
    with refused_if_missing(parser, f"--table {args.table}"):
        placed = migrate(Table(boto3.client("dynamodb", config=config.CLIENT_CONFIG), args.table))
    print(f"Placed {placed} users in their org's root unit.", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
