"""One-off backfill: store on every user item stored before subjects were kept the ``sub`` of their
Cognito sign-in (``stamps.SIGN_IN_SUBJECT``), which the authorizer now requires.

``make sign-in-subjects TABLE=<table> USER_POOL_ID=<pool>`` (``python -m ops.sign_in_subjects``) runs
it with your AWS credentials. Until a user has a subject the authorizer refuses their tokens (403, it
fails closed), so run it right after deploying the code that requires it (docs/OPERATIONS.md has the
order). It is safe to run again and to interrupt: a user who has a subject is left alone, and the
write is ``if_not_exists`` on the user item it read (its ``created_at``), so a run never overwrites
what the API (or an earlier run) stored, nor gives a user deleted and created again meanwhile the
subject of the sign-in deleted with them. ``--after <org_id>`` resumes after an org; each org done is printed.

Per org (GSI1 ``ORGS``, every page): its ``USER#`` items (every page); per user without a subject,
AdminGetUser of ``<org_id>.<user_id>`` (Cognito's UserRead category, paced at ``CALLS_PER_SECOND``),
then one UpdateItem. A user whose sign-in is gone is reported and left without a subject: the
authorizer refuses them until they are deleted and created again. A user put by an import that is
still running (one GetItem of the import, once per import) is reported as pending, and their
sign-in is not read: the import's job makes it and stores its subject. A sign-in of that name there
now may be a left-over (another address's, whose holder got its invitation), and the job keeps a
sign-in whose subject the item holds as its own (``logic.import_job._new_sign_in``), so storing it
would let that holder in as the imported user.
"""

import argparse
import sys
from dataclasses import dataclass, field

import boto3
from botocore.exceptions import ClientError

from controlplane import config
from controlplane.dal import keys, stamps
from controlplane.dal.conditions import ConditionFailed, Expect
from controlplane.dal.directory import Directory
from controlplane.dal.imports import RUNNING
from controlplane.dal.table import Table
from controlplane.pacing import Throttle
from ops.tables import refused_if_missing

CALLS_PER_SECOND = 10.0  # AdminGetUser shares the UserRead category's quota with every other caller


@dataclass
class Report:
    stored: list[str] = field(default_factory=list)  # "<org_id>.<user_id>" given a subject by this run
    already: int = 0  # had one
    no_sign_in: list[str] = field(default_factory=list)  # their sign-in is gone: left without a subject
    pending: list[str] = field(default_factory=list)  # no sign-in yet: their import's job is still making it


def backfill(table: Table, directory: Directory, after: str | None = None, echo=print, throttle=None) -> Report:
    report = Report()
    pace = throttle or Throttle(CALLS_PER_SECOND)
    running: dict[tuple[str, str], bool] = {}  # per import: still running
    for orgs in table.query_all(keys.ORGS_LISTING, on_index=True):
        for org in orgs:
            org_id = org["org_id"]
            if after is not None and org_id <= after:
                continue
            for users in table.query_all(keys.org_partition(org_id), prefix=keys.USER_PREFIX):
                for user in users:
                    _one(table, directory, org_id, user, report, pace, running)
            echo(f"done {org_id}")
    return report


def _one(
    table: Table, directory: Directory, org_id: str, user: dict, report: Report, pace: Throttle, running: dict
) -> None:
    user_id, name, created = user["user_id"], f"{org_id}.{user['user_id']}", user["created_at"]
    if user.get(stamps.SIGN_IN_SUBJECT):
        report.already += 1
        return
    import_id = user.get("import_id")
    if import_id and (org_id, import_id) not in running:
        record = table.get(keys.import_key(org_id, import_id), consistent=True) or {}
        running[org_id, import_id] = record.get("status") == RUNNING
    if import_id and running[org_id, import_id]:  # the job's to make and store, whatever sign-in is there now
        report.pending.append(name)
        return
    pace.wait()
    try:
        subject = directory.subject(org_id, user_id)
    except ClientError as error:
        if error.response["Error"]["Code"] != "UserNotFoundException":
            raise
        report.no_sign_in.append(name)
        return
    # if_not_exists: what the API stored meanwhile stays. On the item read only (its created_at): a
    # user deleted and created again since has a new sign-in, whose subject their create stores.
    try:
        table.mark(keys.user_key(org_id, user_id), stamps.SIGN_IN_SUBJECT, subject, (Expect("created_at", created),))
    except ConditionFailed:
        return  # deleted meanwhile, or created again (a mark needs the item)
    report.stored.append(name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", required=True, help="the table (the stack's TableName output)")
    parser.add_argument("--user-pool-id", required=True, help="the user pool (the stack's UserPoolId output)")
    parser.add_argument("--after", help="resume after this org_id (the last 'done' line of a run)")
    args = parser.parse_args(argv)
    table = Table(boto3.client("dynamodb", config=config.CLIENT_CONFIG), args.table)
    directory = Directory(boto3.client("cognito-idp", config=config.CLIENT_CONFIG), args.user_pool_id)
    with refused_if_missing(parser, f"--table {args.table} or --user-pool-id {args.user_pool_id}"):
        report = backfill(table, directory, args.after, echo=lambda line: print(line, file=sys.stderr))
    print(
        f"Stored {len(report.stored)} subjects; {report.already} users had one; "
        f"{len(report.no_sign_in)} without a sign-in (refused until re-created): {', '.join(report.no_sign_in)}; "
        f"{len(report.pending)} whose import is still making their sign-in: {', '.join(report.pending)}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
