"""11. Org units (issue 27): a subtree's people in one Query at every depth, a first page that costs
the same in a small org and a large one, and what a move of 1,000 entries costs."""

import time
from concurrent.futures import ThreadPoolExecutor

from bench.data import BATCH_SIZE, THREADS, create
from bench.harness import TABLE_NAME, Section, call, event, recording
from bench.stats import interleave, markdown, meets, ms, p50_p95, ratio, verdict
from controlplane import config
from controlplane.dal import batches, keys, stamps
from controlplane.dal.table import Table
from controlplane.logic import moves
from controlplane.logic.access import Caller
from controlplane.models.units import join
from local.apigw import OPERATOR_CONTEXT, invoke

GOAL = 1.2  # p50 of the first page in the large org / in the small one
DEPTHS = (1, 5, 10)
OPERATOR = Caller(subject=OPERATOR_CONTEXT["sub"], user_id=None, org_id=None, role=None, operator=True)


def run(client, iterations: int, small: int = 10, large: int = 10_000, moved: int = 1_000) -> Section:
    depth_rows = _depths(client)
    page_rows, growth = _flat_first_page(client, iterations, small, large)
    move_rows = _move(client, moved)
    met = meets(growth, GOAL)
    body = (
        "A chain of units 10 deep with 3 users at each level; `GET /orgs/{org_id}/units/{unit_id}/users` "
        "(first page, limit 20) at depths 1, 5 and 10, and the DynamoDB requests it sends: the consistent "
        "BatchGetItem that says where the unit is (with the org and its tree item), then one Query of GSI2, "
        "whatever the depth.\n\n"
        + markdown(["Depth", "Users below", "On the page", "DynamoDB requests"], depth_rows)
        + f"\n\nThe whole org's first page (`GET /orgs/{{org_id}}/units/root/users`, limit 20) in an org of "
        f"{small:,} users and in one of {large:,} (users loaded with BatchWriteItem, {THREADS} threads, "
        f"items built with the service's key helpers), interleaved: {iterations} rounds after "
        f"{iterations // 5} of warm-up. Times in ms.\n\n"
        + markdown(["Users in the org", "API p50", "API p95", "p50 ratio"], page_rows)
        + f"\n\nGoal: the {large:,} case at most {GOAL} x the {small:,} case at p50: {ratio(growth)}, "
        f"{verdict(met)}.\n\nA move of a subtree of {moved:,} entries (10 units and {moved - 10:,} users) under "
        "another unit, run as the deletions queue's job runs it (`moves.resume`), every request asking for "
        "its consumed capacity (DynamoDB Local reports what DynamoDB would charge):\n\n"
        + markdown(["Requests", "By operation", "Capacity units", "Seconds"], move_rows)
    )
    return Section("11. Org units", body, [(f"Unit listing's first page with {large:,} users at most {GOAL} x", met)])


def _users(client, org_id: str, unit_path: tuple[str, ...], count: int, prefix: str = "u") -> None:
    """``count`` users in the unit at ``unit_path``, as ``users.create_user`` stores them."""
    unit = unit_path[-1] if unit_path else "root"
    items = []
    for i in range(count):
        user_id = f"{prefix}{i:05}"
        attributes = {"org_id": org_id, "user_id": user_id, "name": user_id, "email": f"{user_id}@bench.test"}
        attributes |= {"role": "member", "unit": unit, "unit_path": join(unit_path)}
        items.append(stamps.new_item(keys.user_keys(org_id, user_id, unit_path), keys.USER, attributes))
    chunks = [items[i : i + BATCH_SIZE] for i in range(0, len(items), BATCH_SIZE)]
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(lambda batch: batches.put_all(Table(client, TABLE_NAME), batch), chunks))


def _depths(client) -> list[list[object]]:
    create("/orgs", {"org_id": "deep", "name": "Deep", "plan": "enterprise"})
    path: tuple[str, ...] = ()
    for depth in range(1, 11):
        parent = path[-1] if path else None
        create(
            "/orgs/deep/units",
            {"unit_id": f"d{depth}", "name": f"D{depth}", **({"parent_id": parent} if parent else {})},
        )
        path = (*path, f"d{depth}")
        _users(client, "deep", path, 3, prefix=f"d{depth}-u")
    rows = []
    for depth in DEPTHS:
        with recording(config.dynamodb()) as recorder:
            reply = call("GET", f"/orgs/deep/units/d{depth}/users")
        rows.append([depth, 3 * (11 - depth), len(reply.body["items"]), " + ".join(recorder.sent)])
    return rows


def _flat_first_page(client, iterations: int, small: int, large: int) -> tuple[list[list[object]], float]:
    requests = {}
    for size in (small, large):
        org_id = f"org{size}"
        create("/orgs", {"org_id": org_id, "name": org_id, "plan": "enterprise"})
        _users(client, org_id, (), size)
        requests[size] = event("GET", f"/orgs/{org_id}/units/root/users")
    samples = interleave({size: (lambda e=e: invoke(e)) for size, e in requests.items()}, iterations, iterations // 5)
    p = {size: p50_p95(values) for size, values in samples.items()}
    rows = [[f"{size:,}", ms(p[size][0]), ms(p[size][1]), ratio(p[size][0] / p[small][0])] for size in (small, large)]
    return rows, p[large][0] / p[small][0]


def _move(client, entries: int) -> list[list[object]]:
    create("/orgs", {"org_id": "mover", "name": "Mover", "plan": "enterprise"})
    create("/orgs/mover/units", {"unit_id": "dst", "name": "Destination"})
    create("/orgs/mover/units", {"unit_id": "src", "name": "Source"})
    for i in range(9):
        create("/orgs/mover/units", {"unit_id": f"team{i}", "name": f"Team {i}", "parent_id": "src"})
    _users(client, "mover", ("src",), entries - 10)
    dynamodb = config.dynamodb()
    with recording(dynamodb, capacity=True) as recorder:
        started = time.perf_counter()
        moves.move_unit("mover", "src", "dst", OPERATOR)
        seconds = time.perf_counter() - started
    units = sum(_consumed(exchange.response) for exchange in recorder.exchanges)
    counts: dict[str, int] = {}
    for operation in recorder.sent:
        counts[operation] = counts.get(operation, 0) + 1
    by_operation = ", ".join(f"{name} {count:,}" for name, count in sorted(counts.items()))
    return [[f"{len(recorder.sent):,}", by_operation, f"{units:,.0f}", f"{seconds:.1f}"]]


def _consumed(response: dict | None) -> float:
    consumed = (response or {}).get("ConsumedCapacity")
    if isinstance(consumed, list):
        return sum(float(c.get("CapacityUnits", 0)) for c in consumed)
    return float(consumed.get("CapacityUnits", 0)) if consumed else 0.0
