"""cpctl as the writer of a shell pipe whose reader stops early (``cpctl ... | head -1``): a real
``python -m cpctl`` process against the local gateway on DynamoDB Local, writing into a pipe of
4 KiB that the test closes after a line (or none), so that cpctl surely writes again after the
reader went."""

import fcntl
import os
import subprocess
import sys

import pytest

from local import ROOT, tokens
from tests.api import create_org, create_ticket, create_user

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)
PIPE_BYTES = 4096  # the least a Linux pipe holds: cpctl fills it and blocks long before it is done


@pytest.fixture
def tickets(table):
    """An org with a user and 40 tickets whose subjects are longer than a line: pages of output."""
    assert create_org("acme").status == 201
    assert create_user("acme", "bob").status == 201
    for i in range(40):
        subject = f"Ticket {i}: the export to CSV times out whenever the report covers a whole year"
        assert create_ticket("acme", "bob", subject=subject).status == 201


def read_then_close(gateway: str, tmp_path, lines: int, *args: str, both: bool = False) -> tuple[int, int, bytes]:
    """Run ``cpctl --url <gateway> ARGS`` into a pipe (``both``: its stderr too, as ``2>&1``), read
    ``lines`` lines of it, close the pipe (as ``head -1`` does, or ``true`` with 0), and return the
    bytes read, cpctl's exit code and its stderr."""
    environment = {name: value for name, value in os.environ.items() if not name.startswith("CONTROLPLANE_")}
    environment["CPCTL_CONFIG_DIR"] = str(tmp_path / "cpctl")
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    command = [sys.executable, "-m", "cpctl", "--url", gateway, "--token", tokens.issue(tokens.OPERATOR), *args]
    stderr = write_end if both else subprocess.PIPE
    with subprocess.Popen(command, cwd=ROOT, env=environment, stdout=write_end, stderr=stderr) as cpctl:
        os.close(write_end)
        read = b""
        while read.count(b"\n") < lines:
            byte = os.read(read_end, 1)
            assert byte, "cpctl wrote fewer lines"
            read += byte
        os.close(read_end)  # the reader is gone; cpctl has more to write than the pipe holds
        said = cpctl.stderr.read() if cpctl.stderr else b""
        return len(read), cpctl.wait(timeout=60), said


JSON_PAGES = ("-o", "json", "tickets", "list", "acme", "bob", "--all", "--limit", "5")  # a page a line
TABLE = ("tickets", "list", "acme", "bob", "--limit", "100")  # one table, four times the pipe


@pytest.mark.parametrize(
    "lines, args",
    [(1, JSON_PAGES), (1, TABLE), (0, TABLE)],
    ids=["head -1 of json pages", "head -1 of a table", "true after a table"],
)
def test_a_reader_that_stops_early_ends_cpctl_quietly_with_exit_0(table, gateway, tmp_path, tickets, lines, args):
    # When cpctl's reader takes a line (or none) and closes the pipe
    read, exit_code, stderr = read_then_close(gateway, tmp_path, lines, *args)

    # Then cpctl stops writing and exits quietly: no traceback, no message, and 0, as when the
    # reader read it all (the reader chose to stop; nothing failed, so `set -o pipefail` passes)
    assert read or not lines
    assert stderr.decode() == ""
    assert exit_code == 0


def test_a_failure_whose_reader_is_gone_still_exits_1(table, gateway, tmp_path):
    # When a command fails (404) while its stdout and stderr go to a reader that is already gone
    _, exit_code, _ = read_then_close(gateway, tmp_path, 0, "orgs", "get", "nowhere", both=True)

    # Then its exit code is the failure's, not the 0 of a reader that stopped reading data
    assert exit_code == 1


def test_an_import_whose_reader_is_gone_still_exits_1_for_its_refused_rows(table, gateway, tmp_path):
    # Given an org, and a file with a row the import refuses
    assert create_org("acme").status == 201
    file = tmp_path / "people.csv"
    file.write_text("user_id,name,email\nalice,Alice,alice@example.com\nBad Id,Someone,someone@example.com\n")

    # When the import's summary goes to a reader that is already gone (`| true`)
    _, exit_code, _ = read_then_close(gateway, tmp_path, 0, "users", "import", "acme", str(file))

    # Then the exit code is still the import's (a row refused: 1), not the 0 of a reader that stopped
    # reading: `set -o pipefail` must not take a partial import as whole
    assert exit_code == 1
