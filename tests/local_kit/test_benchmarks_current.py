"""docs/BENCHMARKS.md describes the code it was measured at: no change under functions/ or bench/
since the commit it records. After such a change, `make bench` on a quiet machine and commit the
report; this test is how the report is kept current."""

import re
import subprocess

from local import ROOT

REPORT = ROOT / "docs" / "BENCHMARKS.md"
MEASURED = ("functions", "bench")


def _git(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *arguments], cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_the_benchmark_report_was_measured_at_the_current_code():
    recorded = re.search(r"^\| Code \| (\S+)(.*) \|$", REPORT.read_text(), re.MULTILINE)
    assert recorded, "docs/BENCHMARKS.md records no commit: run make bench"
    commit, rest = recorded.groups()
    assert not rest.strip(), f"measured with uncommitted changes ({rest.strip()}): run make bench at a commit"
    assert _git("merge-base", "--is-ancestor", commit, "HEAD").returncode == 0, f"{commit} is not in this history"

    changed = _git("diff", "--name-only", commit, "HEAD", "--", *MEASURED).stdout.split()

    assert changed == [], f"docs/BENCHMARKS.md was measured at {commit}; since then {changed} changed: run make bench"
