"""Bulk onboarding: ``POST /orgs/{org_id}/user-imports`` stores up to 10,000 rows and answers 202; a
job decides each row and creates the sign-ins, off the request path.

The request validates every row (a row that is not a valid user, or repeats an earlier row's
user_id, is refused there, with its reason) and stores the rest in parts of 97 (dal.imports). The job
runs on the deletions queue, as the sign-ins job does (``{"kind": "user-import", ...}``; no queue:
in line, to its end, as ``make run`` runs deletions; one stopped by a refusal worth retrying is
run on by the import's next GET, as a queued one by its redelivery). Per part, one transaction puts its users and
adds them to the org's seat counter at once (dal.seats.take: 97 users + the org's check + the
counter + a check that the part is not decided yet = TransactWriteItems' 100 actions), so 1,000
users write the counter about 11 times. Rows
beyond the seats left are refused as ``quota_exceeded``, each; a user_id the org has already is
``already_exists``. A user item carries its ``import_id``, and the part the ids it put: a part redone after a crash or a
redelivery finds its own users and counts them as created, so nobody is created twice (nor one deleted since); a
delivery whose part another one decided first puts no user (dal.imports.undecided).

Then the sign-ins (``logic.import_job``), at ``IMPORT_SIGNINS_PER_SECOND``: AdminCreateUser is in Cognito's UserCreation
category, 50 requests a second per account by default (docs/DATA_MODEL.md, "Big tenants"); an
import takes 10 and leaves the rest to interactive creates. A sign-in that fails is listed with why
and tried again by a later pass (``RETRY_SECONDS`` later, up to ``SIGN_IN_ATTEMPTS`` tries). A sign-in
that exists already is this job's own, from before a crash, when the user item keeps its subject.
"""

from typing import Any

from pydantic import ValidationError

from controlplane import config
from controlplane.dal import imports, keys, seats, stamps
from controlplane.dal.conditions import ConditionFailed, Item
from controlplane.dal.imports import RUNNING, STORING
from controlplane.dal.outage import is_outage
from controlplane.dal.table import api_table
from controlplane.logic import import_job, stopped_moves
from controlplane.logic.access import Caller
from controlplane.models import errors
from controlplane.models.errors import ServiceUnavailable
from controlplane.models.ids import new_ulid
from controlplane.models.imports import (
    RefusedRow,
    SignInFailure,
    SignIns,
    UserImport,
    UserImportCreate,
    refusal,
    suspended,
)
from controlplane.models.problems import field, plain
from controlplane.models.resources import SUSPENDED, UserCreate
from controlplane.observability import logger


def start_import(org_id: str, body: UserImportCreate, caller: Caller) -> UserImport:
    table = api_table()
    # Strongly consistent, as it decides the 404 or 409: an eventually consistent read may still show
    # an org created or reactivated a moment before as missing or suspended, and refuse its import.
    org, _ = seats.read(table, org_id, consistent=True)
    if org is None or stamps.DELETING in org:
        raise errors.org_missing(org_id)
    if org.get("status") == SUSPENDED:
        raise suspended(org_id)
    import_id = new_ulid()
    parts = _parts(org_id, import_id, body.rows)
    attributes = {"org_id": org_id, "import_id": import_id, "status": STORING, "total": len(body.rows)}
    record = stamps.new_item(keys.import_key(org_id, import_id), keys.USER_IMPORT, attributes, caller.subject)
    try:
        record = imports.create(table, record, parts)
    except ConditionFailed as failed:  # the org changed since it was read: as if before
        org = failed.item if failed.action == 1 else None
        if org is not None and stamps.DELETING not in org and org.get("status") == SUSPENDED:
            raise suspended(org_id) from None
        raise errors.org_missing(org_id) from None  # its delete began (or took the import)
    if config.settings().deletions_queue_url:
        try:
            import_job.enqueue(org_id, import_id)
        except Exception:  # no job would ever run it: it goes, and the error is answered as it was
            imports.discard(table, record, parts)
            raise
    else:
        _run_in_line(org_id, import_id)
    try:
        return _view(org_id, import_id)
    except Exception as failed:
        if not (isinstance(failed, ServiceUnavailable) or is_outage(failed)):
            raise
        # Stored, and queued or run: its 202, as stored, not a 503 that hides its id (and whose
        # retry, even with its Idempotency-Key, starts a second import of the same rows)
        logger.warning("User import: started, but not read back", org_id=org_id, import_id=import_id, exc_info=failed)
        return _summary(org_id, import_id, record, parts)


