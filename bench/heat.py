"""9. Partition heat: a mixed tenant workload over many orgs, every write read back from the table's
stream and priced in write units per partition key, in the table and in every index (bench.capacity).

The orgs are created first and not counted (org-level writes may use the shared listing); then each
org runs MIX through the handlers, the orgs taking turns request by request, as tenants working side
by side. The stream's records also go through the events function, as in the cloud, so the activity
log it writes counts too.
"""

import itertools
import os
import time
from collections import Counter
from collections.abc import Generator
from dataclasses import dataclass, field

from bench import capacity
from bench.harness import Section, call, stream_reader
from bench.stats import markdown, verdict
from controlplane import config
from controlplane.dal import keys
from local.apigw import LambdaContext, Reply
from local.stream import Feeder, StreamReader

ORG_COUNTS = (10, 30, 100)
USERS, TICKETS_PER_USER = 6, 2  # per org
SOLVED_USERS, RENAMED_USERS, DELETED_TICKETS = 3, 2, 3
PARTITION_WCU_PER_SECOND = 1_000  # DynamoDB's limit per partition, in the table and in an index
SHARED_GOAL = 0.02  # of all write units, at GOAL_ORGS
GOAL_ORGS = 30
TOP = 8
QUIET_READS, QUIET_SECONDS = 2, 0.2  # the stream is drained when two reads this far apart find nothing
# What one org does, in order; the report states it from here.
MIX = (
    f"{USERS} users created, {USERS * TICKETS_PER_USER} tickets created ({TICKETS_PER_USER} per user), "
    f"{SOLVED_USERS * TICKETS_PER_USER} tickets updated (solved), {RENAMED_USERS} users updated (renamed), "
    f"{DELETED_TICKETS} tickets deleted, 1 user deleted (with its tickets)"
)

Tenant = Generator[tuple[str, str, dict | None], Reply, None]


def tenant(org_id: str) -> Tenant:
    """One org's requests; each yield sends one and receives its reply."""
    users = [f"u{number}" for number in range(USERS)]
    tickets: dict[str, list[str]] = {user: [] for user in users}
    for user in users:
        yield "POST", f"/orgs/{org_id}/users", {"user_id": user, "name": user.title(), "email": f"{user}@heat.test"}
    for user in users:
        for _ in range(TICKETS_PER_USER):
            reply = yield "POST", f"/orgs/{org_id}/users/{user}/tickets", {"subject": "Heat", "description": "x" * 80}
            tickets[user].append(reply.body["ticket_id"])
    for user in users[:SOLVED_USERS]:
        for ticket in tickets[user]:
            yield "PATCH", f"/orgs/{org_id}/tickets/{ticket}", {"status": "solved"}
    for user in users[:RENAMED_USERS]:
        yield "PATCH", f"/orgs/{org_id}/users/{user}", {"name": f"{user.title()} Renamed"}
    for user in users[-DELETED_TICKETS:]:
        yield "DELETE", f"/orgs/{org_id}/tickets/{tickets[user][0]}", None
    yield "DELETE", f"/orgs/{org_id}/users/{users[0]}", None


def owner(partition: str, org_ids: list[str]) -> str | None:
    """The one org whose data a partition key holds, or None for a key shared between orgs."""
    prefixes = {org: (keys.org_partition(org), keys.idempotency_partition(org)) for org in org_ids}
    owners = [
        org
        for org, own in prefixes.items()
        if any(partition == prefix or partition.startswith(prefix + "#") for prefix in own)
    ]
    return owners[0] if len(owners) == 1 else None


@dataclass
class Heat:
    orgs: list[str]
    requests: int = 0
    units: Counter = field(default_factory=Counter)  # (index, partition) -> write units
    entities: Counter = field(default_factory=Counter)  # stream records per entity (user, ticket, activity...)

    def add(self, records: list[dict]) -> None:
        for record in records:
            image = record["dynamodb"].get("NewImage") or record["dynamodb"].get("OldImage") or {}
            self.entities[image.get("entity", {}).get("S", "other")] += 1
            for write in capacity.writes(record):
                self.units[write.index, write.partition] += write.units

    @property
    def total(self) -> int:
        return sum(self.units.values())

    def hottest(self, shared: bool = False) -> tuple[tuple[str, str], int]:
        found = [(key, units) for key, units in self.units.items() if not shared or owner(key[1], self.orgs) is None]
        return max(found, key=lambda pair: pair[1], default=(("—", "—"), 0))

    def share(self, shared: bool = False) -> float:
        return self.hottest(shared)[1] / self.total

    @property
    def ceiling(self) -> float:
        """Requests a second of this mix before the hottest partition passes its limit."""
        return PARTITION_WCU_PER_SECOND * self.requests / self.hottest()[1]


class _Bus:
    """EventBridge's PutEvents, every entry accepted: the events function's writes are what counts here."""

    def put_events(self, Entries):
        return {"FailedEntryCount": 0, "Entries": [{"EventId": str(n)} for n, _ in enumerate(Entries)]}


