"""5. Asset size: what each function ships, as `cdk synth` stages it."""

import io
import json
import tempfile
import zipfile
from pathlib import Path

from bench.harness import Section
from bench.stats import markdown
from local import cdk_cli

STACK = "ControlPlane-dev"  # what app.py synthesizes without context


def template(outdir: Path) -> dict:
    """The dev stack's template, synthesized afresh into ``outdir``."""
    cdk_cli.synth(outdir)
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
        for resource in template(Path(outdir))["Resources"].values():
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
