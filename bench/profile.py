"""Where a cold start and a warm call go: ``python -X importtime`` and cProfile of each function's
first request, and cProfile of warm calls of every read route.

``python -m bench.profile [--runs 5]`` starts its own DynamoDB Local, then for each function runs
fresh interpreters (the same child as ``bench.coldstart``, with Lambda's environment) and prints
Markdown: the import time per module of our own and per top-level package, and the functions the
first request spends its time in; then, in this process, each read route of ``bench.overhead``
called warm under cProfile, its own time summed per package. Each figure is the minimum over the
runs: the machine is shared, and noise only ever adds time.
"""

import argparse
import cProfile
import json
import os
import subprocess
import sys
import timeit
from collections import Counter

from bench import coldstart, data, harness, overhead, steps
from bench.harness import Section
from bench.stats import markdown, ms
from local import ROOT
from local.apigw import invoke

# The child: import the handler, then the first request under cProfile. It prints the import time,
# the first request's time (unprofiled: a second process, below) and the profile's top functions.
CHILD = """
import time
start = time.perf_counter()
import cProfile, importlib, json, pstats, sys
from local.apigw import LambdaContext
function, event, profile = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3] == "1"
module = importlib.import_module(f"{function}.handler")
imported = time.perf_counter()
profiler = cProfile.Profile()
if profile:
    profiler.enable()
response = module.lambda_handler(event, LambdaContext(function))
profiler.disable()
done = time.perf_counter()
assert response["statusCode"] == 200, response
rows = []
if profile:
    stats = pstats.Stats(profiler)
    for (file, line, name), (_, calls, own, cumulative, _) in stats.stats.items():
        where = file.split("site-packages/")[-1].split("functions/")[-1].split("python3.11/")[-1]
        rows.append([f"{where}:{line}({name})", calls, own, cumulative])
print(json.dumps({"import": imported - start, "first": done - imported, "rows": rows}))
"""
TOP = 12


def _child(function: str, event: dict, *, profile: bool, importtime: bool) -> tuple[dict, str]:
    flags = ["-X", "importtime"] if importtime else []
    command = [sys.executable, *flags, "-c", CHILD, function, json.dumps(event), "1" if profile else "0"]
    result = subprocess.run(command, cwd=ROOT, env=os.environ, capture_output=True, text=True, timeout=120)
    if result.returncode:
        raise RuntimeError(result.stderr[-3000:])
    return json.loads(result.stdout.splitlines()[-1]), result.stderr


def _modules(stderr: str) -> dict[str, float]:
    """Self time in ms of each module ``-X importtime`` reports."""
    found = {}
    for line in stderr.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if line.startswith("import time:") and fields[0].strip().isdigit():
            found[fields[2].strip()] = int(fields[0]) / 1000
    return found


def _minimum(runs: list[dict[str, float]]) -> dict[str, float]:
    return {name: min(run.get(name, 0.0) for run in runs) for name in set().union(*runs)}


def profile(function: str, event: dict, runs: int) -> dict:
    timed = [_child(function, event, profile=False, importtime=False)[0] for _ in range(runs)]
    modules = _minimum([_modules(_child(function, event, profile=False, importtime=True)[1]) for _ in range(runs)])
    packages: Counter = Counter()
    for name, self_ms in modules.items():
        packages[name.split(".")[0]] += self_ms
    profiles = [_child(function, event, profile=True, importtime=False)[0]["rows"] for _ in range(runs)]
    own = _minimum([{row[0]: row[2] * 1000 for row in rows} for rows in profiles])
    cumulative = _minimum([{row[0]: row[3] * 1000 for row in rows} for rows in profiles])
    return {
        "import": min(t["import"] for t in timed) * 1000,
        "first": min(t["first"] for t in timed) * 1000,
        "packages": packages,
        "ours": {name: t for name, t in modules.items() if name.split(".")[0] in ("controlplane", function)},
        "own": own,
        "cumulative": cumulative,
    }


def _ranked(results: dict[str, dict], key: str, label) -> str:
    """The TOP largest entries of ``results[*][key]``, one column per function."""
    names = set().union(*(r[key] for r in results.values()))
    top = sorted(names, key=lambda n: -max(r[key].get(n, 0) for r in results.values()))[:TOP]
    rows = [[label(name), *(ms(r[key].get(name, 0)) for r in results.values())] for name in top]
    return markdown(["", *results], rows)


