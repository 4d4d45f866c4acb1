"""``cpctl users import FILE.csv``: how a CSV file becomes the rows sent. Files from spreadsheets
carry a BOM, CRLF line ends, quoted commas, blank and comma-only lines, headers in another case or
with spaces after the commas; none of that is the user's data."""

import json
from pathlib import Path

import pytest
import typer

from cpctl.commands.imports import read_rows


def _csv(tmp_path: Path, text: str) -> Path:
    file = tmp_path / "people.csv"
    file.write_bytes(text.encode("utf-8"))
    return file


def test_a_spreadsheets_csv_gives_the_rows_as_typed(tmp_path):
    text = (
        "\ufeffUser_ID, Name ,EMAIL,Role\r\n"
        'alice,"Smith, Alice",alice@example.com,admin\r\n'
        "\r\n"
        ",,,\r\n"
        "bob , Bob,bob@example.com,\r\n"
        " , ,,\r\n"
    )

    rows = read_rows(_csv(tmp_path, text))

    assert rows == [
        {"user_id": "alice", "name": "Smith, Alice", "email": "alice@example.com", "role": "admin"},
        {"user_id": "bob", "name": "Bob", "email": "bob@example.com"},
    ]


def test_a_row_with_more_cells_than_the_header_is_refused_before_any_request_naming_its_line(tmp_path, capsys):
    # An unquoted comma shifts the cells: the last one would be dropped without a word
    text = "user_id,name,email,role\nalice,Alice,alice@example.com,admin\nbob,Bob,bob@example.com,admin,member\n"

    with pytest.raises(typer.Exit) as exited:
        read_rows(_csv(tmp_path, text))

    assert exited.value.exit_code == 2
    assert "line 3" in capsys.readouterr().err


def test_a_csv_without_a_user_id_column_is_refused_before_any_request(tmp_path, capsys):
    with pytest.raises(typer.Exit) as exited:
        read_rows(_csv(tmp_path, "id,name,email\nalice,Alice,alice@example.com\n"))

    assert exited.value.exit_code == 2
    assert "user_id" in capsys.readouterr().err


def test_a_cell_under_a_header_cell_with_no_name_is_refused_not_dropped(tmp_path, capsys):
    # A header saved with a trailing comma (a spreadsheet pads every line to its widest) names no
    # fourth column: a line shifted into it by an unquoted comma would import "Smith" as the name
    text = "user_id,email,name,\nalice,alice@example.com,Alice,\nbob,bob@example.com,Smith, Bob\n"

    with pytest.raises(typer.Exit) as exited:
        read_rows(_csv(tmp_path, text))

    assert exited.value.exit_code == 2
    assert "line 3" in capsys.readouterr().err


def test_a_unit_column_places_each_user_and_an_empty_unit_leaves_them_in_the_root(tmp_path):
    # docs/CLI.md gives the header as user_id,name,email[,role][,unit]: a row's unit is sent as a
    # single create's, and an empty cell is left out, so the API puts that user in the root
    text = "user_id,name,email,role,unit\nalice,Alice,alice@example.com,,platform\nbob,Bob,bob@example.com,admin,\n"

    rows = read_rows(_csv(tmp_path, text))

    assert rows == [
        {"user_id": "alice", "name": "Alice", "email": "alice@example.com", "unit": "platform"},
        {"user_id": "bob", "name": "Bob", "email": "bob@example.com", "role": "admin"},
    ]


def test_a_json_file_may_hold_the_apis_own_body(tmp_path):
    # docs/CLI.md: a .json list of users, or the body POST /orgs/{org_id}/user-imports takes
    row = {"user_id": "alice", "name": "Alice", "email": "alice@example.com"}
    listed, body = tmp_path / "listed.json", tmp_path / "body.json"
    listed.write_text(f"[{json.dumps(row)}]")
    body.write_text(json.dumps({"rows": [row]}))

    assert read_rows(listed) == read_rows(body) == [row]
