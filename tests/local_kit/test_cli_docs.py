"""docs/CLI.md lists every cpctl command, in the words of its --help: walked from the app itself, so
a command added to cpctl and not to the page (as `orgs activity` once was) fails here."""

import re

import typer.main

from cpctl.cli import app
from local import ROOT

PAGE = ROOT / "docs" / "CLI.md"
README = ROOT / "README.md"


def _commands(command=None, path=("cpctl",)) -> dict[str, str]:
    """Each leaf command of cpctl's tree, with the one line its group's --help shows for it."""
    command = command or typer.main.get_command(app)
    subcommands = getattr(command, "commands", None)
    if not subcommands:
        return {" ".join(path): command.get_short_help_str(limit=200)}
    found: dict[str, str] = {}
    for name, subcommand in subcommands.items():
        found |= _commands(subcommand, (*path, name))
    return found


def _listed() -> dict[str, str]:
    return dict(re.findall(r"^\| `(cpctl [^`]+)` \| (.+) \|$", PAGE.read_text(), re.MULTILINE))


def test_the_walk_finds_the_commands_of_every_group():
    commands = _commands()

    assert {"cpctl orgs activity", "cpctl users list", "cpctl tickets open", "cpctl login"} <= set(commands)


def test_cli_md_lists_every_command_with_its_help():
    assert _listed() == _commands()


def test_the_readme_runs_cpctl_from_the_venv_where_make_install_puts_it():
    # Every cpctl command the README gives is one a reader can paste as it is: cpctl is only on the
    # PATH of a shell that activated the venv.
    groups = "|".join(name for name in typer.main.get_command(app).commands)
    prefixes = re.findall(rf"(\S*)\bcpctl (?=(?:{groups})\b)", README.read_text())

    assert prefixes
    assert [prefix for prefix in prefixes if prefix.lstrip("`") != ".venv/bin/"] == []
