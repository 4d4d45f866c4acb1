"""Bulk onboarding: an import of IMPORT_USERS users into one org through ``POST /orgs/{org_id}/user-imports``,
its writes to the org's own items and users per second, both read from the table's stream.

Until that route is in the route table, the report says so instead of a number. The import job runs
off the request path; ``run_job`` is the hook that runs it here (what ``make run`` does locally), called
between reads of the stream until every user has arrived or TIMEOUT_SECONDS pass.
"""

import time
from collections import Counter
from collections.abc import Callable

from bench.harness import call
from bench.stats import markdown
from controlplane.dal import keys
from controlplane.dal.schema import PARTITION_KEY, SORT_KEY
from controlplane.http.routes import ROUTES

ROUTE = ("POST", "/orgs/{org_id}/user-imports")
IMPORT_USERS = 1_000
ORG = "import-bench"
TIMEOUT_SECONDS = 300.0
POLL_SECONDS = 0.2
TITLE = f"Import of {IMPORT_USERS:,} users"


def available() -> bool:
    return any((route.method, route.path) == ROUTE for route in ROUTES)


def rows(count: int) -> list[dict]:
    return [{"user_id": f"i{n:05}", "name": f"Imported {n}", "email": f"i{n:05}@import.test"} for n in range(count)]


def org_writes(records: list[dict], org_id: str) -> Counter:
    """Writes per item of the org's partition that is not a user: the org item, a counter..."""
    found: Counter = Counter()
    for record in records:
        key = record["dynamodb"]["Keys"]
        partition, sort = key[PARTITION_KEY]["S"], key[SORT_KEY]["S"]
        if partition == keys.org_partition(org_id) and not sort.startswith((keys.USER_PREFIX, keys.ACTIVITY_PREFIX)):
            found[sort] += 1
    return found


def grouped(writes: Counter) -> list[tuple[str, tuple[int, int]]]:
    """The writes per kind of item: an import's parts (``...#PART#0003``) as one row, ``#PART#*``."""
    found: dict[str, tuple[int, int]] = {}
    for sort, n in sorted(writes.items()):
        kind = sort.rsplit("#PART#", 1)[0] + "#PART#*" if "#PART#" in sort else sort
        items, total = found.get(kind, (0, 0))
        found[kind] = (items + 1, total + n)
    return list(found.items())


def users_arrived(records: list[dict], org_id: str) -> int:
    user = keys.user_key(org_id, "")
    return sum(
        record["eventName"] == "INSERT"
        and record["dynamodb"]["Keys"][PARTITION_KEY]["S"] == user[PARTITION_KEY]
        and record["dynamodb"]["Keys"][SORT_KEY]["S"].startswith(user[SORT_KEY])
        for record in records
    )


def measure(run_job: Callable[[], None] | None = None, count: int = IMPORT_USERS) -> tuple[float, Counter, int]:
    """Seconds from the request until the last user is written, the org's own writes, users written."""
    from bench.harness import stream_reader

    reply = call("POST", "/orgs", {"org_id": ORG, "name": "Import", "plan": "enterprise"})
    if reply.status != 201:
        raise RuntimeError(f"POST /orgs answered {reply.status}: {reply.body}")
    reader = stream_reader()
    records: list[dict] = []
    started = time.perf_counter()
    reply = call(ROUTE[0], ROUTE[1].format(org_id=ORG), {"rows": rows(count)})
    if reply.status != 202:
        raise RuntimeError(f"{ROUTE[0]} {ROUTE[1]} answered {reply.status}: {reply.body}")
    arrived = 0
    while arrived < count and time.perf_counter() - started < TIMEOUT_SECONDS:
        if run_job:
            run_job()
        records += reader.read()
        arrived = users_arrived(records, ORG)
        if arrived < count:
            time.sleep(POLL_SECONDS)
    return time.perf_counter() - started, org_writes(records, ORG), arrived


def run(run_job: Callable[[], None] | None = None) -> str:
    if not available():
        return f"### {TITLE}\n\nNot yet measured: `{' '.join(ROUTE)}` is not in the route table."
    seconds, writes, arrived = measure(run_job)
    table = markdown(["Org item", "Items", "Writes"], [[f"`{kind}`", items, n] for kind, (items, n) in grouped(writes)])
    return (
        f"### {TITLE}\n\nOne `{' '.join(ROUTE)}` of {IMPORT_USERS:,} rows into a new org on DynamoDB Local, "
        f"its job run locally; {arrived:,} users written in {seconds:.1f} s: "
        f"**{arrived / seconds:,.0f} users/s**. Writes to the org's own items (not its users), from the "
        f"stream:\n\n{table}"
    )
