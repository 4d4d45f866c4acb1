"""Sign-ins follow their org's status: suspending an org disables every user's Cognito sign-in and
signs them out everywhere; reactivating it enables them again.

Off the request path: ``PATCH /orgs/{org_id}`` writes the status (one UpdateItem) and nothing else.
The write's stream record becomes the org's lifecycle event ("Organization Suspended" or
"Organization Reactivated", the contract's status transitions, ``events``), which a rule on the bus
sends to the deletions queue (infra/deletions.py), which the organizations function consumes
(``deletions.handle_queue``): so once the status is written, its job is not lost, as it was when
the request queued it itself and that send failed after the write. The stream retries the record
until the event is published (a record that fails every attempt goes to the events function's
on-failure queue, with its alarm), EventBridge retries until the event is queued (else the deletions
queue's dead-letter queue, with its alarm). The event starts the job:
``job(message)``. A job is ``{"kind": "sign-ins", "org_id", "enabled", "after"}``: it does one page
of the org's users after the user ``after``, then queues the rest as a new message. Every step can
run twice (disabling a disabled sign-in changes nothing), so a message delivered again, or failed
half-way and delivered again by SQS, repeats a few users and nothing else. Before each page, and
after each user, the job reads the org again (one consistent GetItem): once its status is no longer
the job's (an operator reactivated it meanwhile) or its delete has begun, the job stops; the newer
job, or the cascade delete, does the rest. The user it just changed is set as the org is now, since
the newer job, running beside it, may have passed them already. A suspension repeated with a new
reason changes no status, so it sends no transition and starts no job: the first suspension's job
already disabled every sign-in, and a sign-in made since is made as its org is (``as_its_org_is``).
Where no queue is configured (tests with a user pool but no queue) the job runs to its end within
the request (``start``); where there is no user pool (make run) there is nothing to do.

Rate: AdminDisableUser, AdminEnableUser and AdminUserGlobalSignOut count toward one Cognito
request-rate category, UserUpdate, whose default quota is 25 requests per second per account and
Region, shared by every user pool and every other caller of the category (role and e-mail changes
here). See "Quotas in Amazon Cognito", "User pools API operation categories and request rate
quotas" (docs.aws.amazon.com/cognito/latest/developerguide/quotas.html). A job spends at most
``CALLS_PER_SECOND`` of it: suspending an org of 1,000 users (2,000 calls) takes about 200 s over
ten messages, and leaves 15 a second to everything else. botocore's standard retries absorb an
occasional TooManyRequestsException; a persistent one fails the message, which SQS delivers again
after its visibility timeout.
"""

import json
import math
from collections.abc import Callable
from contextlib import suppress
from functools import cache
from typing import Any

from controlplane import config
from controlplane.dal import keys, stamps
from controlplane.dal.directory import Directory, NoSignIn
from controlplane.dal.table import api_table
from controlplane.models.resources import ACTIVE
from controlplane.observability import logger
from controlplane.pacing import Throttle

KIND = "sign-ins"
PAGE = 100  # users per Query
CALLS_PER_SECOND = 10.0
# Stop starting users when less time than this is left, and queue the rest.
STEP_SECONDS = 5.0


def start(org_id: str, enabled: bool) -> None:
    """Bring the org's sign-ins in line with its new status within the request, where no queue is
    configured; with one, the status's lifecycle event starts the job (``job``), so nothing here."""
    if config.directory() is None or config.settings().deletions_queue_url:
        return
    after = step(org_id, enabled)
    while after is not None:
        after = step(org_id, enabled, after)


@cache
def events() -> dict[str, bool]:
    """The lifecycle events that start a job, each with the state it puts the sign-ins in (enabled or
    not): the org's status transitions in the contract's catalogue. Imported here: the contract builds
    its models as it loads, which no request of the organizations function needs."""
    from controlplane.lifecycle.contract import KINDS

    [org] = [kind for kind in KINDS if kind.entity == keys.ORG]
    return {t.detail_type: t.value == ACTIVE for t in org.transitions if t.field == "status"}


def job(message: dict[str, Any]) -> dict[str, Any] | None:
    """The job a deletions-queue message holds: one of its own, or the one a status's lifecycle event
    (EventBridge's envelope, its detail the contract's) starts, from its first user; None when the
    message is none of these (a delete, another job)."""
    if message.get("kind") == KIND:
        return message
    if "detail-type" not in message:
        return None
    enabled = events()[message["detail-type"]]  # the rule sends no other: any other fails, to the dead end
    return {"kind": KIND, "org_id": message["detail"]["org_id"], "enabled": enabled, "after": None}


def resume(job: dict[str, Any], time_left: Callable[[], float]) -> None:
    """A job from the queue: one page of users, then the rest queued as a job of its own."""
    org_id, enabled = job["org_id"], bool(job["enabled"])
    after = step(org_id, enabled, job.get("after"), time_left)
    if after is not None:
        _enqueue(org_id, enabled, after)


