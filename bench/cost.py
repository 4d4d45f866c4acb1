"""10. What it costs: dollars per million calls of each route and per tenant-month, from measured
capacity units (DynamoDB Local's ConsumedCapacity, indexes and transactions included) and Lambda
milliseconds at each memory size under section 6's CPU quota, priced by bench.prices.

A lifecycle of one user and one ticket (every tenant route, and an org created and deleted) runs in a
child process held to each memory size's CPU share; the same lifecycle, run once unthrottled with
ReturnConsumedCapacity, gives each route's capacity units.
"""

import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable

from bench import limited
from bench.cost_model import MEMORY_SIZES
from bench.harness import Section, call, recording
from controlplane import config
from local import ROOT, tokens
from local.apigw import Reply, match

ORG = "cost"
PLATFORM_LOG_BYTES = 300  # Lambda's own START, END and REPORT lines per invocation, about
READS = {"GetItem", "Query", "BatchGetItem", "TransactGetItems"}


Around = Callable[[str, Callable[[], Reply]], Reply]


def lifecycle(tag: str, around: Around) -> None:
    """Every tenant route once, on a user and a ticket of their own; ``around`` makes each call."""
    user, org = f"{ORG}/users/u-{tag}", f"c-{tag}"

    def send(method: str, path: str, body: dict | None = None) -> Reply:
        route = match(method, path)[0]
        reply = around(str(route), lambda: call(method, path, body))
        if reply.status >= 300:
            raise RuntimeError(f"{method} {path} answered {reply.status}: {reply.body}")
        return reply

    send("POST", f"/orgs/{ORG}/users", {"user_id": f"u-{tag}", "name": "Cost", "email": f"u-{tag}@cost.test"})
    send("GET", f"/orgs/{user}")
    send("PATCH", f"/orgs/{user}", {"name": "Renamed"})
    send("GET", f"/orgs/{ORG}/users")
    ticket = send("POST", f"/orgs/{user}/tickets", {"subject": "Cost"}).body["ticket_id"]
    send("GET", f"/orgs/{ORG}/tickets/{ticket}")
    send("GET", f"/orgs/{user}/tickets")
    send("PATCH", f"/orgs/{ORG}/tickets/{ticket}", {"status": "solved"})
    send("DELETE", f"/orgs/{ORG}/tickets/{ticket}")
    send("DELETE", f"/orgs/{user}")
    send("GET", f"/orgs/{ORG}")
    send("PATCH", f"/orgs/{ORG}", {"name": "Cost"})
    send("GET", f"/orgs/{ORG}/activity")
    send("GET", "/orgs")
    send("POST", "/orgs", {"org_id": org, "name": "Cost"})
    send("DELETE", f"/orgs/{org}")
    send("GET", "/plans")


CHILD = """
import json, sys
from bench import cost
print(json.dumps(cost.child(sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]))))
"""


def child(prefix: str, iterations: int, decision: dict) -> dict[str, float]:
    """p50 ms of each route, and of the authorizer's decision on a cache miss."""
    from authorizer import handler

    samples: dict[str, list[float]] = defaultdict(list)

    def timed(label: str, make: Callable[[], object], keep: bool):
        start = time.perf_counter_ns()
        result = make()
        if keep:
            samples[label].append((time.perf_counter_ns() - start) / 1e6)
        return result

    warmup = max(2, iterations // 5)
    for number in range(warmup + iterations):
        keep = number >= warmup
        lifecycle(f"{prefix}-{number}", lambda label, make, keep=keep: timed(label, make, keep))
        timed("authorizer", lambda: handler.lambda_handler(decision, None), keep)
    return {label: statistics.median(values) for label, values in samples.items()}


def capacity() -> dict[str, tuple[float, float]]:
    """Read and write units of each route's one call, as DynamoDB Local reports them."""
    found: dict[str, tuple[float, float]] = {}
    with recording(config.dynamodb(), capacity=True) as recorder:

        def measured(label: str, make: Callable[[], Reply]) -> Reply:
            recorder.clear()
            reply = make()
            units = [0.0, 0.0]
            for exchange in recorder.exchanges:
                consumed = (exchange.response or {}).get("ConsumedCapacity", [])
                for entry in consumed if isinstance(consumed, list) else [consumed]:
                    units[exchange.operation not in READS] += entry["CapacityUnits"]
            found[label] = (units[0], units[1])
            return reply

        lifecycle("capacity", measured)
    return found


def timings(iterations: int, decision: dict) -> tuple[dict[int, dict[str, float]], float]:
    """p50 ms per route at each memory size, and log bytes per call the functions printed."""
    from infra.constants import LAMBDA_FULL_VCPU_MB

    found, printed, calls = {}, 0, 0
    for memory in MEMORY_SIZES:
        with limited.cpu_quota(memory / LAMBDA_FULL_VCPU_MB) as procs:
            command = [sys.executable, "-c", CHILD, f"m{memory}", str(iterations), json.dumps(decision)]
            result = subprocess.run(
                command,
                cwd=ROOT,
                env=os.environ,
                capture_output=True,
                text=True,
                timeout=1800,
                preexec_fn=lambda procs=procs: procs.write_text(str(os.getpid())),
            )
        if result.returncode:
            raise RuntimeError(f"cost child failed:\n{result.stderr[-3000:]}")
        *logs, last = result.stdout.splitlines()
        found[memory] = json.loads(last)
        printed += sum(len(line) + 1 for line in logs)
        calls += (iterations + max(2, iterations // 5)) * len(found[memory])
    return found, printed / calls


def run(iterations: int) -> Section:
    from bench import cost_report
    from bench.authorizer import METHOD_ARN, jwks_endpoint

    title = "10. What it costs"
    reason = limited.unavailable()
    if reason:
        return Section(title, f"Not measured: {reason}.")
    reply = call("POST", "/orgs", {"org_id": ORG, "name": "Cost", "plan": "enterprise"})
    if reply.status != 201:
        raise RuntimeError(f"POST /orgs answered {reply.status}: {reply.body}")
    units = capacity()
    member = {"user_id": "alice", "name": "Alice", "email": "alice@example.com"}
    if (reply := call("POST", f"/orgs/{ORG}/users", member)).status != 201:
        raise RuntimeError(f"POST /orgs/{ORG}/users answered {reply.status}: {reply.body}")
    token = f"Bearer {tokens.for_user(ORG, 'alice')}"  # her stored subject: the authorizer allows her
    decision = {"type": "TOKEN", "authorizationToken": token, "methodArn": METHOD_ARN}
    with jwks_endpoint():
        from authorizer import handler

        with recording(handler.dynamodb(), capacity=True) as recorder:
            handler.lambda_handler(decision, None)
        authorizer_units = sum(  # BatchGetItem's: one entry per table
            entry["CapacityUnits"] for exchange in recorder.exchanges for entry in exchange.response["ConsumedCapacity"]
        )
        times, log_bytes = timings(iterations, decision)
    return cost_report.report(title, units, authorizer_units, times, log_bytes + PLATFORM_LOG_BYTES)
