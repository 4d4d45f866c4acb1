"""Benchmarks: requests per call, handler overhead, flat pages, cold start, asset size, partition heat, cost.

Runs against an in-memory DynamoDB Local of its own, prints one Markdown table per measure and, for a
full run, writes them to docs/BENCHMARKS.md.
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

from bench import (
    assets,
    authorizer,
    calls,
    coldstart,
    cost,
    harness,
    heat,
    limited,
    machine,
    noisy,
    overhead,
    pages,
    profile,
)
from bench.harness import Section
from bench.stats import markdown, verdict
from local import ROOT

MEASURES = (
    "calls",
    "overhead",
    "limited",
    "pages",
    "coldstart",
    "profile",
    "assets",
    "noisy",
    "authorizer",
    "heat",
    "cost",
)
QUICK = {"iterations": 40, "sizes": [10, 100, 1000], "cold_runs": 3, "profile_runs": 1, "orgs": [2, 5]}
REPORT = ROOT / "docs" / "BENCHMARKS.md"


def options(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"a smoke run with small sizes: {QUICK}")
    parser.add_argument("--iterations", type=int, default=300, help="rounds per timed comparison (default: 300)")
    parser.add_argument(
        "--sizes",
        type=lambda text: sorted(int(size) for size in text.split(",")),
        default=[10, 1_000, 100_000],
        help="tickets of the users whose first page is timed (default: 10,1000,100000)",
    )
    parser.add_argument("--cold-runs", type=int, default=7, help="fresh processes per cold start side (default: 7)")
    parser.add_argument("--profile-runs", type=int, default=5, help="processes and profiles per figure (default: 5)")
    parser.add_argument(
        "--orgs",
        type=lambda text: [int(count) for count in text.split(",")],
        default=list(heat.ORG_COUNTS),
        help=f"org counts of the partition heat (default: {','.join(map(str, heat.ORG_COUNTS))})",
    )
    parser.add_argument("--only", type=lambda text: text.split(","), default=list(MEASURES), help=",".join(MEASURES))
    parser.add_argument("--output", type=Path, help=f"the report (default: {REPORT.relative_to(ROOT)}, full runs only)")
    args = parser.parse_args(argv)
    if args.quick:
        vars(args).update(QUICK)
    if args.output is None and not args.quick and set(args.only) == set(MEASURES):
        args.output = REPORT
    return args


def measure(args: argparse.Namespace) -> list[Section]:
    def step(name: str, run) -> None:
        if name in args.only:
            print(f"bench: {name}...", file=sys.stderr, flush=True)
            started = time.perf_counter()
            sections.append(run())
            print(f"bench: {name} took {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)

    sections: list[Section] = []
    step("assets", assets.run)  # first: a failing synth should not cost the whole run
    with harness.dynamodb_local():
        client = harness.bare_client()
        step("calls", lambda: calls.run(client))
        step("overhead", lambda: overhead.run(client, args.iterations))
        step("limited", lambda: limited.run(client, args.iterations))
        step("coldstart", lambda: coldstart.run(client, args.cold_runs))
        step("profile", lambda: profile.run(client, args.profile_runs, args.iterations))
        step("pages", lambda: pages.run(client, args.sizes, args.iterations))
        step("authorizer", lambda: authorizer.run(client, args.iterations, args.cold_runs))
        step("heat", lambda: heat.run(tuple(args.orgs)))
        # A third of the rounds: each is a lifecycle of 17 calls, at each of 4 memory sizes.
        step("cost", lambda: cost.run(max(3, args.iterations // 3)))
        step("noisy", noisy.run)
    return sorted(sections, key=order)


def order(section: Section) -> tuple[float, str]:
    """By the section's number (10 after 9), the unnumbered last."""
    number = section.title.split(".", 1)[0]
    return (int(number) if number.isdigit() else float("inf"), section.title)


def report(args: argparse.Namespace, sections: list[Section], minutes: float) -> str:
    goals = []
    for section in sections:
        met = sum(ok for _, ok in section.goals)
        if section.goals:
            goals.append(f"- {section.title}: {met} of {len(section.goals)} met")
        goals += [f"  - {verdict(False)}: {goal}" for goal, ok in section.goals if not ok]
    settings = (
        f"`python -m bench --iterations {args.iterations} --sizes {','.join(map(str, args.sizes))} "
        f"--cold-runs {args.cold_runs} --profile-runs {args.profile_runs} --orgs {','.join(map(str, args.orgs))}`, "
        f"{minutes:.1f} minutes. "
        "The functions run with the deployed settings "
        "(`LOG_LEVEL=INFO`) and `LAMBDA_TASK_ROOT` set as in Lambda, except `POWERTOOLS_TRACE_DISABLED=true` "
        "(no X-Ray daemon), `POWERTOOLS_METRICS_DISABLED=true` (no EMF JSON printed into the timings) and "
        "`GSI1_SETTLE_SECONDS=0` (DynamoDB Local updates GSI1 synchronously; an org delete need not wait)."
    )
    parts = [
        "# Benchmarks",
        "Generated by `make bench` (`python -m bench`); do not edit by hand. The machine is shared and "
        "noisy, so every goal is a ratio of measurements taken side by side (interleaved), of medians "
        "and percentiles, never a lone absolute time.",
        markdown(["Machine", ""], machine.describe()),
        settings,
        "## Goals\n\n" + "\n".join(goals),
        *(f"## {section.title}\n\n{section.body}" for section in sections),
    ]
    return "\n\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = options(argv)
    # Powertools warns on every read route (no metric was added); that is expected and not news.
    warnings.filterwarnings("ignore", "No application metrics to publish")
    started = time.perf_counter()
    sections = measure(args)
    text = report(args, sections, (time.perf_counter() - started) / 60)
    print(text)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)
        print(f"bench: wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
