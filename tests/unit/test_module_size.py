"""No module over 300 lines in what ships or what a developer runs: a module that grows past it
holds more than one concern, and is split at its seams."""

import pytest

from local import ROOT

MAX_LINES = 300
FOLDERS = ("functions", "local", "cpctl", "infra", "ops", "bench")


def _modules() -> list[str]:
    return sorted(str(path.relative_to(ROOT)) for folder in FOLDERS for path in (ROOT / folder).rglob("*.py"))


def test_the_folders_hold_modules():
    assert len(_modules()) > 50


@pytest.mark.parametrize("module", _modules())
def test_no_module_is_over_300_lines(module):
    lines = len((ROOT / module).read_text().splitlines())

    assert lines <= MAX_LINES, f"{module} has {lines} lines: split it along its concerns"


def test_every_package_init_of_the_functions_is_empty():
    # An __init__ runs when any module of its package is imported: at a cold start, nothing but the
    # modules themselves should run.
    inits = sorted((ROOT / "functions").rglob("__init__.py"))

    assert inits
    assert [str(path.relative_to(ROOT)) for path in inits if path.read_text()] == []
