"""Each operation's OpenAPI description, which Swagger UI shows under its summary: what it does, who
may call it and what one call costs in DynamoDB requests.

Who may call it is derived from the route's record (``allow``) and the field rules (``FIELD_RULES``),
so it says what the guard enforces. What it does and its requests are written here, per operation;
tests/local_kit/test_openapi.py sends each route and counts the requests it really makes.
"""

from typing import NamedTuple

from controlplane.http.routes import Route
from controlplane.logic.access import ADMIN, ANYONE, FIELD_RULES, MEMBER, OWNER, SELF

# The rules a record's ``allow`` grants, in the order a description names them (``auth``).
RULES = {
    ADMIN: "the org's admins",
    MEMBER: "its members",
    SELF: "a member, for their own user",
    OWNER: "a member, for the tickets they own",
}
# What a create with an Idempotency-Key costs besides its own requests: Powertools writes the record
# before and saves the response after (docs/DATA_MODEL.md#idempotency-records); for a create made in
# one transaction (``sealed``), the transaction saves it.
IDEMPOTENCY_REQUESTS = 2
SEALED_IDEMPOTENCY_REQUESTS = 1


class Operation(NamedTuple):
    does: str
    requests: tuple[str, ...] | None  # the DynamoDB operations one call sends; None: grows with the data
    field_rules: bool = False  # its logic refuses a body field FIELD_RULES keeps from the caller's role
    sealed: bool = False  # a create whose transaction completes its idempotency record (dal.sealing)
    grows: str = (  # what its requests grow with, where ``requests`` is None
        "what it deletes: a few requests per user and a BatchWriteItem per 25 items (measured in docs/BENCHMARKS.md)"
    )


