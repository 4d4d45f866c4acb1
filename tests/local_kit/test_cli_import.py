"""``cpctl users import FILE``: a CSV or JSON file of users through the local gateway on DynamoDB
Local, the job run to its end, a summary and every refused row printed."""

import json

import pytest
from typer.testing import CliRunner

from cpctl.cli import app
from cpctl.commands import imports
from local import tokens

pytestmark = pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)

CSV = """user_id,name,email,role
alice,Alice,alice@example.com,admin
bob,Bob,bob@example.com,
Bad Id,Someone,someone@example.com,
bob,Bob Again,bob2@example.com,
carol,Carol,carol@example.com,member
"""


@pytest.fixture
def cpctl(table, gateway, tmp_path, monkeypatch):
    monkeypatch.setenv("CPCTL_CONFIG_DIR", str(tmp_path / "cpctl"))
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    monkeypatch.setattr(imports, "POLL_SECONDS", 0.01)
    runner = CliRunner()
    return lambda *args: runner.invoke(app, ["--url", gateway, "--token", tokens.issue(tokens.OPERATOR), *args])


def test_a_csv_import_prints_the_summary_and_every_refused_row_and_exits_1(cpctl, tmp_path):
    cpctl("orgs", "create", "acme", "--name", "Acme", "--plan", "free")
    file = tmp_path / "people.csv"
    file.write_text(CSV)

    shown = cpctl("users", "import", "acme", str(file))

    assert shown.exit_code == 1, shown.output
    assert "3 of 5 users created, 2 rows refused" in shown.stdout
    assert "validation_error" in shown.stdout and "duplicate" in shown.stdout
    assert "admin" in cpctl("users", "get", "acme", "alice").stdout
    assert "3 of 5" in cpctl("orgs", "get", "acme").stdout


def test_a_refused_row_is_printed_as_the_file_has_it_not_read_as_markup(cpctl, tmp_path):
    cpctl("orgs", "create", "acme", "--name", "Acme", "--plan", "free")
    file = tmp_path / "people.csv"
    file.write_text("user_id,name,email\n[red]x,Someone,someone@example.com\n")

    shown = cpctl("users", "import", "acme", str(file))

    assert shown.exit_code == 1, shown.output
    assert "[red]x" in shown.stdout


def test_a_json_import_within_the_seats_exits_0_and_in_json_output_is_the_import(cpctl, tmp_path):
    cpctl("orgs", "create", "acme", "--name", "Acme", "--plan", "free")
    file = tmp_path / "people.json"
    file.write_text(json.dumps([{"user_id": f"u{i}", "name": "U", "email": f"u{i}@example.com"} for i in range(5)]))

    shown = cpctl("-o", "json", "users", "import", "acme", str(file))

    assert shown.exit_code == 0, shown.output
    done = json.loads(shown.stdout)
    assert (done["status"], done["created"], done["refused"]) == ("done", 5, [])


def test_a_json_import_with_refused_rows_exits_1_and_still_prints_the_import(cpctl, tmp_path):
    cpctl("orgs", "create", "acme", "--name", "Acme", "--plan", "free")
    file = tmp_path / "people.json"
    file.write_text(json.dumps([{"user_id": f"u{i}", "name": "U", "email": f"u{i}@example.com"} for i in range(7)]))

    shown = cpctl("-o", "json", "users", "import", "acme", str(file))

    assert shown.exit_code == 1, shown.output
    done = json.loads(shown.stdout)
    assert (done["status"], done["created"]) == ("done", 5)
    assert [row["code"] for row in done["refused"]] == ["quota_exceeded", "quota_exceeded"]


def test_a_file_that_is_neither_csv_nor_json_is_refused_before_any_request(cpctl, tmp_path):
    file = tmp_path / "people.txt"
    file.write_text("alice")

    shown = cpctl("users", "import", "acme", str(file))

    assert shown.exit_code != 0
    assert "not a .csv or .json file" in shown.output


@pytest.mark.parametrize(
    "name, content, says",
    [
        ("people.json", b"", "the file is empty"),
        ("people.csv", b"\r\n", "the file is empty"),
        ("people.json", b'[{"user_id": "alice",', "not JSON: Expecting"),
        ("people.csv", "user_id,name,email\nfred,Fr\u00e9d,fred@example.com\n".encode("latin-1"), "not UTF-8"),
    ],
)
def test_a_file_cpctl_cannot_read_is_a_usage_error_naming_it_not_a_traceback(cpctl, tmp_path, name, content, says):
    file = tmp_path / name
    file.write_bytes(content)

    shown = cpctl("users", "import", "acme", str(file))

    assert shown.exit_code == 2, shown.output
    assert f"Usage error: {file}: {says}" in shown.stderr
    assert shown.exception is None or isinstance(shown.exception, SystemExit), shown.exception


@pytest.mark.parametrize(
    "name, content",
    [
        ("people.json", b'\xef\xbb\xbf[{"user_id": "alice", "name": "Alice", "email": "alice@example.com"}]'),
        ("people.csv", b"\xef\xbb\xbfuser_id,name,email\r\nalice,Alice,alice@example.com\r\n\r\n"),
    ],
)
def test_a_file_saved_with_a_byte_order_mark_and_crlf_lines_imports(cpctl, tmp_path, name, content):
    cpctl("orgs", "create", "acme", "--name", "Acme", "--plan", "free")
    file = tmp_path / name
    file.write_bytes(content)

    shown = cpctl("users", "import", "acme", str(file))

    assert shown.exit_code == 0, shown.output
    assert "1 of 1 users created" in shown.stdout
    assert "alice@example.com" in cpctl("users", "get", "acme", "alice").stdout
