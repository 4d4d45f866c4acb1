"""Section 10's Markdown: each function's memory from the measurement, dollars per million calls of
each route, and a tenant's month by part, from bench.cost's measurements and bench.cost_model."""

from bench import cost_model, prices
from bench.cost_model import BOUND, CACHE_HIT_RATE, DAYS, MEMORY_SIZES, PROFILE, USERS
from bench.harness import Section
from bench.stats import markdown, ms, verdict
from controlplane.http.routes import FUNCTIONS, ROUTES

AUTHORIZER = "authorizer"
# What a user of the control plane could change about the part that dominates.
ADVICE = {
    cost_model.GATEWAY: "API Gateway's REST price is per call, whatever the call does: an HTTP API costs "
    "less than a third as much per call but has no usage plans, so the per-tenant rate limits and quotas "
    "would move into the authorizer or the functions; fewer, larger calls (pages of 100) cut it too",
    cost_model.LAMBDA: "Lambda's duration is the functions' CPU at their memory's share: the memory "
    "chosen here, and less work per call (imports, validation), are the levers",
    cost_model.DYNAMODB: "write units dominate: smaller items (1 KB rounds up), fewer index entries "
    "per write (a projection that leaves out what changes), no transaction where one write does",
    cost_model.AUTHORIZER: "a longer authorizer cache TTL raises the hit rate (suspension then takes longer to bite)",
    cost_model.LOGS: "log less per call: LOG_LEVEL, or the infrequent-access log class",
}


def _price(value: float) -> str:
    """A list price as the pricing pages print it: cents at least ($0.20), more digits where it has them."""
    return f"{value:.2f}" if round(value, 2) == value else f"{value:g}"


def _dollars(value: float) -> str:
    return f"{value:,.2f}" if value >= 0.01 or value == 0 else f"{value:.4f}"


