"""``cdk synth`` by the pinned CDK CLI, offline, into a folder of its own (the shared cdk.out is left
alone): the cloud assembly `make synth` writes, with the asset metadata SAM CLI reads. For the
infrastructure tests and the benchmarks' asset sizes."""

import os
import subprocess
from pathlib import Path

from local import ROOT

CLI = ROOT / "node_modules" / ".bin" / "cdk"
ENVIRONMENT = {
    "CDK_DISABLE_CLI_TELEMETRY": "true",
    # CDK's built-in template validation (~15 s) is for `make synth`; the tests run it on their
    # in-process synth, the benchmarks only read the assets. The cdk-nag plugin app.py adds still runs.
    "CDK_VALIDATION": "false",
}


def synth(outdir: Path, *options: str) -> str:
    """Synthesize the app (``-c stage=prod`` and the like in ``options``) into ``outdir``; returns what
    the CLI printed. cdk.json's app command silences jsii's Node banner itself, so none is set here."""
    command = [str(CLI), "synth", "--no-notices", "--quiet", "--output", str(outdir), *options]
    result = subprocess.run(
        command, cwd=ROOT, env=_without_jsii(os.environ) | ENVIRONMENT, capture_output=True, text=True, timeout=600
    )
    if result.returncode:
        raise RuntimeError(f"cdk synth failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout + result.stderr


def _without_jsii(environ: os._Environ[str]) -> dict[str, str]:
    return {name: value for name, value in environ.items() if not name.startswith("JSII_")}