OPERATIONS = {
    "createOrg": Operation(
        "Creates an organization on a plan (`free` unless `plan` says otherwise), with that plan's seats. "
        "Its `org_id` is the slug every later path names; one already taken is `409 already_exists`.",
        ("TransactWriteItems",),  # the org item and its seat counter, together
        sealed=True,
    ),
    "listOrgs": Operation("Lists every organization, a page at a time (`limit`, `cursor`).", ("Query",)),
    "getOrg": Operation(
        "Returns the organization: its plan, status, seats used (`usage`) and allowed (`limits`), and its "
        "`ETag`. With `include=users`, its first page of users too and a `next_cursor` that goes on in "
        "`GET /orgs/{org_id}/users`, in the same one Query, and no `ETag` (the org's `version` is in the body).",
        ("Query",),  # the org item and its seat counter, side by side in its partition
    ),
    "updateOrg": Operation(
        "Changes the name, the plan or the status, only the fields sent. A plan with fewer seats than the org "
        'uses is `409 quota_exceeded`. `{"status": "suspended", "suspension_reason": "..."}` suspends the org: '
        "its admins and members are refused (`403 org_suspended`) and their sign-ins disabled, and nothing is "
        'deleted; `{"status": "active"}` lets them back in (docs/SECURITY.md says how soon). With `If-Match`, '
        "only the version you read is changed. A plan change is 3 requests: a consistent Query of the org and "
        "its seat counter, one TransactWriteItems of both, then the Query.",
        ("UpdateItem", "Query"),
        field_rules=True,
    ),
    "deleteOrg": Operation(
        "Deletes the organization with its users, their sign-ins and their tickets; no user can join it once "
        "this has started, and every step can be run again. `204` when done; a delete that will not fit in "
        'API Gateway\'s 29 s answers `202` `{"status": "deleting"}` and finishes from a queue: poll '
        "`GET /orgs/{org_id}` until it is `404`.",
        None,
    ),
    "listActivity": Operation(
        "The organization's lifecycle events, newest first, a page at a time: who created, changed or deleted "
        "the org, a user or a ticket, and when (the events of docs/EVENTS.md).",
        ("Query",),
    ),
    "createUnit": Operation(
        "Creates a unit under `parent_id` (the org's implicit `root` unless it says otherwise). Units nest at "
        "most 10 deep and an org has at most 1,000: past either, `409 limit_exceeded`. A parent being moved is "
        "`409 move_in_progress` with `Retry-After`.",
        ("BatchGetItem", "TransactWriteItems"),
        sealed=True,
    ),
    "listUnits": Operation(
        "Lists the units depth-first (each before its children, siblings by id), a page at a time: the whole "
        "tree, or with `under` that unit and everything below it. One Query of the org's units by path. While "
        "a move changes that subtree, `409 move_in_progress` with `Retry-After`; a `cursor` from before such a "
        "move is `409 conflict`: start again.",
        ("BatchGetItem", "Query"),
    ),
    "getUnit": Operation(
        "Returns the unit with its `path` of ids from the root and its `depth`; `root` is the org's implicit root.",
        ("BatchGetItem",),
    ),
    "updateUnit": Operation(
        "Renames the unit (`name`), or moves it with everything below it under `parent_id`: under itself or a "
        "unit below it is `409 conflict`, deeper than 10 levels `409 limit_exceeded`, while another move of the "
        "org runs `409 move_in_progress` with `Retry-After`. A move of up to 100 units and users is done when "
        'this answers `200`; a bigger one answers `202` `{"status": "moving"}` and finishes from a queue: GET '
        "the unit until `moving` is false. A rename is one UpdateItem; a move rewrites one item per unit and "
        "user below it.",
        None,
        grows=(
            "what it moves: a rename is one UpdateItem; a move, about two UpdateItems per unit and one per user "
            "below it, beside a few reads and the Queries that find them (measured in docs/BENCHMARKS.md)"
        ),
    ),
    "deleteUnit": Operation(
        "Deletes a unit that has no units and no users below it; one that has is `409 conflict`, and so is a "
        "second delete of the unit while one is under way. `root` cannot be deleted. With `If-Match`, only the "
        "version you read. In the cloud, within a minute of something put under the unit (or 5 s of the end of a "
        "move in the org), the delete first waits up to 5 s, until the indexes it reads show it.",
        ("UpdateItem", "BatchGetItem", "Query", "Query", "TransactWriteItems"),
    ),
    "listUnitUsers": Operation(
        "Lists the users of the unit and of every unit below it (`direct=true`: the unit's own only), a page at a "
        "time: one Query of the org's users by unit path, every item read returned. Refused during a move as "
        "`GET /orgs/{org_id}/units` is.",
        ("BatchGetItem", "Query"),
    ),
    "listPlans": Operation(
        "The plan catalogue: the seats (users per org) and the request limits of each plan.",
        (),
    ),
    "importUsers": Operation(
        "Imports up to 10,000 users at once (the body's `rows`, each as `POST /orgs/{org_id}/users` takes one) "
        "and answers `202` with the import; follow it at its `Location`. A job creates the users, as many as "
        "the plan's seats allow, in transactions of up to 97, and then their sign-ins, paced under Cognito's "
        "quota. Each row that cannot be a user is refused on its own, with its reason (`validation_error`, "
        "`duplicate`, `already_exists`, `quota_exceeded`); the others go in. A suspended org is "
        "`409 org_suspended`, and nothing is stored; an org whose delete has begun, even while the rows are "
        "stored, is `404`, and nothing stays stored. Sent again with its `Idempotency-Key`, it is the same "
        "import: `202` with its `Location`, and the import as it is now (a Query more), not its first body.",
        None,
        grows=(
            "4 to store it (a Query of the org, a PutItem, a BatchWriteItem per 25 parts of 97 rows, a "
            "TransactWriteItems that turns it running if the org is not being deleted); its job, "
            "per 97 rows, a BatchGetItem, a TransactWriteItems and a few UpdateItems"
        ),
    ),
    "getUserImport": Operation(
        "Returns a user import: `running` or `done`, its counts, every refused row with its reason, and the "
        "sign-ins made, still to make and failed (with why; the job tries a failed one again).",
        ("Query",),
    ),
    "createUser": Operation(
        "Adds a user to the organization and creates their sign-in; takes one of the plan's seats. A full org "
        "is `409 quota_exceeded` (`details` say its limit), a suspended one `409 org_suspended`, and nothing "
        "is written. The user goes in `unit` (the root unless it says otherwise; another unit adds a GetItem).",
        ("TransactWriteItems",),
    ),
    "listUsers": Operation(
        "Lists the organization's users, a page at a time (`limit`, `cursor`); a missing org is `404` (a "
        "later page, once it is gone, is an empty last page).",
        ("Query",),
    ),
    "getUser": Operation(
        "Returns the user and their `ETag`. With `include=tickets`, their newest tickets too and a "
        "`next_cursor` that goes on in the user's ticket list: one Query instead of the GetItem, and no "
        "`ETag` (the user's `version` is in the body).",
        ("GetItem",),
    ),
    "updateUser": Operation(
        "Changes a user's name, email or role, only the fields sent; a new email or role reaches their "
        "sign-in too. `unit` moves the user to another unit (a GetItem, a TransactWriteItems and a GetItem; to "
        "the root, the one UpdateItem), "
        "not together with `email` or `role`. With `If-Match`, only the version you read is changed.",
        ("UpdateItem",),
        field_rules=True,
    ),
    "deleteUser": Operation(
        "Deletes the user, their sign-in and every ticket they opened, and gives their seat back.",
        None,
    ),
    "openTicket": Operation(
        "Opens a ticket for the user: `open` and `normal` priority unless the body says otherwise. A missing "
        "user is `404`.",
        ("TransactWriteItems",),
        sealed=True,
    ),
    "listTickets": Operation(
        "Lists the user's tickets, newest first, a page at a time (`limit`, `cursor`); a missing user is `404` "
        "(a later page, once they are gone, is an empty last page).",
        ("Query",),
    ),
    "getTicket": Operation("Returns the ticket and its `ETag`.", ("GetItem",)),
    "updateTicket": Operation(
        "Changes a ticket's subject, description, status, priority or tags, only the fields sent. With "
        "`If-Match`, only the version you read is changed.",
        ("UpdateItem",),
    ),
    "deleteTicket": Operation(
        "Deletes the ticket. With `If-Match`, only the version you read.",
        ("DeleteItem",),
    ),
}