def step(
    org_id: str,
    enabled: bool,
    after: str | None = None,
    time_left: Callable[[], float] = lambda: math.inf,
    throttle: Throttle | None = None,
) -> str | None:
    """Enable or disable the sign-ins of the next page of the org's users after ``after``: None when
    that was the last (or the job is superseded), else the last user done, to continue after (``""``:
    none yet, so from the first). A page (``PAGE`` users, two calls each at ``CALLS_PER_SECOND``: 20 s)
    fits in the function's 28 s; if time runs short anyway, the page stops early and the rest follows."""
    directory = config.directory()
    if directory is None:
        return None
    pace = throttle or Throttle(CALLS_PER_SECOND)
    table = api_table()
    org = table.get(keys.org_key(org_id), consistent=True)
    if org is None or stamps.DELETING in org or (org.get("status", ACTIVE) == ACTIVE) != enabled:
        logger.info("Sign-ins job superseded", org_id=org_id, enabled=enabled)
        return None
    start_key = keys.user_key(org_id, after) if after else None
    # Consistent: an eventually consistent page may miss a user created just before the status changed.
    users, last = table.query(
        keys.org_partition(org_id), prefix=keys.USER_PREFIX, limit=PAGE, start_key=start_key, consistent=True
    )
    for user in users:
        if time_left() < STEP_SECONDS:  # not None, which would end the job before its first user
            return after or ""
        if not _set(directory, org_id, user["user_id"], enabled, pace):
            return None
        after = user["user_id"]
    return after if last is not None else None


def _set(directory: Directory, org_id: str, user_id: str, enabled: bool, pace: Throttle) -> bool:
    """Enable or disable one sign-in, then read the org again (strongly consistent). A page takes up
    to 20 s: when the status changed meanwhile, the newer job (another consumer) may have passed this
    user already, so the sign-in is set as the org is now, again after each change, and the job is
    superseded (False). Otherwise a reactivation during a suspension's page could leave the page's
    later users disabled in an active org."""
    wanted = enabled
    for _ in range(3):
        _apply(directory, org_id, user_id, enabled, pace)
        org = api_table().get(keys.org_key(org_id), consistent=True)
        if org is None or stamps.DELETING in org:  # its delete removes the sign-in
            return False
        if (org.get("status", ACTIVE) == ACTIVE) == enabled:
            return enabled == wanted
        enabled = not enabled
    # Set as the org was last read; a status that keeps changing is left to its own jobs.
    _apply(directory, org_id, user_id, enabled, pace)
    return False


def _apply(directory: Directory, org_id: str, user_id: str, enabled: bool, pace: Throttle) -> None:
    pace.wait()
    if enabled:
        directory.enable(org_id, user_id)
    else:
        pace.wait()  # two calls: disable, then sign out
        directory.disable(org_id, user_id)


def as_its_org_is(directory: Directory, org_id: str, user_id: str, subject: str) -> None:
    """A sign-in just made (enabled) as its org's status is now: disabled while it is suspended. A
    user's create and an import make sign-ins after the table took the user, so a suspension's job
    may have passed the user before the sign-in existed. The status is read (strongly consistent)
    for each sign-in, and again after each change, so that a suspension or a reactivation whose own
    job passed this user before the sign-in was made, or while it was changed, is not lost. An org
    gone or being deleted gets no sign-in: its delete marks it before it removes any, so one made
    after the delete passed this user would be left behind; it goes here, if it is still the one
    made (``subject``): Cognito deletes by name, and once the org is gone another org of that id
    may have a user of that id, whose sign-in has the same name."""
    enabled = True
    for _ in range(3):  # a status that keeps changing is left to its own job
        org = api_table().get(keys.org_key(org_id), consistent=True)
        if org is None or stamps.DELETING in org:
            remove_if_made(directory, org_id, user_id, subject)
            return
        if (org.get("status", ACTIVE) == ACTIVE) == enabled:
            return
        enabled = not enabled
        (directory.enable if enabled else directory.disable)(org_id, user_id)


def remove_if_made(directory: Directory, org_id: str, user_id: str, subject: str) -> None:
    """Delete the sign-in made (``subject``) if it is still that one: Cognito deletes by name, and a
    user of that id created since (in this org, or a new org of that id) has a sign-in of that name."""
    with suppress(NoSignIn):
        if directory.attributes(org_id, user_id).get("sub") == subject:
            directory.delete(org_id, user_id)


def _enqueue(org_id: str, enabled: bool, after: str | None) -> None:
    body = {"kind": KIND, "org_id": org_id, "enabled": enabled, "after": after or None}
    config.sqs().send_message(QueueUrl=config.deletions_queue(), MessageBody=json.dumps(body))
