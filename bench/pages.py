"""3. Flat pages: the first page of a user's tickets costs the same however many tickets there are."""

from bench import data
from bench.harness import Section, event, recording, replay
from bench.stats import interleave, markdown, meets, ms, p50_p95, ratio, verdict
from controlplane import config
from local.apigw import call, invoke

ORG = "flat"
PATH = "/orgs/{org_id}/users/{user_id}/tickets"
PAGE = 20  # the default limit
GOAL = 1.2  # p50 of the largest case / p50 of the smallest


def run(client, sizes: list[int], iterations: int) -> Section:
    data.seed(client, ORG, {"shape": 0})
    data.check_ticket_shape(client, ORG, "shape")
    calls, loads = {}, {}
    for size in sizes:
        user = f"u{size}"
        data.create(f"/orgs/{ORG}/users", {"user_id": user, "name": user, "email": f"{user}@bench.test"})
        loads[size] = data.load_tickets(client, ORG, user, size)[1]
        path = PATH.format(org_id=ORG, user_id=user)
        reply = call("GET", path)
        if reply.status != 200 or len(reply.body["items"]) != min(size, PAGE):
            raise RuntimeError(f"GET {path} answered {reply.status} with {len(reply.body.get('items', []))} items")
        request = event("GET", path)
        with recording(config.dynamodb()) as recorder:
            invoke(request)
        calls["api", size] = lambda request=request: invoke(request)
        calls["bare", size] = replay(client, *recorder.the_one_request())
    samples = interleave(calls, iterations, iterations // 5)
    p = {key: p50_p95(values) for key, values in samples.items()}
    smallest, largest = sizes[0], sizes[-1]
    rows = []
    for size in sizes:
        (api_p50, api_p95), (bare_p50, bare_p95) = p["api", size], p["bare", size]
        load = [f"{size:,}", min(size, PAGE), f"{loads[size]:.1f}", f"{size / loads[size]:,.0f}"]
        api = [ms(api_p50), ms(api_p95), ratio(api_p50 / p["api", smallest][0])]
        bare = [ms(bare_p50), ms(bare_p95), ratio(bare_p50 / p["bare", smallest][0])]
        rows.append(load + api + bare)
    growth = p["api", largest][0] / p["api", smallest][0]
    met = meets(growth, GOAL)
    headers = ["Tickets", "On the page", "Load (s)", "Items/s", "API p50", "API p95", "API p50 ratio"]
    headers += ["Bare p50", "Bare p95", "Bare p50 ratio"]
    body = (
        f"`GET {PATH}` (first page, limit {PAGE}) for users with {', '.join(f'{s:,}' for s in sizes)} tickets, "
        f"loaded with BatchWriteItem ({data.THREADS} threads; items built with the service's key and item "
        "helpers, and checked against an API-created ticket's attributes). All cases and their bare Query "
        f"(the handler's request replayed) interleaved in one loop: {iterations} rounds after "
        f"{iterations // 5} of warm-up. Times in ms; ratios to the {smallest:,} case.\n\n"
        + markdown(headers, rows)
        + f"\n\nGoal: the {largest:,} case at most {GOAL} x the {smallest:,} case at p50: "
        + f"{ratio(growth)}, {verdict(met)}."
        + _full_pages(sizes, p)
    )
    return Section(
        "3. Flat pages", body, [(f"First page with {largest:,} tickets at most {GOAL} x with {smallest:,}", met)]
    )


def _full_pages(sizes: list[int], p: dict) -> str:
    """The same comparison between cases whose pages hold as many items: data size alone."""
    full = [size for size in sizes if size >= PAGE]
    if len(full) < 2 or full[0] == sizes[0]:
        return ""
    api, bare = (p[kind, full[-1]][0] / p[kind, full[0]][0] for kind in ("api", "bare"))
    return (
        f" The {sizes[0]:,} case's page holds only {sizes[0]} items; between full pages, {full[-1]:,} against "
        f"{full[0]:,} tickets: API {ratio(api)}, bare Query {ratio(bare)}."
    )
