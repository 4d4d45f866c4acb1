"""5. Asset size: what each function ships, as `cdk synth` stages it."""

import io
import json
import os
import subprocess
import tempfile
import zipfile
from pathlib import Path

from bench.harness import Section
from bench.stats import markdown
from local import ROOT

STACK = "ControlPlane-dev"  # what app.py synthesizes without context


def synth(outdir: Path) -> dict:
    """The dev stack's template, synthesized afresh into ``outdir`` (the shared cdk.out is left alone)."""
    environment = {**os.environ, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20", "CDK_VALIDATION": "false"}
    command = [str(ROOT / "node_modules/.bin/cdk"), "synth", "--no-notices", "--quiet", "--output", str(outdir)]
    result = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=600)
    if result.returncode:
        raise RuntimeError(f"cdk synth failed:\n{result.stdout}\n{result.stderr}")
    return json.loads((outdir / f"{STACK}.template.json").read_text())


def zipped_size(folder: Path) -> int:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            archive.write(path, path.relative_to(folder))
    return buffer.tell()


def run() -> Section:
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-cdk.out-") as outdir:
        template = synth(Path(outdir))
        for resource in template["Resources"].values():
            if resource["Type"] != "AWS::Lambda::Function":
                continue
            folder = Path(outdir) / resource["Metadata"]["aws:asset:path"]
            files = [path for path in folder.rglob("*") if path.is_file()]
            function = resource["Properties"]["Handler"].split(".")[0]
            size = sum(path.stat().st_size for path in files)
            rows.append([function, len(files), f"{size:,}", f"{zipped_size(folder):,}"])
    body = (
        f"Each function's code asset (`aws:asset:path` in the {STACK} template's Metadata), from a fresh "
        "`cdk synth` into a temporary folder; zipped in memory with deflate, as Lambda receives it. "
        "Powertools (with pydantic and the X-Ray SDK) comes from the Powertools layer and boto3 from the "
        "runtime, so neither is in these sizes.\n\n"
        + markdown(["Function", "Files", "Bytes", "Zipped bytes"], sorted(rows))
    )
    return Section("5. Asset size", body)
