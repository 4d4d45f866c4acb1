"""8. The authorizer: a decision on API Gateway's cache miss (verify the token, read the org and the
caller's item) against the bare BatchGetItem it makes, and its cold start against boto3 and a client
alone. Its JWKS is served from this process over HTTP, as the local gateway serves it."""

import json
import os
import statistics
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from authorizer import handler
from bench.coldstart import BARE, IMPORTTIME_RUNS, TOP, _child, _import_ms
from bench.harness import Section, recording, replay
from bench.stats import interleave, markdown, meets, ms, p50_p95, ratio, verdict
from local import tokens
from local.apigw import call

ORG = "authz"
WARM_GOAL = 1.25  # decision p50 / bare BatchGetItem p50
COLD_GOAL = 1.3  # cold decision median / boto3 + client + BatchGetItem median
METHOD_ARN = "arn:aws:execute-api:us-east-1:000000000000:bench/prod/GET/orgs/authz"

# A fresh interpreter: import the authorizer, decide once (fetching the JWKS, reading the org and user).
COLD = """
import time
start = time.perf_counter()
import json, sys
from authorizer.handler import lambda_handler
policy = lambda_handler(json.loads(sys.argv[1]), None)
elapsed = time.perf_counter() - start
assert policy["policyDocument"]["Statement"][0]["Effect"] == "Allow", policy
print(elapsed)
"""


@contextmanager
def jwks_endpoint() -> Iterator[None]:
    body = json.dumps(tokens.jwks()).encode()

    class Endpoint(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    saved = {name: os.environ.get(name) for name in ("JWKS_URL", "TOKEN_ISSUER", "TOKEN_AUDIENCES")}
    os.environ.update(tokens.environment(f"http://127.0.0.1:{server.server_port}{tokens.JWKS_PATH}"))
    handler.reset()
    try:
        yield
    finally:
        handler.reset()
        server.shutdown()
        server.server_close()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run(client, iterations: int, cold_runs: int) -> Section:
    assert call("POST", "/orgs", {"org_id": ORG, "name": "Authz"}).status == 201
    member = {"user_id": "alice", "name": "Alice", "email": "alice@example.com", "role": "member"}
    assert call("POST", f"/orgs/{ORG}/users", member).status == 201
    request = {
        "type": "TOKEN",
        "authorizationToken": f"Bearer {tokens.for_user(ORG, 'alice')}",
        "methodArn": METHOD_ARN,
    }
    with jwks_endpoint():
        with recording(handler.dynamodb()) as recorder:
            handler.lambda_handler(request, None)  # fetches the JWKS: what follows is warm
        method, params = recorder.the_one_request()
        samples = interleave(
            {"decision": lambda: handler.lambda_handler(request, None), "bare": replay(client, method, params)},
            iterations,
            iterations // 5,
        )
        decision_p50, decision_p95 = p50_p95(samples["decision"])
        bare_p50, bare_p95 = p50_p95(samples["bare"])
        warm_met = meets(decision_p50 / bare_p50, WARM_GOAL)

        cold_args, bare_args = (COLD, json.dumps(request)), (BARE, method, json.dumps(params))
        times: dict[str, list[float]] = {"authorizer": [], "bare": []}
        for round_ in range(cold_runs):
            turns = [("authorizer", cold_args), ("bare", bare_args)]
            for kind, args in reversed(turns) if round_ % 2 else turns:
                times[kind].append(float(_child(*args).stdout) * 1000)
        cold, bare_cold = statistics.median(times["authorizer"]), statistics.median(times["bare"])
        cold_met = meets(cold / bare_cold, COLD_GOAL)
        runs_ms = [_import_ms(_child(*cold_args, importtime=True).stderr) for _ in range(IMPORTTIME_RUNS)]
    imports = {name: statistics.median(r[name] for r in runs_ms) for name in set().union(*runs_ms)}
    top = sorted(imports, key=lambda name: -imports[name])[:TOP]

    warm_rows = [[f"decision (verify + {method})", ms(decision_p50), ms(decision_p95)]]
    warm_rows.append([f"bare {method} (the authorizer's read per cache miss)", ms(bare_p50), ms(bare_p95)])
    warm_rows.append([f"ratio (goal <= {WARM_GOAL} at p50)", ratio(decision_p50 / bare_p50), verdict(warm_met)])
    cold_rows = [
        [f"authorizer: import, JWKS fetch, verify, {method}", ms(cold)],
        [f"boto3 alone: import, client, the same {method}", ms(bare_cold)],
        [f"ratio (goal <= {COLD_GOAL})", f"{ratio(cold / bare_cold)} {verdict(cold_met)}"],
    ]
    body = (
        "A member's token, verified and decided as on a miss of API Gateway's authorizer cache, the JWKS "
        f"already fetched, against the one DynamoDB request it makes ({method}, projected), replayed on a "
        f"plain client. {iterations} rounds, alternating, after {iterations // 5} of warm-up. Times in ms.\n\n"
        + markdown(["Warm", "p50", "p95"], warm_rows)
        + f"\n\nCold start: median of {cold_runs} fresh `python -c` processes each, alternating, timed from "
        "their first statement; the authorizer's includes fetching the JWKS from a local endpoint.\n\n"
        + markdown(["Cold", "median"], cold_rows)
        + f"\n\nIts biggest import costs (`-X importtime`, median of {IMPORTTIME_RUNS} runs, ms):\n\n"
        + markdown(["Package", "ms"], [[f"`{name}`", ms(imports[name])] for name in top])
    )
    goals = [
        (f"authorizer: a warm decision at most {WARM_GOAL} x the bare {method} at p50", warm_met),
        (f"authorizer: cold start at most {COLD_GOAL} x boto3's alone", cold_met),
    ]
    return Section("8. Authorizer", body, goals)