def drain(reader: StreamReader, heat: Heat) -> int:
    """Every record since the last read into ``heat``, and through the events function until it writes
    nothing more (its activity entries come back on the stream); how many records."""
    from controlplane.lifecycle import publisher
    from events.handler import lambda_handler

    saved = os.environ.get("EVENT_BUS_NAME")
    os.environ["EVENT_BUS_NAME"] = "controlplane-bench"
    config.use_bus(_Bus())
    feeder = Feeder(lambda_handler, LambdaContext("events"))
    seen, quiet = 0, 0
    try:
        # Its bus name and table are cached per process: this table, this bus, and none left behind.
        publisher.bus_name.cache_clear()
        publisher._table.cache_clear()
        while quiet < QUIET_READS:
            records = reader.read()
            quiet = 0 if records else quiet + 1
            seen += len(records)
            heat.add(records)
            feeder.feed(records)
            if not records:
                time.sleep(QUIET_SECONDS)
    finally:
        config.use_bus(None)
        publisher.bus_name.cache_clear()
        publisher._table.cache_clear()
        if saved is None:
            os.environ.pop("EVENT_BUS_NAME", None)
        else:
            os.environ["EVENT_BUS_NAME"] = saved
    return seen


def measure(org_count: int, prefix: str = "heat") -> Heat:
    orgs = [f"{prefix}{org_count}-{number:03}" for number in range(org_count)]
    for org_id in orgs:  # enterprise: a seat for every user of the mix
        reply = call("POST", "/orgs", {"org_id": org_id, "name": org_id, "plan": "enterprise"})
        if reply.status != 201:
            raise RuntimeError(f"POST /orgs answered {reply.status}: {reply.body}")
    reader = stream_reader()
    heat = Heat(orgs)
    tenants = {org_id: tenant(org_id) for org_id in orgs}
    pending = {org_id: next(flow) for org_id, flow in tenants.items()}
    while pending:
        for org_id in list(pending):
            method, path, body = pending[org_id]
            reply = call(method, path, body)
            if reply.status >= 300:
                raise RuntimeError(f"{method} {path} answered {reply.status}: {reply.body}")
            heat.requests += 1
            try:
                pending[org_id] = tenants[org_id].send(reply)
            except StopIteration:
                del pending[org_id]
    drain(reader, heat)
    return heat


def _name(key: tuple[str, str]) -> str:
    return f"`{key[1]}`" if key[0] == capacity.TABLE else f"{key[0]} `{key[1]}`"


def report(heats: dict[int, Heat]) -> Section:
    rows = []
    for count, heat in heats.items():
        (hot, hot_units), (shared, shared_units) = heat.hottest(), heat.hottest(shared=True)
        table = sum(units for (index, _), units in heat.units.items() if index == capacity.TABLE)
        rows.append(
            [
                count,
                f"{heat.requests:,}",
                f"{heat.total:,}",
                f"{table:,} / {heat.total - table:,}",
                f"{_name(hot)}: {hot_units:,} ({hot_units / heat.total:.1%})",
                f"{_name(shared)}: {shared_units:,} ({shared_units / heat.total:.1%})" if shared_units else "none",
                f"{heat.ceiling:,.0f}",
            ]
        )
    headers = ["Orgs", "Requests", "Write units", "Table / indexes", "Hottest partition", "Hottest shared"]
    headers.append(f"Ceiling (requests/s at {PARTITION_WCU_PER_SECOND:,} WCU/s)")
    counts = list(heats)
    goals = []
    if GOAL_ORGS in heats:
        shared = heats[GOAL_ORGS].share(shared=True)
        goals.append(
            (
                f"heat: the hottest shared partition takes at most {SHARED_GOAL:.0%} at {GOAL_ORGS} orgs",
                shared <= SHARED_GOAL,
            )
        )
    shares = [heats[count].share() for count in counts]
    falling = all(later < earlier for earlier, later in itertools.pairwise(shares))
    if len(counts) > 1:
        goals.append(("heat: the hottest partition's share falls as orgs are added", falling))
    detail = heats[GOAL_ORGS] if GOAL_ORGS in heats else heats[counts[-1]]
    top = sorted(detail.units.items(), key=lambda pair: -pair[1])[:TOP]
    top_rows = [
        [
            _name(key),
            "shared" if owner(key[1], detail.orgs) is None else "one org",
            units,
            f"{units / detail.total:.1%}",
        ]
        for key, units in top
    ]
    body = (
        f"Per org: {MIX}: {detail.requests // len(detail.orgs)} requests through the handlers, the orgs "
        "taking turns request by request, after the orgs were created (not counted). Every change read back "
        "from the table's stream on DynamoDB Local, and through the events function (its activity log "
        "counts); write units per partition key derived from each record's images and the table schema "
        "(`bench/capacity.py`: 1 KB units, rounded up; an index write when the item enters, leaves or "
        "changes in the index, a key change being a delete and a put). Standard writes: a transaction "
        "doubles its table units, which the stream does not show, so the shares count each write once. "
        "A shared partition is a key no single org owns. The ceiling is the rate of this mix at which the "
        f"hottest partition reaches {PARTITION_WCU_PER_SECOND:,} write units a second.\n\n"
        + markdown(headers, rows)
        + f"\n\nThe {TOP} hottest partitions at {len(detail.orgs)} orgs:\n\n"
        + markdown(["Partition", "Owner", "Write units", "Share"], top_rows)
        + "\n\n"
        + "\n".join(f"- {verdict(ok)}: {goal}" for goal, ok in goals)
    )
    return Section("9. Partition heat", body, goals)


def run(counts: tuple[int, ...] = ORG_COUNTS) -> Section:
    from bench import imports

    section = report({count: measure(count) for count in counts})
    section.body += "\n\n" + imports.run()
    return section