def report(
    title: str,
    units: dict[str, tuple[float, float]],
    authorizer_units: float,
    times: dict[int, dict[str, float]],
    log_bytes: float,
) -> Section:
    from infra.constants import AUTHORIZER_FUNCTION, MEMORY_MB

    routes_of = {
        function: [str(r) for r in ROUTES if r.function == function and str(r) in units] for function in FUNCTIONS
    }
    routes_of[AUTHORIZER] = [AUTHORIZER]
    deployed = {**{f: MEMORY_MB[f] for f in FUNCTIONS}, AUTHORIZER: MEMORY_MB[AUTHORIZER_FUNCTION]}
    chosen, memory_rows = {}, []
    for function, labels in routes_of.items():
        p50 = {memory: [times[memory][label] for label in labels] for memory in MEMORY_SIZES}
        chosen[function] = cost_model.choose_memory(p50, BOUND)
        lambda_cost = {m: sum(cost_model.lambda_dollars(m, ms) for ms in p50[m]) * 1e6 for m in MEMORY_SIZES}
        cells = [f"{ms(sum(p50[m]))} ms, ${_dollars(lambda_cost[m])}" for m in MEMORY_SIZES]
        memory_rows.append([function, len(labels), *cells, f"{chosen[function]} MB", f"{deployed[function]} MB"])

    authorizer = cost_model.Use(
        chosen[AUTHORIZER], times[chosen[AUTHORIZER]][AUTHORIZER], authorizer_units, 0, log_bytes
    )
    dollars, route_rows = {}, []
    for route in ROUTES:
        label = str(route)
        if label not in units:
            route_rows.append([f"`{label}`", route.function, "not measured", *[""] * 9])
            continue
        memory = chosen[route.function]
        use = cost_model.Use(memory, times[memory][label], *units[label], log_bytes)
        dollars[label] = cost_model.per_call(use, authorizer, CACHE_HIT_RATE)
        parts = [_dollars(dollars[label][part] * 1e6) for part in cost_model.PARTS]
        total = _dollars(sum(dollars[label].values()) * 1e6)
        route_rows.append(
            [
                f"`{label}`",
                route.function,
                f"{memory} MB",
                ms(use.ms),
                f"{use.read_units:g}",
                f"{use.write_units:g}",
                *parts,
                total,
            ]
        )

    monthly = cost_model.month(PROFILE, dollars)
    total = sum(monthly.values())
    calls = sum(PROFILE.values())
    month_rows = [[part, _dollars(monthly[part]), f"{monthly[part] / total:.0%}"] for part in cost_model.PARTS]
    month_rows.append(["**total**", f"**{_dollars(total)}**", "100%"])
    dominant = max(cost_model.PARTS, key=lambda part: monthly[part])
    profile_rows = [[f"`{label}`", f"{count:,}"] for label, count in PROFILE.items()]

    goals = [
        (
            f"cost: {function}'s memory in infra/constants.py is the measured choice ({chosen[function]} MB)",
            chosen[function] == deployed[function],
        )
        for function in chosen
    ]
    body = (
        f"Prices: `bench/prices.py`, {prices.REGION}, read on {prices.READ_ON}: Lambda arm64 "
        f"${prices.LAMBDA_GB_SECOND:.10f} per GB-second and ${_price(prices.LAMBDA_PER_MILLION_REQUESTS)} per million "
        f"requests, API Gateway REST ${_price(prices.API_GATEWAY_REST_PER_MILLION)} per million calls, DynamoDB "
        f"on-demand ${_price(prices.DYNAMODB_PER_MILLION_WRITE_UNITS)} per million write and "
        f"${_price(prices.DYNAMODB_PER_MILLION_READ_UNITS)} per million read units, CloudWatch Logs "
        f"${_price(prices.CLOUDWATCH_LOGS_PER_GB)} per GB; no free tier.\n\n"
        "**Memory.** Each function's routes (a lifecycle of one user and one ticket: `bench/cost.py`) "
        "timed in a child process held to each memory size's CPU share (section 6's cgroup quota); the "
        "sum of its routes' p50 and what a million calls of each of them cost in Lambda. The choice: the "
        f"cheapest size whose p50 is within {BOUND} x the best size's. Durations are as measured here, "
        "against DynamoDB Local on loopback: DynamoDB's own latency in the cloud adds billed milliseconds "
        "that grow with memory, which favours the smaller of two sizes close in cost.\n\n"
        + markdown(["Function", "Routes", *[f"{m} MB" for m in MEMORY_SIZES], "Chosen", "Deployed"], memory_rows)
        + f"\n\n**Per route**, at the chosen memory, in dollars per million calls. Capacity units: "
        "DynamoDB Local's ConsumedCapacity for one call (indexes and transactions included). The "
        f"authorizer runs on {1 - CACHE_HIT_RATE:.0%} of calls (a {CACHE_HIT_RATE:.0%} cache hit rate), "
        f"one BatchGetItem of the org and the caller ({authorizer_units:g} read units) and {ms(authorizer.ms)} ms at "
        f"{authorizer.memory_mb} MB. "
        f"Logs: {log_bytes:,.0f} bytes per invocation (what the functions printed, and Lambda's START, END "
        "and REPORT lines). Not counted: the events function, EventBridge and the activity log each write "
        "triggers, and storage.\n\n"
        + markdown(
            ["Route", "Function", "Memory", "p50 ms", "Read units", "Write units", *cost_model.PARTS, "Total"],
            route_rows,
        )
        + f"\n\n**A tenant-month**: an org of {USERS} users working {DAYS} days, {calls:,} calls:\n\n"
        + markdown(["Route", "Calls a month"], profile_rows)
        + "\n\n"
        + markdown(["Part", "Dollars a month", "Share"], month_rows)
        + f"\n\n{dominant} dominates ({monthly[dominant] / total:.0%}). What a user could change: "
        f"{ADVICE[dominant]}.\n\n" + "\n".join(f"- {verdict(ok)}: {goal}" for goal, ok in goals)
    )
    return Section(title, body, goals)
