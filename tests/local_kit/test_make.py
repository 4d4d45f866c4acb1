"""The Makefile, the commands the README and docs/ give: run in a scratch copy of the checkout, with
stand-ins for the installers, so that a first run (nothing installed yet) is what is tested, in seconds."""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from local import ROOT, tokens
from local.demo import DEMO_ORG, demo_users
from tests.api import create_org, create_user

pytestmark = pytest.mark.skipif(not shutil.which("make"), reason="needs make")

# python3 -m venv .venv: a venv whose pip and python chatter on stdout, as the real ones do, and
# whose python prints the command it was given instead of running it.
FAKE_PYTHON = """#!/bin/sh
echo "creating virtual environment $3"
mkdir -p "$3/bin"
printf '#!/bin/sh\\necho "Collecting boto3 (noise on stdout)"\\n' > "$3/bin/pip"
printf '#!/bin/sh\\necho "python $*"\\n' > "$3/bin/python"
chmod +x "$3/bin/pip" "$3/bin/python"
"""
FAKE_NPM = """#!/bin/sh
echo "added 3 packages in 2s (noise on stdout)"
mkdir -p node_modules
"""


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A fresh clone's files that make reads, nothing installed, and fake installers on PATH."""
    for name in ("Makefile", "requirements.txt", "pyproject.toml", "package.json", "package-lock.json"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "functions" / "authorizer").mkdir(parents=True)  # the authorizer's layer, downloaded by install
    shutil.copy(ROOT / "functions/authorizer/requirements.txt", tmp_path / "functions/authorizer/requirements.txt")
    tools = tmp_path / "tools"
    tools.mkdir()
    for name, script in (("python3", FAKE_PYTHON), ("npm", FAKE_NPM)):
        (tools / name).write_text(script)
        (tools / name).chmod(0o755)
    return tmp_path


def make(checkout: Path, *arguments: str, env: dict | None = None) -> subprocess.CompletedProcess:
    path = f"{checkout / 'tools'}:{os.environ['PATH']}"
    environment = {**os.environ, "PATH": path, "MAKEFLAGS": "", **(env or {})}
    return subprocess.run(
        ["make", "-C", str(checkout), "--no-print-directory", *arguments],
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_make_alone_lists_every_target_with_one_line(checkout):
    targets = re.findall(r"^([a-z][a-z0-9-]*):", (ROOT / "Makefile").read_text(), re.MULTILINE)

    listed = make(checkout)

    assert listed.returncode == 0, listed.stderr
    lines = dict(re.findall(r"^  make (\S+) +(\S.*)$", listed.stdout, re.MULTILINE))
    assert sorted(lines) == sorted(set(targets))  # a target without a `## ` line fails here
    assert "PORT=3300" in lines["run"] and "only port setting" in listed.stdout  # the one port setting
    assert not (checkout / ".venv").exists()  # and listing installs nothing


def test_the_first_make_token_prints_only_the_token_on_stdout(checkout):
    # Given a fresh clone: nothing installed
    # When OPS=$(make -s token) is the first command
    first = make(checkout, "-s", "token")

    # Then stdout holds the token command's output alone; the installers' chatter went to stderr
    assert first.returncode == 0, first.stderr
    assert first.stdout == "python -m local.tokens --role operator\n"
    assert "Collecting boto3" in first.stderr and "added 3 packages" in first.stderr
    assert (checkout / ".venv/.installed").exists() and (checkout / "node_modules/.installed").exists()
    assert "python -m infra.authorizer" in first.stderr  # the authorizer's wheels, for an offline synth


@pytest.mark.parametrize("options", [("ROLE=admin",), ("ROLE=member", "ORG=acme"), ("ROLE=admin", "USER=alice")])
def test_a_user_token_without_org_and_user_names_the_make_variables_and_installs_nothing(checkout, options):
    refused = make(checkout, "-s", "token", *options, env={"USER": "shell-user"})

    assert refused.returncode != 0
    assert "ORG=" in refused.stderr and "USER=" in refused.stderr
    assert "--org" not in refused.stderr
    assert refused.stdout == ""
    assert not (checkout / ".venv").exists()


def test_the_shells_own_user_is_not_taken_for_an_org_user(checkout):
    token = make(checkout, "-s", "token", "ROLE=admin", "ORG=acme", "USER=alice", env={"USER": "shell-user"})

    assert token.stdout == "python -m local.tokens --role admin --org acme --user alice\n"


def test_an_operator_role_asked_for_an_org_user_is_refused_not_given_as_theirs(checkout):
    # Given make token ORG=acme USER=alice ROLE=operator: an operator's token asked, naming a user
    refused = make(checkout, "-s", "token", "ROLE=operator", "ORG=acme", "USER=alice", env={"USER": "shell-user"})

    # Then no token (not alice's, with her role, in place of the operator's asked for), and why
    assert refused.returncode != 0
    assert "ROLE=operator" in refused.stderr
    assert refused.stdout == ""


def test_seed_takes_its_options_through_make(checkout):
    seeded = make(checkout, "-s", "seed", "ORG=acme", "USERS=2", "TICKETS=5")

    assert seeded.stdout.split() == ["python", "-m", "local.seed", "--org", "acme", "--users", "2", "--tickets", "5"]


def test_reset_wipes_the_local_data(checkout):
    data = checkout / ".local" / "dynamodb"
    data.mkdir(parents=True)
    (data / "shared-local-instance.db").write_bytes(b"tables")

    reset = make(checkout, "-s", "reset")

    assert reset.returncode == 0
    assert not (checkout / ".local").exists()


def test_reset_is_refused_while_make_run_serves_with_the_data_open(checkout):
    # Given make run serving from the checkout: its record names a live process that accepts connections
    (checkout / ".venv" / "bin").mkdir(parents=True)
    (checkout / ".venv" / "bin" / "python").symlink_to(sys.executable)
    (checkout / "local").symlink_to(ROOT / "local")
    record = checkout / ".local" / "api.json"
    record.parent.mkdir()
    with socket.create_server(("127.0.0.1", 0)) as listening:
        record.write_text(json.dumps({"url": f"http://127.0.0.1:{listening.getsockname()[1]}", "pid": os.getpid()}))

        # When make reset is run meanwhile, to start over
        reset = make(checkout, "-s", "reset", env={"LOCAL_API_FILE": str(record)})

    # Then it deletes nothing (the server would go on with the deleted data, and the tools, its record
    # gone, on to http://127.0.0.1:3000), and says to stop make run first
    assert reset.returncode != 0
    assert record.exists()
    assert "stop it first" in reset.stderr


def _tokens_command(*arguments: str, check: bool = True) -> subprocess.CompletedProcess:
    """``python -m local.tokens`` against the test's table (DynamoDB Local), as make run's."""
    return subprocess.run(
        [sys.executable, "-m", "local.tokens", *arguments], cwd=ROOT, capture_output=True, text=True, check=check
    )


@pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)  # another process reads it
def test_demo_tokens_are_ready_to_paste_for_the_seeded_orgs_three_roles(table):
    admin, member = demo_users()
    create_org(DEMO_ORG)
    create_user(DEMO_ORG, admin, role="admin")
    create_user(DEMO_ORG, member, role="member")

    printed = _tokens_command("--demo").stdout

    exports = dict(re.findall(r"^export (\w+)=(\S+)  # .+$", printed, re.MULTILINE))
    assert sorted(exports) == ["ADMIN", "API", "MEMBER", "OPS"]
    assert exports.pop("API").startswith("http://127.0.0.1:")  # make run's (tests/local_kit/test_one_port.py)
    claims = {name: tokens.decode(token) for name, token in exports.items()}
    admin, member = demo_users()
    assert claims["OPS"]["cognito:groups"] == ["operators"]
    assert (claims["ADMIN"]["custom:org_id"], claims["ADMIN"]["custom:user_id"]) == (DEMO_ORG, admin)
    assert (claims["ADMIN"]["custom:role"], claims["MEMBER"]["custom:role"]) == ("admin", "member")
    assert (claims["MEMBER"]["custom:org_id"], claims["MEMBER"]["custom:user_id"]) == (DEMO_ORG, member)
    assert claims["ADMIN"]["sub"] != claims["MEMBER"]["sub"]  # each their own sign-in's subject


