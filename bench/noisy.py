"""The noisy neighbour, at the local gateway with its per-org limits, over DynamoDB Local.

A free org sends as fast as FLOODERS connections allow for DURATION seconds; meanwhile an enterprise org
sends GETs at a steady STEADY_RATE. Before that, the enterprise org alone, the same way: its p95
then is the baseline. Goals: the free org is refused (429) past its burst and its accepted rate is
within 20% of its plan's 10 per second; the enterprise org sees no 429 and its p95 stays within
1.5x of its p95 alone. The floods' 429s are answered by the gateway before any function runs.
"""

import threading
import time

import httpx

from bench.harness import Section
from bench.stats import markdown, meets, ms, p50_p95, ratio, verdict
from controlplane.models import plans
from local import server, tokens
from local.apigw import call
from local.limits import Limiter

DURATION = 10.0
STEADY_RATE = 20.0  # the enterprise org's requests per second: moderate, far below its 1,000
FLOODERS = 4  # the free org's connections, each sending as fast as it is answered
NOISY, STEADY = "noisy", "steady"


ADMIN = "root"


def _steady(url: str, token: str, stop: threading.Event, latencies: list[float], statuses: list[int]) -> None:
    with httpx.Client(base_url=url, headers={"Authorization": token}) as http:
        due = time.perf_counter()
        while not stop.is_set():
            started = time.perf_counter()
            statuses.append(http.get(f"/orgs/{STEADY}").status_code)
            latencies.append((time.perf_counter() - started) * 1000)
            due += 1 / STEADY_RATE
            time.sleep(max(0.0, due - time.perf_counter()))


def _flood(url: str, token: str, stop: threading.Event, statuses: list[int]) -> None:
    with httpx.Client(base_url=url, headers={"Authorization": token}) as http:
        while not stop.is_set():
            statuses.append(http.get(f"/orgs/{NOISY}").status_code)


def _run(url: str, noisy: bool) -> tuple[list[float], list[int], list[int], float]:
    stop, latencies, steady, flood = threading.Event(), [], [], []
    workers = [threading.Thread(target=_steady, args=(url, tokens.for_user(STEADY, ADMIN), stop, latencies, steady))]
    if noisy:
        token = tokens.for_user(NOISY, ADMIN)
        workers += [threading.Thread(target=_flood, args=(url, token, stop, flood)) for _ in range(FLOODERS)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    time.sleep(DURATION)
    stop.set()
    for worker in workers:
        worker.join()
    return latencies, steady, flood, time.perf_counter() - started


def run(_client=None) -> Section:
    for org_id, plan in ((NOISY, "free"), (STEADY, "enterprise")):
        call("POST", "/orgs", {"org_id": org_id, "name": org_id.title(), "plan": plan})
        # the admin who calls: the authorizer admits a user whose item holds their token's subject
        call(
            "POST",
            f"/orgs/{org_id}/users",
            {"user_id": ADMIN, "name": "Root", "email": "root@example.com", "role": "admin"},
        )
    with server.in_thread(Limiter()) as url:
        alone, alone_statuses, _, _ = _run(url, noisy=False)
    with server.in_thread(Limiter()) as url:  # a fresh bucket for each org
        beside, beside_statuses, flood, elapsed = _run(url, noisy=True)
    free = plans.request_limits("free")
    accepted = flood.count(200)
    # The burst is spent at once; the rate is what the rest of the window let through.
    rate = (accepted - free.burst) / elapsed
    refused = flood.count(429)
    p95_alone, p95_beside = p50_p95(alone)[1], p50_p95(beside)[1]
    goals = [
        (f"the free org is refused past its burst ({refused} 429s)", refused > 0 and set(flood) <= {200, 429}),
        (
            f"its accepted rate after the burst within 20% of {free.per_second}/s ({rate:.1f}/s)",
            abs(rate - free.per_second) <= 0.2 * free.per_second,
        ),
        ("the enterprise org gets only 200s, no 429", set(alone_statuses + beside_statuses) == {200}),
        (
            f"its p95 beside the flood at most 1.5x its p95 alone ({ratio(p95_beside / p95_alone)}x)",
            meets(p95_beside / p95_alone, 1.5),
        ),
    ]
    rows = [
        ["free org, flooding", len(flood), accepted, refused, f"{accepted / elapsed:.1f}", "", ""],
        [
            "enterprise org, alone",
            len(alone),
            alone_statuses.count(200),
            alone_statuses.count(429),
            "",
            *map(ms, p50_p95(alone)),
        ],
        [
            "enterprise org, beside it",
            len(beside),
            beside_statuses.count(200),
            beside_statuses.count(429),
            "",
            *map(ms, p50_p95(beside)),
        ],
    ]
    body = "\n\n".join(
        [
            f"Each side runs {DURATION:.0f} s on the local gateway with its limits on (`local/limits.py`): "
            f"the free org floods on {FLOODERS} connections, the enterprise org sends {STEADY_RATE:.0f} GETs a second.",
            markdown(["caller", "requests", "200", "429", "accepted per s", "p50 ms", "p95 ms"], rows),
            "\n".join(f"- {verdict(ok)}: {goal}" for goal, ok in goals),
        ]
    )
    return Section("Noisy neighbour: per-org limits at the gateway", body, goals)
