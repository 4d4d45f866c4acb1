"""2. Handler overhead: each read route end to end, against the bare boto3 call it makes."""

from bench import data
from bench.harness import Section, event, label, recording, replay
from bench.stats import interleave, markdown, meets, ms, p50_p95, ratio, verdict
from controlplane import config
from local.apigw import invoke

ORG, USER, USERS, TICKETS = "reads", "alice", 25, 25
GOAL = 1.25  # handler p50 / bare p50
STRETCH = 1.15  # reported beside the goal, not counted as one


READS = [
    ("/orgs/{org_id}", None),
    ("/orgs/{org_id}", {"include": "users"}),
    ("/orgs", None),
    ("/orgs/{org_id}/users", None),
    ("/orgs/{org_id}/users/{user_id}", None),
    ("/orgs/{org_id}/users/{user_id}", {"include": "tickets"}),
    ("/orgs/{org_id}/users/{user_id}/tickets", None),
    ("/orgs/{org_id}/tickets/{ticket_id}", None),
]


def run(client, iterations: int) -> Section:
    users = {USER: TICKETS, **{f"user-{i:02}": 0 for i in range(USERS - 1)}}
    ids = {"org_id": ORG, "user_id": USER, "ticket_id": data.seed(client, ORG, users)[USER][0]}
    rows, goals = [], []
    for path, query in READS:
        request = event("GET", path.format(**ids), query=query)
        with recording(config.dynamodb()) as recorder:
            invoke(request)
        bare = replay(client, *recorder.the_one_request())
        samples = interleave(
            {"handler": lambda request=request: invoke(request), "bare": bare}, iterations, iterations // 5
        )
        handler_p50, handler_p95 = p50_p95(samples["handler"])
        bare_p50, bare_p95 = p50_p95(samples["bare"])
        name = label("GET", path, query)
        met = meets(handler_p50 / bare_p50, GOAL)
        goals.append((f"{name}: handler p50 at most {GOAL} x the bare call's", met))
        operation = recorder.exchanges[0].operation
        timings = [ms(handler_p50), ms(handler_p95), ms(bare_p50), ms(bare_p95), ms(handler_p50 - bare_p50)]
        stretch = "met" if meets(handler_p50 / bare_p50, STRETCH) else "not yet"
        ratios = [ratio(handler_p50 / bare_p50), ratio(handler_p95 / bare_p95), verdict(met), stretch]
        rows.append([name, operation, *timings, *ratios])
    headers = ["Route", "Operation", "Handler p50", "Handler p95", "Bare p50", "Bare p95"]
    headers += ["Overhead p50", f"Ratio p50 (goal <= {GOAL})", "Ratio p95", "Goal", f"Stretch (<= {STRETCH})"]
    body = (
        f"`lambda_handler` end to end (event in, response out, through `local.apigw.invoke`) against the bare "
        f"boto3 call of the same request, replayed verbatim (the parameters the handler sent, recorded once) "
        f"on a plain client of its own to the same DynamoDB Local. {iterations} rounds, handler and bare call "
        f"alternating in one loop (which goes first alternates too), after {iterations // 5} rounds of warm-up. "
        f"Times in ms. Data: {ORG} has {USERS} users, {USER} {TICKETS} tickets; lists return 20.\n\n"
        + markdown(headers, rows)
    )
    return Section("2. Handler overhead", body, goals)