@pytest.mark.parametrize("half", [("--user", "bob"), ("--org", "acme")])
def test_a_token_for_half_a_user_is_refused_not_an_operators(half):
    # When make token is given USER without ORG, or ORG without USER (make token USER=bob)
    refused = _tokens_command("--role", "operator", *half, check=False)

    # Then it prints no token (not an operator's, which would act with every right) and names both
    assert refused.returncode == 2 and refused.stdout == ""
    assert "ORG=acme USER=alice" in refused.stderr


@pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)
def test_a_token_for_a_user_who_does_not_exist_is_refused_with_the_reason(table):
    refused = _tokens_command("--org", "acme", "--user", "nobody", check=False)

    assert refused.returncode == 1 and refused.stdout == ""
    assert "No user nobody in organization acme" in refused.stderr


@pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)
def test_a_token_asked_with_another_role_than_the_users_is_refused_not_given_with_theirs(table):
    # Given alice, an admin of acme
    create_org("acme")
    create_user("acme", "alice", role="admin")

    # When a member's token is asked for her (make token ORG=acme USER=alice ROLE=member)
    refused = _tokens_command("--role", "member", "--org", "acme", "--user", "alice", check=False)

    # Then no token: an admin's, printed for a member's, would act with rights the asker did not mean
    assert refused.returncode == 1 and refused.stdout == ""
    assert "alice of acme has the role admin, not member" in refused.stderr
    asked_as_is = _tokens_command("--role", "admin", "--org", "acme", "--user", "alice")
    assert tokens.decode(asked_as_is.stdout.strip())["custom:role"] == "admin"


INFRA_TESTS = "tests/infra/test_infra_table.py"


def test_the_test_suite_prints_no_node_end_of_life_banner():
    # Given an environment without jsii's silencer, as a shell running pytest has
    environment = {name: value for name, value in os.environ.items() if not name.startswith("JSII_")}

    # When the infrastructure tests are collected (they import aws_cdk, which starts jsii's Node runtime)
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "--capture=no", "-p", "no:cacheprovider", INFRA_TESTS],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )

    # Then no banner
    assert "end-of-life" not in collected.stdout + collected.stderr


@pytest.mark.parametrize("command", ["backfill", "cleanup"])
def test_tenant_keys_commands_name_the_stages_stack_and_pass_the_pace(checkout, command):
    ran = make(checkout, f"tenant-keys-{command}", "STAGE=prod", "WRITES_PER_SECOND=3")

    assert ran.returncode == 0, ran.stderr
    assert f"python -m ops.tenant_keys {command} --stack ControlPlane-prod --writes-per-second 3" in ran.stdout