def report(results: dict[str, dict], runs: int) -> str:
    totals = [
        ["import of the handler", *(ms(r["import"]) for r in results.values())],
        ["first request", *(ms(r["first"]) for r in results.values())],
        [
            "all imports (`-X importtime`, which slows them)",
            *(ms(sum(r["packages"].values())) for r in results.values()),
        ],
    ]
    parts = [
        f"Minimum of {runs} fresh processes per figure (the machine is shared; noise only adds). Times in ms.",
        markdown(["", *results], totals),
        f"Import self time per top-level package, the {TOP} largest:",
        _ranked(results, "packages", lambda name: f"`{name}`"),
        "Our own modules, self time:",
        _ranked(results, "ours", lambda name: f"`{name}`"),
    ]
    for name, result in results.items():
        # The wrappers (lambda_handler, resolve, the middlewares) hold nearly everything: leave them out.
        whole = max(result["cumulative"].values())
        inner = {f: t for f, t in result["cumulative"].items() if t < 0.8 * whole}
        rows = sorted(inner.items(), key=lambda item: -item[1])[:TOP]
        parts.append(
            f"`{name}`'s first request under cProfile (whole: {ms(whole)}): the {TOP} largest cumulative times"
        )
        parts.append(
            markdown(["Function", "cumulative", "own"], [[f"`{f}`", ms(t), ms(result["own"][f])] for f, t in rows])
        )
    return "\n\n".join(parts)


# Where own time is spent, by the file it is spent in. The DynamoDB call is botocore, urllib3 and the
# standard library's http/socket/ssl: the bare call pays those too. The rest is the handler's overhead.
_BUCKETS = (
    (
        "the DynamoDB call (botocore, urllib3, http, socket)",
        ("botocore/", "urllib3/", "http/", "email/", "queue.py", "socket", "ssl"),
    ),
    ("Powertools (with jmespath, X-Ray SDK)", ("aws_lambda_powertools/", "jmespath/", "aws_xray_sdk/")),
    ("pydantic", ("pydantic/", "pydantic_core", "<method 'validate_python'", "<method 'to_python'")),
    ("ours (functions/)", ("functions/",)),
    ("json", ("json/", "_json")),
    ("logging", ("logging/",)),
    ("the bench's dispatch (local/)", ("local/apigw",)),
)


def _bucket(entry: tuple) -> str:
    where = f"{entry[0]}:{entry[2]}"
    return next((name for name, marks in _BUCKETS if any(mark in where for mark in marks)), "other")


def _by_bucket(stats: dict, calls: int) -> Counter:
    """µs per call of own time per bucket. Time in a builtin or in the standard library (``str.join``,
    ``re``, ``datetime``...) goes to the bucket of whoever called it, looking up to 4 callers back."""
    totals: Counter = Counter()

    def attribute(entry: tuple, seconds: float, depth: int) -> None:
        bucket = _bucket(entry)
        callers = stats[entry][4] if entry in stats else {}
        called = sum(timing[2] for timing in callers.values())
        if bucket != "other" or depth == 4 or not callers or not called:
            totals[bucket] += seconds / calls * 1e6
            return
        for caller, timing in callers.items():
            attribute(caller, seconds * timing[2] / called, depth + 1)

    for entry, (_, _, own, _, _) in stats.items():
        attribute(entry, own, 0)
    return totals


