"""The machine and versions the numbers were measured with."""

import os
import platform
import subprocess
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

from local import ROOT
from local.dynamodb_local import jar_dir


def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _output(*command: str, cwd: Path = ROOT) -> str:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=60)
    return (result.stdout + result.stderr).strip()


def _code() -> str:
    head = _output("git", "rev-parse", "--short", "HEAD")
    dirty = _output("git", "status", "--porcelain", "--", "functions")
    return f"{head}" + (" with uncommitted changes in functions/" if dirty else "")


def describe() -> list[tuple[str, str]]:
    home = jar_dir()
    return [
        ("Date", datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")),
        ("Code", _code()),
        ("CPU", f"{_cpu_model()}, {os.cpu_count()} cores"),
        ("OS", platform.platform()),
        ("Python", platform.python_version()),
        ("Java", _output("java", "-version").splitlines()[0]),
        (
            "DynamoDB Local",
            f"{_output('java', '-jar', str(home / 'DynamoDBLocal.jar'), '-version', cwd=home)} ({home.name})",
        ),
        ("boto3 / botocore", f"{version('boto3')} / {version('botocore')}"),
        ("Powertools", version("aws-lambda-powertools")),
        ("pydantic", version("pydantic")),
    ]
