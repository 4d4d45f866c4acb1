"""One-off migration: move every organization's seat counter (``user_count``, ``user_limit``) from
the org item to an item of its own, ``METADATA#<org_id>#SEATS`` (docs/DATA_MODEL.md, "No partition
shared between tenants").

``make migrate-seats TABLE=<table>`` (``python -m ops.migrate_seats --table <table>``) runs it with
your AWS credentials against any table; locally, point it at DynamoDB Local with
``AWS_ENDPOINT_URL_DYNAMODB``. Run it after deploying the code that keeps the counter on its own item.
The API serves throughout: that code moves an org's counter itself on the org's first seat write, and
this moves the rest, the same way (``dal.seats.move``: one transaction, on condition that the count
and the limit are still the ones read, so a user created or a plan changed meanwhile is never lost).
Safe to run again and to interrupt: an org whose counter has moved is left alone.

A Lambda still on the code before, during the deploy, refuses a seat write on a moved org (it finds
no count on the org item), but not a plan change: its condition that the org's count fits the new
limit holds where there is no count, so it writes the plan and its limit on the org item, where the
counter does not look. Run this again once the deploy is done: it carries such a limit onto the
counter (or drops it, if this code has changed the plan since).

Per org (GSI1 ``ORGS``, every page): one strongly consistent Query of the org and its counter; if the
org item still has ``user_count``, one TransactWriteItems (Put counter + Update org REMOVE); if it has
a counter and a ``user_limit`` of its own, one TransactWriteItems (Update counter + Update org REMOVE).
"""

import argparse
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import boto3

from controlplane import config
from controlplane.dal import keys, seats
from controlplane.dal.codec import to_dynamo
from controlplane.dal.conditions import ConditionFailed, Item
from controlplane.dal.table import Table
from controlplane.dal.transactions import transact
from controlplane.models import plans
from ops.tables import refused_if_missing

if TYPE_CHECKING:  # the stub packages are for the type checker only
    from types_boto3_dynamodb.type_defs import TransactWriteItemTypeDef


@dataclass
class Report:
    moved: list[str] = field(default_factory=list)  # this run moved their counter
    already: list[str] = field(default_factory=list)  # had it on its own item (or went) before
    limits: list[str] = field(default_factory=list)  # a limit the code before wrote on the org item, settled
    not_counted: list[str] = field(default_factory=list)  # no count at all: run migrate-user-counts first


def migrate(table: Table, echo=print) -> Report:
    report = Report()
    for orgs in table.query_all(keys.ORGS_LISTING, on_index=True):
        for listed in orgs:
            org_id = listed["org_id"]
            org, counter = seats.read(table, org_id, consistent=True)
            if counter is not None and org is not None and plans.USER_LIMIT in org:
                if settle_limit(table, org, counter):
                    report.limits.append(org_id)
                    echo(f"{org_id}: the limit of a plan change by the code before settled on its counter")
                else:
                    report.already.append(org_id)  # changed meanwhile: the next run looks again
            elif counter is not None or org is None:
                report.already.append(org_id)
            elif plans.USER_COUNT not in org or not seats.move(table, org_id):
                report.not_counted.append(org_id)  # (or deleted meanwhile: the next run says which)
                echo(f"{org_id}: has no user_count yet; run make migrate-user-counts, then this again")
            else:
                report.moved.append(org_id)
                echo(f"{org_id}: seat counter moved")
    return report


def settle_limit(table: Table, org: Item, counter: Item) -> bool:
    """A limit on the org item of an org whose counter has moved (a plan change by the code before):
    onto the counter, unless the counter already has the current plan's limit (this code changed the
    plan since), then off the org item. One transaction, on condition that the plan, that limit and
    the counter's are still the ones read; False if one changed."""
    org_id, stray, held = org["org_id"], org[plans.USER_LIMIT], counter[plans.USER_LIMIT]
    limit = held if held == plans.limit(org["plan"]) else stray
    names = {"#limit": plans.USER_LIMIT}
    request: list[TransactWriteItemTypeDef] = [
        {
            "Update": {
                "TableName": table.name,
                "Key": to_dynamo(keys.org_key(org_id)),
                "UpdateExpression": "REMOVE #limit",
                "ConditionExpression": "#limit = :stray AND #plan = :plan",
                "ExpressionAttributeNames": {**names, "#plan": "plan"},
                "ExpressionAttributeValues": to_dynamo({":stray": stray, ":plan": org["plan"]}),
            }
        },
        {
            "Update": {
                "TableName": table.name,
                "Key": to_dynamo(keys.seats_key(org_id)),
                "UpdateExpression": "SET #limit = :limit",
                "ConditionExpression": "#limit = :held",
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": to_dynamo({":limit": limit, ":held": held}),
            }
        },
    ]
    try:
        transact(table, request)
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
        f"Moved {len(report.moved)} seat counters; {len(report.already)} had moved already; "
        f"{len(report.limits)} limits of the code before settled; "
        f"{len(report.not_counted)} not counted yet.",
        file=sys.stderr,
    )
    return 1 if report.not_counted else 0


if __name__ == "__main__":
    sys.exit(main())
