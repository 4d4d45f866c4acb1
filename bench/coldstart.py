"""4. Cold start: a fresh interpreter importing a function and serving its first request, against one
that only imports boto3, makes a client and sends the same request."""

import json
import os
import statistics
import subprocess
import sys
from collections import Counter

from bench import data
from bench.harness import Section, event, label, recording
from bench.stats import markdown, meets, ms, ratio, verdict
from controlplane import config
from controlplane.http.routes import ORGANIZATIONS, TICKETS, USERS
from local import ROOT
from local.apigw import invoke

ORG, USER = "cold", "alice"
FIRST_REQUEST = {
    ORGANIZATIONS: "/orgs/{org_id}",
    USERS: "/orgs/{org_id}/users/{user_id}",
    TICKETS: "/orgs/{org_id}/tickets/{ticket_id}",
}
GOAL = 1.3  # handler median / bare median
TOP = 10
IMPORTTIME_RUNS = 3

# Each child times itself from its first statement to the response; both pay the same interpreter start.
HANDLER = """
import time
start = time.perf_counter()
import importlib, json, sys
from local.apigw import LambdaContext
function, event = sys.argv[1], json.loads(sys.argv[2])
response = importlib.import_module(f"{function}.handler").lambda_handler(event, LambdaContext(function))
elapsed = time.perf_counter() - start
assert response["statusCode"] == 200, response
print(elapsed)
"""
BARE = """
import time
start = time.perf_counter()
import json, sys
import boto3
getattr(boto3.client("dynamodb"), sys.argv[1])(**json.loads(sys.argv[2]))
print(time.perf_counter() - start)
"""


def _child(script: str, *args: str, importtime: bool = False) -> subprocess.CompletedProcess:
    flags = ["-X", "importtime"] if importtime else []
    command = [sys.executable, *flags, "-c", script, *args]
    # cwd: ``-c`` puts the working directory on sys.path, so ``local`` imports (functions/ is on the venv's).
    result = subprocess.run(command, cwd=ROOT, env=os.environ, capture_output=True, text=True, timeout=120)
    if result.returncode:
        raise RuntimeError(f"cold start child failed:\n{result.stderr[-3000:]}")
    return result


def _import_ms(stderr: str) -> Counter:
    """Milliseconds per top-level package: the self times of all its modules (``-X importtime``)."""
    totals: Counter = Counter()
    for line in stderr.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if line.startswith("import time:") and fields[0].strip().isdigit():
            totals[fields[2].strip().split(".")[0]] += int(fields[0]) / 1000
    return totals


def run(client, runs: int) -> Section:
    ids = {"org_id": ORG, "user_id": USER, "ticket_id": data.seed(client, ORG, {USER: 1})[USER][0]}
    rows, goals, imports = [], [], {}
    for function, path in FIRST_REQUEST.items():
        request = event("GET", path.format(**ids))
        with recording(config.dynamodb()) as recorder:
            invoke(request)
        method, params = recorder.the_one_request()
        handler_args, bare_args = (HANDLER, function, json.dumps(request)), (BARE, method, json.dumps(params))
        times: dict[str, list[float]] = {"handler": [], "bare": []}
        for round_ in range(runs):
            turns = [("handler", handler_args), ("bare", bare_args)]
            for kind, args in reversed(turns) if round_ % 2 else turns:
                times[kind].append(float(_child(*args).stdout) * 1000)
        handler, bare = statistics.median(times["handler"]), statistics.median(times["bare"])
        met = meets(handler / bare, GOAL)
        goals.append((f"{function}: cold start at most {GOAL} x boto3's alone", met))
        rows.append([function, label("GET", path), ms(handler), ms(bare), ratio(handler / bare), verdict(met)])
        runs_ms = [_import_ms(_child(*handler_args, importtime=True).stderr) for _ in range(IMPORTTIME_RUNS)]
        imports[function] = {name: statistics.median(r[name] for r in runs_ms) for name in set().union(*runs_ms)}
    headers = ["Function", "First request", "Handler median", "boto3 alone median", f"Ratio (goal <= {GOAL})", "Goal"]
    top = sorted(set().union(*imports.values()), key=lambda name: -max(i.get(name, 0) for i in imports.values()))
    import_rows = [[f"`{name}`", *(ms(i.get(name, 0)) for i in imports.values())] for name in top[:TOP]]
    import_rows.append(["all imports", *(ms(sum(i.values())) for i in imports.values())])
    body = (
        f"Median of {runs} runs each, handler and boto3-only runs alternating, each a new `python -c` process "
        "timing itself from its first statement (imports, client, the first request; the interpreter's own "
        "start is the same for both and left out; the handler side also imports `local.apigw` for the Lambda "
        "context object). Times in ms.\n\n"
        + markdown(headers, rows)
        + f"\n\nThe {TOP} biggest import costs of the handler runs (`python -X importtime`, median of "
        f"{IMPORTTIME_RUNS} runs; ms per top-level package, summing the self time of all its modules, so "
        "nothing is counted twice; importtime itself slows imports down):\n\n"
        + markdown(["Package", *imports], import_rows)
    )
    return Section("4. Cold start", body, goals)