def warm(client, calls: int, runs: int) -> list[list]:
    """Per read route: µs per call of own time in each bucket, the minimum over ``runs`` profiles."""
    users = {overhead.USER: overhead.TICKETS, **{f"user-{i:02}": 0 for i in range(overhead.USERS - 1)}}
    ids = {"org_id": overhead.ORG, "user_id": overhead.USER}
    ids["ticket_id"] = data.seed(client, overhead.ORG, users)[overhead.USER][0]
    rows = []
    for path, query in overhead.READS:
        request = harness.event("GET", path.format(**ids), query=query)
        for _ in range(calls // 5):
            invoke(request)
        per_run = []
        for _ in range(runs):
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(calls):
                invoke(request)
            profiler.disable()
            profiler.create_stats()
            per_run.append(_by_bucket(profiler.stats, calls))
        best = _minimum(per_run)
        names = [name for name, _ in _BUCKETS] + ["other"]
        call = best[names[0]]
        rest = sum(best.get(name, 0) for name in names[1:])
        rows.append([harness.label("GET", path, query), *(f"{best.get(name, 0):.0f}" for name in names)])
        rows[-1] += [f"{rest:.0f}", f"{(call + rest) / call:.2f}"]
    return rows


def warm_report(rows: list[list], calls: int, runs: int) -> str:
    headers = ["Route", *(name for name, _ in _BUCKETS), "other", "all but the call", "ratio under cProfile"]
    return (
        f"Warm calls under cProfile: {calls} calls per route after {calls // 5} of warm-up, own time summed by "
        "where it is spent (a builtin's or the standard library's time goes to its caller's column), µs per "
        f"call, the minimum of {runs} profiles per bucket. cProfile slows Python "
        "code more than the C it calls, so read the columns against each other, not as the bench's ratio.\n\n"
        + markdown(headers, rows)
    )


def _best_us(call, number: int, repeat: int) -> str:
    return f"{min(timeit.repeat(call, number=number, repeat=repeat)) / number * 1e6:.1f}"


def responses(repeat: int) -> str:
    """What Powertools' response validation costs against the alternatives, on a ticket and a page."""
    from aws_lambda_powertools.event_handler.openapi.encoders import jsonable_encoder
    from pydantic import TypeAdapter

    from controlplane.logic import tickets
    from controlplane.models.resources import Ticket, TicketCreate, TicketPage

    ticket = Ticket.model_validate(tickets.ticket_item("acme", "alice", TicketCreate(subject="Printer", tags=["a"])))
    page = TicketPage(items=[ticket] * 20, next_cursor="c")
    rows = []
    for name, body, number in (("a ticket", ticket, 2000), ("a page of 20", page, 200)):
        # What the validation middleware does with a route's return type (a TypeAdapter of it).
        adapter = TypeAdapter(type(body))
        ways = (
            lambda adapter=adapter, body=body: adapter.dump_python(adapter.validate_python(body), mode="json"),
            lambda body=body: jsonable_encoder(body),
            lambda body=body: body.model_dump(mode="json"),
        )
        rows.append([name, *(_best_us(way, number, repeat) for way in ways)])
    headers = ["Body", "validated, serialized (today)", "no return type: jsonable_encoder", "model_dump alone"]
    return (
        "Response validation: `enable_validation` validates what a route returns against its return type and "
        "serializes it with that type's pydantic serializer; without a return type Powertools serializes "
        "with its generic `jsonable_encoder`, which walks the model's dump again in Python. µs per "
        f"response, the minimum of {repeat} timeit repeats:\n\n" + markdown(headers, rows)
    )


def run(client, runs: int, calls: int) -> Section:
    """7. The profiles, as a section of ``make bench``'s report."""
    ids = {"org_id": "cold", "user_id": "alice", "ticket_id": data.seed(client, "cold", {"alice": 1})["alice"][0]}
    results = {
        function: profile(function, harness.event("GET", path.format(**ids)), runs)
        for function, path in coldstart.FIRST_REQUEST.items()
    }
    body = (
        "Where section 4's cold starts and section 2's overheads go (`python -m bench.profile` prints this "
        "alone). Cold: fresh processes as in section 4.\n\n"
        + report(results, runs)
        + "\n\n"
        + warm_report(warm(client, calls, runs), calls, runs)
        + "\n\n"
        + steps.run(client)
        + "\n\n"
        + responses(runs)
    )
    return Section("7. Where the time goes", body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200, help="warm calls per profile (default: 200)")
    parser.add_argument("--warm-only", action="store_true", help="skip the cold starts")
    args = parser.parse_args(argv)
    with harness.dynamodb_local():
        client = harness.bare_client()
        if args.warm_only:
            print(warm_report(warm(client, args.calls, args.runs), args.calls, args.runs))
            print(steps.run(client))
        else:
            print(run(client, args.runs, args.calls).body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
