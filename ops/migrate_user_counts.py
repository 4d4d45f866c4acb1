"""One-off migration: give every organization stored before seats were counted its ``user_count``
(and the ``user_limit`` of its plan).

``make migrate-user-counts TABLE=<table>`` (``python -m ops.migrate_user_counts --table <table>``)
runs it with your AWS credentials against any table; locally, point it at DynamoDB Local with
``AWS_ENDPOINT_URL_DYNAMODB``. Run it right after deploying the code that counts seats: until an org
is counted its user creates and deletes answer 503 (a count that started wrong would stay wrong), so
its users cannot change while they are counted. It is safe to run again and to interrupt: an org that
has a count is left alone, whatever this run or the API wrote first. The count goes on the org item,
as it did then; ``ops.migrate_seats`` (or the org's first seat write) then moves it to its own item.

Per org (GSI1 ``ORGS``, every page): a strongly consistent GetItem of its seat counter, one Query
``Select=COUNT`` of its ``USER#`` items (every page, strongly consistent), then one TransactWriteItems:
the org's Update on condition ``attribute_not_exists(user_count)``, and a ConditionCheck that its
counter item does not exist.
"""

import argparse
import sys
from dataclasses import dataclass, field

import boto3

from controlplane import config
from controlplane.dal import keys
from controlplane.dal.codec import to_dynamo
from controlplane.dal.conditions import ConditionFailed
from controlplane.dal.schema import PARTITION_KEY, SORT_KEY
from controlplane.dal.table import Table, translate
from controlplane.dal.transactions import transact
from controlplane.models import plans
from ops.tables import refused_if_missing


@dataclass
class Report:
    counted: dict[str, int] = field(default_factory=dict)  # org_id -> users, for the orgs this run counted
    already: list[str] = field(default_factory=list)  # had a count (or went) before this run wrote one
    over_limit: dict[str, tuple[int, int]] = field(default_factory=dict)  # org_id -> (users, limit)


def migrate(table: Table, echo=print) -> Report:
    report = Report()
    for orgs in table.query_all(keys.ORGS_LISTING, on_index=True):
        for org in orgs:
            org_id = org["org_id"]
            # A counter on its own item: nothing to count (read strongly consistent, to spare the
            # count; the write below checks it again, for one that moves meanwhile).
            if plans.USER_COUNT in org or table.get(keys.seats_key(org_id), consistent=True) is not None:
                report.already.append(org_id)
                continue
            users = count(table, keys.org_partition(org_id), keys.USER_PREFIX)
            limit = int(org.get(plans.USER_LIMIT, plans.limit(org["plan"])))
            if not start_counter(table, org_id, users, plans.limit(org["plan"])):
                report.already.append(org_id)
                continue
            report.counted[org_id] = users
            echo(f"{org_id}: {users} of {limit} seats")
            if users > limit:
                # Counted as they are: no one is removed, and no one joins until enough have left.
                report.over_limit[org_id] = (users, limit)
                echo(f"{org_id}: over its {org['plan']} plan's limit; new users are refused until it is under")
    return report


def count(table: Table, partition: str, prefix: str) -> int:
    """How many items of a partition have a sort key starting with ``prefix``; every page,
    strongly consistent (the migration counts what is there, not what was)."""
    total, start_key = 0, None
    while True:
        request = {
            "TableName": table.name,
            "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :prefix)",
            "ExpressionAttributeNames": {"#pk": PARTITION_KEY, "#sk": SORT_KEY},
            "ExpressionAttributeValues": to_dynamo({":pk": partition, ":prefix": prefix}),
            "Select": "COUNT",
            "ConsistentRead": True,
        }
        if start_key:
            request["ExclusiveStartKey"] = start_key
        with translate():
            response = table.client.query(**request)
        total += response["Count"]
        start_key = response.get("LastEvaluatedKey")
        if not start_key:
            return total


def start_counter(table: Table, org_id: str, users: int, limit: int) -> bool:
    """Give an org that has no seat count yet its count, and its limit unless it has one; False
    (nothing written) if the org is gone or already counted, on its item or on its own counter item
    (the API moves the count there on the org's first seat write, which may land after this run
    looked), so running it again, or beside the API, is safe."""
    names = {"#pk": PARTITION_KEY, "#count": plans.USER_COUNT, "#limit": plans.USER_LIMIT}
    try:
        transact(
            table,
            [
                {
                    "Update": {
                        "TableName": table.name,
                        "Key": to_dynamo(keys.org_key(org_id)),
                        "UpdateExpression": "SET #count = :count, #limit = if_not_exists(#limit, :limit)",
                        "ConditionExpression": "attribute_exists(#pk) AND attribute_not_exists(#count)",
                        "ExpressionAttributeNames": names,
                        "ExpressionAttributeValues": to_dynamo({":count": users, ":limit": limit}),
                    }
                },
                {
                    "ConditionCheck": {
                        "TableName": table.name,
                        "Key": to_dynamo(keys.seats_key(org_id)),
                        "ConditionExpression": "attribute_not_exists(#pk)",
                        "ExpressionAttributeNames": {"#pk": PARTITION_KEY},
                    }
                },
            ],
        )
    except ConditionFailed:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", required=True, help="the table (the stack's TableName output)")
    args = parser.parse_args(argv)
    with refused_if_missing(parser, f"--table {args.table}"):
        report = migrate(Table(boto3.client("dynamodb", config=config.CLIENT_CONFIG), args.table))
    print(
        f"Counted {len(report.counted)} organizations; {len(report.already)} had a count already; "
        f"{len(report.over_limit)} over their limit.",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