def _run_in_line(org_id: str, import_id: str) -> None:
    """No queue (make run): the job runs within the request, to its end. One that stops on a refusal
    worth retrying (a move under way, seats being counted, throttling) stays ``running``, as a queued
    one waits for its redelivery, and the import's next GET runs it on: no queue ever will. So does
    one that an outage stops (DynamoDB failing): the import is stored, and a 503 would hide its id.
    A unit move that an outage stopped (which no queue finishes either) is run on, and the job again."""
    for _ in range(2):
        try:
            while (delay := import_job.run(org_id, import_id)) is not None:
                logger.info("User import: another pass", org_id=org_id, import_id=import_id, delay=delay)
            return
        except Exception as stopped:
            if not (isinstance(stopped, ServiceUnavailable) or is_outage(stopped)):
                raise
            logger.warning(
                "User import: stopped; its next read carries on", org_id=org_id, import_id=import_id, exc_info=stopped
            )
        if not stopped_moves.run_stopped(org_id):
            return


def _parts(org_id: str, import_id: str, rows: list[dict[str, Any]]) -> list[Item]:
    """The rows in parts of ``PART_ROWS``: the valid ones to do, the others refused already."""
    seen: dict[str, int] = {}
    parts = []
    for first in range(0, len(rows), imports.PART_ROWS):
        todo, refused = [], []
        for row, raw in enumerate(rows[first : first + imports.PART_ROWS], start=first):
            user_id = raw.get("user_id") if isinstance(raw.get("user_id"), str) else None
            try:
                user = UserCreate.model_validate(raw)
            except ValidationError as invalid:
                # a row's locations name its fields alone: "body" in front, so that field() does not
                # take a row's own field "query" (or "header", "path") for that part of the request
                problems = "; ".join(f"{field(('body', *p['loc']))}: {plain(dict(p))}" for p in invalid.errors())
                refused.append(refusal(row, user_id, "validation_error", problems))
                continue
            if user.user_id in seen:
                refused.append(refusal(row, user.user_id, "duplicate", f"The same user_id as row {seen[user.user_id]}"))
                continue
            seen[user.user_id] = row
            todo.append({"row": row, **user.model_dump()})
        part = first // imports.PART_ROWS
        attributes = {"part": part, "rows": todo, "created": [], "refused": refused, "decided": False, "signed": 0}
        parts.append(stamps.new_item(imports.part_key(org_id, import_id, part), imports.PART, attributes))
    return parts


def get_import(org_id: str, import_id: str) -> UserImport:
    if config.settings().deletions_queue_url:
        return _view(org_id, import_id)
    record, parts = imports.load(api_table(), org_id, import_id)
    if record is not None and record["status"] == RUNNING:  # stopped in line (or its request died): on
        _run_in_line(org_id, import_id)
        record, parts = imports.load(api_table(), org_id, import_id)
    return _summary(org_id, import_id, record, parts)


def _view(org_id: str, import_id: str) -> UserImport:
    record, parts = imports.load(api_table(), org_id, import_id)
    return _summary(org_id, import_id, record, parts)


def _summary(org_id: str, import_id: str, record: Item | None, parts: list[Item]) -> UserImport:
    if record is None or record["status"] == STORING:  # still being stored, or never was: not accepted
        raise errors.NotFound(f"User import {import_id} not found in organization {org_id}")
    created = sum(len(part["created"]) for part in parts)
    refused = sorted((r for part in parts for r in part["refused"]), key=lambda r: int(r["row"]))
    failed = [
        SignInFailure(user_id=user_id, reason=f["reason"], attempts=int(f["attempts"]))
        for part in parts
        for user_id, f in sorted(part.get("failures", {}).items())
    ]
    signed = sum(int(part["signed"]) for part in parts)
    return UserImport.model_validate(
        {
            **record,
            "created": created,
            "pending": int(record["total"]) - created - len(refused),
            "refused": [RefusedRow.model_validate(r) for r in refused],
            "sign_ins": SignIns(done=signed - len(failed), pending=created - signed, failed=failed),
        }
    )
