"""The ops commands that take ``--table``, given a table that is not there: one line and exit 2, on
both backends (a mistyped TABLE, another region, or DynamoDB Local not pointed at)."""

import pytest

from ops import migrate_seats, migrate_user_counts, migrate_user_units, sign_in_subjects

MISSING = "no-such-table"
COMMANDS = {
    "migrate-seats": (migrate_seats.main, []),
    "migrate-user-counts": (migrate_user_counts.main, []),
    "migrate-user-units": (migrate_user_units.main, []),
    "sign-in-subjects": (sign_in_subjects.main, ["--user-pool-id", "eu-west-1_nothing"]),
}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_table_that_is_not_there_exits_2_naming_it_without_a_traceback(table, capsys, command):
    # Given a table name that finds no table
    main, more = COMMANDS[command]

    # When the command runs on it
    with pytest.raises(SystemExit) as exited:
        main(["--table", MISSING, *more])

    # Then it exits 2 with one line naming what it was given, not ResourceNotFoundException's traceback
    assert exited.value.code == 2
    assert f"--table {MISSING}" in capsys.readouterr().err
