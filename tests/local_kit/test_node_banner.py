"""No Node banner where make runs Node: jsii's end-of-life or deprecation warning (a box of "!!"
lines, which the first `make run` printed as Python bytes lines from make install's step that fetches
the authorizer's wheels), and no Node deprecation warning from a tool (``(node:…) [DEP0040]``)."""

import os
import re
import subprocess
import sys

from local import ROOT

BANNER = re.compile(r"!!!!|end-of-life|reached end|not been tested with node|\[DEP\d+\]|DeprecationWarning")


def _without_jsii() -> dict[str, str]:
    """The environment of a shell that never heard of jsii's silencers, as make's is."""
    return {name: value for name, value in os.environ.items() if not name.startswith("JSII_")}


def test_the_banner_pattern_finds_jsiis_box():
    # The box jsii printed before (its first lines, as the Python side relays them)
    printed = "b'!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!'\nb'!!  Node 20 is end-of-life and not supported'"

    assert BANNER.search(printed)


def test_the_authorizers_bundling_step_prints_no_node_banner(tmp_path):
    # Given make's environment, When the authorizer's layer is bundled as cdk synth bundles it (the
    # module make install runs to fetch its wheels, then its local bundling, offline)
    bundle = (
        "import sys; from infra.authorizer import _InstallFromWheelhouse; "
        "_InstallFromWheelhouse().try_bundle(sys.argv[1], None)"
    )
    ran = subprocess.run(
        [sys.executable, "-c", bundle, str(tmp_path)],
        cwd=ROOT,
        env=_without_jsii(),
        capture_output=True,
        text=True,
        timeout=300,
    )

    # Then the layer is built, and nothing but pip's own output is printed
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "python" / "joserfc").is_dir()
    assert not BANNER.search(ran.stdout + ran.stderr), ran.stdout + ran.stderr


def test_spectral_prints_no_node_deprecation_warning():
    linted = subprocess.run(
        [str(ROOT / "node_modules" / ".bin" / "spectral"), "lint", "docs/openapi.json", "--fail-severity=warn"],
        cwd=ROOT,
        env=_without_jsii(),
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert linted.returncode == 0
    assert not BANNER.search(linted.stdout + linted.stderr), linted.stderr