def description(route: Route, body_fields: frozenset[str] = frozenset()) -> str:
    """The operation's description, in Markdown: what it does, who may call it (and who may change
    which of its ``body_fields``), and what it costs."""
    operation = OPERATIONS[route.operation_id]
    ruled = body_fields if operation.field_rules else frozenset()
    return "\n\n".join([operation.does, who_may_call(route, ruled), cost(route, operation.requests)])


def who_may_call(route: Route, ruled_fields: frozenset[str] = frozenset()) -> str:
    """Who may call the route, from its ``allow``; and who may change which of ``ruled_fields``,
    from ``FIELD_RULES``."""
    if ANYONE in route.allow:
        callers = "any signed-in caller: operators, and the admins and members of every organization"
    else:
        granted = [RULES[rule] for rule in RULES if rule in route.allow]
        unknown = route.allow - RULES.keys()
        if unknown:  # a rule this text cannot name: no description rather than a wrong one
            raise ValueError(f"{route}: no words for the rules {sorted(unknown)}")
        callers = _listed(["operators", *granted]) if granted else "operators only"
    said = [f"**Who may call it:** {callers}."]
    restricted: dict[frozenset[str], list[str]] = {}
    for name in sorted(ruled_fields & FIELD_RULES.keys()):
        restricted.setdefault(FIELD_RULES[name], []).append(f"`{name}`")
    for allowed, names in restricted.items():
        who = _listed(["operators", *(RULES[rule] for rule in RULES if rule in allowed)])
        said.append(f"Only {who} may change {_listed(names)}.")
    return " ".join(said)


def cost(route: Route, requests: tuple[str, ...] | None) -> str:
    if requests is None:
        said = f"grows with {OPERATIONS[route.operation_id].grows}"
    elif not requests:
        said = "none; the answer is in the code"
    else:
        said = f"{_count(len(requests))} ({', '.join(requests)})"
    if route.location is not None and route.status == 201:  # a create: idempotent with a key
        more = idempotency_requests(route)
        said += f"; with an `Idempotency-Key`, {'one' if more == 1 else more} more for the idempotency record"
        said += " (completed in the create's own transaction)" if OPERATIONS[route.operation_id].sealed else ""
    return f"**DynamoDB requests:** {said}."


def idempotency_requests(route: Route) -> int:
    """What an ``Idempotency-Key`` adds to a create's requests."""
    return SEALED_IDEMPOTENCY_REQUESTS if OPERATIONS[route.operation_id].sealed else IDEMPOTENCY_REQUESTS


def _count(requests: int) -> str:
    return "one request" if requests == 1 else f"{requests} requests"


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
