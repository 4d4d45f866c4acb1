"""No module over 300 lines in what ships or what a developer runs: a module that grows past it
holds more than one concern, and is split at its seams."""

import subprocess

import pytest

from local import ROOT

MAX_LINES = 300
FOLDERS = ("functions", "local", "cpctl", "infra", "ops", "bench")
FILES = ("app.py",)
TESTS = ("tests/", "e2e/")  # test modules hold one scenario a function; their length is their list


def _modules() -> list[str]:
    found = [path for folder in FOLDERS for path in (ROOT / folder).rglob("*.py")]
    return sorted({str(path.relative_to(ROOT)) for path in found} | set(FILES))


def test_every_python_file_git_holds_outside_the_tests_is_measured():
    # Given every Python file of the repository, as git lists it
    listed = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    tracked = {name for name in listed.stdout.split() if not name.startswith(TESTS)}

    # Then each is one this test measures: a new folder (or file) of code cannot slip past the limit
    assert tracked, "git listed no Python file"
    assert tracked - set(_modules()) == set()


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
