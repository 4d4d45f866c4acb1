"""6. Handler overhead at Lambda's CPU share: the read routes of each function, timed as in section 2,
in a child process whose CPU a cgroup quota holds to what Lambda gives that function's memory size.

Lambda gives one vCPU at 1,769 MB and a proportional share below, so a function of 512 MB runs
Python at about 29% of one core. DynamoDB Local stays outside the cgroup, as DynamoDB is outside
Lambda; the bare call runs inside it, as the SDK's own work does in Lambda.
"""

import json
import os
import subprocess
import sys
import uuid
from contextlib import contextmanager
from pathlib import Path

from bench import data
from bench.harness import Section, bare_client, event, label, recording, replay
from bench.overhead import GOAL, READS
from bench.stats import interleave, markdown, meets, ms, p50_p95, ratio
from controlplane import config
from controlplane.http.routes import FUNCTIONS
from local import ROOT
from local.apigw import invoke, match

ORG, USER = "limited", "alice"
# The scheduler hands out the quota per period, and a process that spends its quota early in one waits
# for the next. AWS documents no period; Linux's default is 100 ms. PERIOD_WHY is the choice.
PERIOD_US = 20_000
PERIOD_WHY = (
    "20 ms is the period observed from inside Lambda: a function that spends more than its share of a "
    "20 ms slice pauses until the slice ends, one that spends slightly less does not (pwrdrvr's "
    "lambda-throttling measurements, across memory sizes; pwrdrvr/lambda-dispatch issue 246, which began "
    "from a 100 ms slice and corrected it to 20 ms by observation). AWS documents no period, so the "
    "observed one is used; the earlier 10 ms made each pause shorter and more frequent than Lambda's"
)
CGROUP_V1 = Path("/sys/fs/cgroup/cpu")  # the cpu controller's own hierarchy (cgroup v1)
CGROUP_V2 = Path("/sys/fs/cgroup")


def unavailable() -> str | None:
    """Why no CPU quota can be set here, or None when one can."""
    if (CGROUP_V1 / "cpu.cfs_quota_us").exists():
        return None if os.access(CGROUP_V1, os.W_OK) else f"{CGROUP_V1} is not writable (run as root)"
    controllers = CGROUP_V2 / "cgroup.subtree_control"
    if controllers.exists() and "cpu" in controllers.read_text().split():
        return None if os.access(CGROUP_V2, os.W_OK) else f"{CGROUP_V2} is not writable (run as root)"
    return "neither a cgroup v1 cpu hierarchy nor a cgroup v2 cpu controller is mounted"


@contextmanager
def cpu_quota(share: float):
    """A new cgroup whose processes together get ``share`` of one CPU; yields its ``cgroup.procs``."""
    quota = max(1000, round(share * PERIOD_US))
    if (CGROUP_V1 / "cpu.cfs_quota_us").exists():
        group = CGROUP_V1 / f"bench-{uuid.uuid4().hex[:8]}"
        group.mkdir()
        (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (group / "cpu.cfs_quota_us").write_text(str(quota))
    else:
        group = CGROUP_V2 / f"bench-{uuid.uuid4().hex[:8]}"
        group.mkdir()
        (group / "cpu.max").write_text(f"{quota} {PERIOD_US}")
    try:
        yield group / "cgroup.procs"
    finally:
        group.rmdir()  # its processes have exited


# The child: the same interleaved timing as section 2, for the routes it is given, printed as JSON.
CHILD = """
import json, sys
from bench import limited
print(json.dumps(limited.child(json.loads(sys.argv[1]), int(sys.argv[2]))))
"""


def child(requests: list[dict], iterations: int) -> list[list[float]]:
    """p50 of the handler and of the bare call, per request event."""
    client = bare_client()
    found = []
    for request in requests:
        with recording(config.dynamodb()) as recorder:
            invoke(request)
        bare = replay(client, *recorder.the_one_request())
        handler = lambda request=request: invoke(request)  # noqa: E731
        samples = interleave({"handler": handler, "bare": bare}, iterations, iterations // 5)
        found.append([p50_p95(samples["handler"])[0], p50_p95(samples["bare"])[0]])
    return found


def run(client, iterations: int) -> Section:
    # Here, not at the top: the cgroup's child imports this module, and infra starts CDK's node runtime.
    from infra.constants import LAMBDA_FULL_VCPU_MB, MEMORY_MB

    title = "6. Handler overhead at Lambda's CPU share"
    reason = unavailable()
    if reason:
        return Section(title, f"Not measured: {reason}.")
    ids = {"org_id": ORG, "user_id": USER, "ticket_id": data.seed(client, ORG, {USER: 25})[USER][0]}
    rows = []
    for function in FUNCTIONS:
        reads = [(path, query) for path, query in READS if match("GET", path.format(**ids))[0].function == function]
        share = MEMORY_MB[function] / LAMBDA_FULL_VCPU_MB
        requests = [event("GET", path.format(**ids), query=query) for path, query in reads]
        with cpu_quota(share) as procs:
            command = [sys.executable, "-c", CHILD, json.dumps(requests), str(iterations)]
            # preexec_fn: the child joins the cgroup before it runs a line of Python.
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
            raise RuntimeError(f"limited child failed:\n{result.stderr[-3000:]}")
        for (path, query), (handler, bare) in zip(reads, json.loads(result.stdout.splitlines()[-1]), strict=True):
            name = label("GET", path, query)
            timings = [ms(handler), ms(bare), ms(handler - bare), ratio(handler / bare)]
            within = "yes" if meets(handler / bare, GOAL) else "no"
            rows.append([name, f"{MEMORY_MB[function]} MB", f"{share:.0%}", *timings, within])
    headers = ["Route", "Memory", "CPU share", "Handler p50", "Bare p50", "Overhead p50", "Ratio p50", f"Within {GOAL}"]
    body = (
        f"As section 2 ({iterations} rounds, handler and bare call interleaved, after {iterations // 5} of "
        "warm-up; a figure, not a goal), in a child process held by a cgroup CPU quota to the share of one "
        f"vCPU that Lambda gives the function's memory size (`infra/constants.py`: size / "
        f"{LAMBDA_FULL_VCPU_MB:,} MB; quota per {PERIOD_US // 1000} ms period: {PERIOD_WHY}). The bare call "
        "runs under the same quota; DynamoDB Local does not. Times in ms.\n\n" + markdown(headers, rows)
    )
    return Section(title, body)
