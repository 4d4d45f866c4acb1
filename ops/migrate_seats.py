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

Per org (GSI1 ``ORGS``, every page): one strongly consistent Query of the org and its counter; if the
org item still has ``user_count``, one TransactWriteItems (Put counter + Update org REMOVE).
"""

import argparse
import sys
from dataclasses import dataclass, field

import boto3

from controlplane import config
from controlplane.dal import keys, seats
from controlplane.dal.table import Table
from controlplane.models import plans


@dataclass
class Report:
    moved: list[str] = field(default_factory=list)  # this run moved their counter
    already: list[str] = field(default_factory=list)  # had it on its own item (or went) before
    not_counted: list[str] = field(default_factory=list)  # no count at all: run migrate-user-counts first


def migrate(table: Table, echo=print) -> Report:
    report = Report()
    for orgs in table.query_all(keys.ORGS_LISTING, on_index=True):
        for listed in orgs:
            org_id = listed["org_id"]
            org, counter = seats.read(table, org_id, consistent=True)
            if counter is not None or org is None:
                report.already.append(org_id)
            elif plans.USER_COUNT not in org or not seats.move(table, org_id):
                report.not_counted.append(org_id)  # (or deleted meanwhile: the next run says which)
                echo(f"{org_id}: has no user_count yet; run make migrate-user-counts, then this again")
            else:
                report.moved.append(org_id)
                echo(f"{org_id}: seat counter moved")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", required=True, help="the table (the stack's TableName output)")
    args = parser.parse_args(argv)
    report = migrate(Table(boto3.client("dynamodb", config=config.CLIENT_CONFIG), args.table))
    print(
        f"Moved {len(report.moved)} seat counters; {len(report.already)} had moved already; "
        f"{len(report.not_counted)} not counted yet.",
        file=sys.stderr,
    )
    return 1 if report.not_counted else 0


if __name__ == "__main__":
    sys.exit(main())
