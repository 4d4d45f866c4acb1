"""The user import's job, pass by pass (logic.import_job.run, as a queue delivery runs it, on both
backends; no user pool): a redelivery of a finished import, a pass out of time, an org deleted
under the job, writes that keep refusing its transaction, and another delivery's users met mid-pass."""

import math

import pytest

from controlplane.dal import imports, keys, seats, stamps
from controlplane.dal.table import api_table
from controlplane.logic import import_job, import_rows
from controlplane.logic import imports as logic_imports
from controlplane.models import plans
from controlplane.models.errors import ServiceUnavailable
from tests.api import call, create_org
from tests.handlers.test_org_units import create_unit


def _row(user_id: str, **fields) -> dict:
    return {"user_id": user_id, "name": user_id.title(), "email": f"{user_id}@example.com", **fields}


def _queued_import(monkeypatch, rows: list[dict]) -> str:
    """An import of ``rows`` whose job has not run yet (as one waiting in the queue): its id."""
    with monkeypatch.context() as patch:
        patch.setattr(logic_imports.import_job, "run", lambda *args: None)
        reply = call("POST", "/orgs/acme/user-imports", {"rows": rows})
    assert reply.status == 202, reply.body
    return reply.body["import_id"]


def _get(import_id: str) -> dict:
    """The import as it is (without a queue, a GET of a running import runs its job on: not here)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(logic_imports.import_job, "run", lambda *args: None)
        reply = call("GET", f"/orgs/acme/user-imports/{import_id}")
    assert reply.status == 200, reply.body
    return reply.body


def _users() -> list[str]:
    found, _ = api_table().query(keys.org_partition("acme"), prefix=keys.USER_PREFIX, limit=100, consistent=True)
    return [item["user_id"] for item in found]


def _usage() -> int:
    _, counter = seats.read(api_table(), "acme", consistent=True)
    assert counter is not None
    return int(counter[plans.USER_COUNT])


def test_a_finished_imports_job_delivered_again_reads_it_once_and_writes_nothing(table, monkeypatch, dynamodb_calls):
    # Given an import its job finished
    create_org("acme", plan="pro")
    import_id = _queued_import(monkeypatch, [_row("ann"), _row("bob")])
    assert import_job.run("acme", import_id) is None
    before = imports.load(api_table(), "acme", import_id)

    # When SQS delivers its message again
    dynamodb_calls.clear()
    assert import_job.run("acme", import_id) is None

    # Then that delivery read the import and stopped: nothing of it, nor of its users, was written again
    assert dynamodb_calls == ["Query"]
    assert imports.load(api_table(), "acme", import_id) == before
    assert (_users(), _usage()) == (["ann", "bob"], 2)


def test_a_pass_out_of_time_before_a_part_stops_there_and_the_next_pass_decides_it(table, monkeypatch):
    # Given an import in two parts (of 3 rows here)
    monkeypatch.setattr(imports, "PART_ROWS", 3)
    create_org("acme", plan="pro")
    import_id = _queued_import(monkeypatch, [_row(f"u{i}") for i in range(5)])

    # When a pass has time for the first part only
    budget = iter([math.inf])
    assert import_job.run("acme", import_id, time_left=lambda: next(budget, 0.0)) == 0

    # Then it stops before the second (to be queued again at once), which no user of it entered
    stopped = _get(import_id)
    assert (stopped["status"], stopped["created"], stopped["pending"]) == ("running", 3, 2)
    assert (_users(), _usage()) == (["u0", "u1", "u2"], 3)

    # And the next pass decides it, and the import ends with each row created once
    assert import_job.run("acme", import_id) is None
    done = _get(import_id)
    assert (done["status"], done["created"], done["pending"], done["refused"]) == ("done", 5, 0, [])
    assert (_users(), _usage()) == (["u0", "u1", "u2", "u3", "u4"], 5)


def test_an_import_its_orgs_delete_took_during_the_sign_ins_ends_the_job_without_an_error(table, monkeypatch):
    # Given an import whose users went in, and the org's delete that runs to its end while the job
    # makes their sign-ins (it takes the import with it)
    create_org("acme", plan="pro")
    import_id = _queued_import(monkeypatch, [_row("ann")])
    sign_in, deleted = import_job._sign_in, []

    def org_deleted_meanwhile(*args):
        done = sign_in(*args)
        deleted.append(call("DELETE", "/orgs/acme").status)
        return done

    monkeypatch.setattr(import_job, "_sign_in", org_deleted_meanwhile)

    # When the job goes on to end the import, then it is done: no error for the queue to retry
    assert import_job.run("acme", import_id) is None

    # And nothing of the org is left, the import neither
    assert deleted == [204]
    assert imports.load(api_table(), "acme", import_id) == (None, [])
    assert call("GET", "/orgs/acme").status == 404


def test_an_import_whose_every_row_names_a_missing_unit_refuses_them_and_takes_no_seat(
    table, monkeypatch, dynamodb_calls
):
    create_org("acme", plan="pro")
    import_id = _queued_import(monkeypatch, [_row("ann", unit="eng"), _row("bob", unit="ops")])

    dynamodb_calls.clear()
    assert import_job.run("acme", import_id) is None

    done = _get(import_id)
    assert [(r["user_id"], r["code"]) for r in done["refused"]] == [("ann", "not_found"), ("bob", "not_found")]
    assert (done["status"], done["created"], _users(), _usage()) == ("done", 0, [], 0)
    assert "TransactWriteItems" not in dynamodb_calls  # no seat is taken (nor its counter written) for no one


def test_a_row_naming_a_unit_whose_delete_is_under_way_waits_for_it_instead_of_being_refused(table, monkeypatch):
    # Given an import of ann into ops, whose delete has marked it (a delete that may yet be refused:
    # ops may have users by then)
    import time

    from controlplane.dal import tree

    create_org("acme", plan="pro")
    assert create_unit("ops").status == 201
    import_id = _queued_import(monkeypatch, [_row("ann", unit="ops")])
    tree.mark_deleting(api_table(), keys.unit_key("acme", "ops"), "d-1", time.time(), None)

    # When the job runs while the delete is under way, then once it was refused (its mark taken back)
    with pytest.raises(ServiceUnavailable, match=r"ops .*retry shortly"):
        import_job.run("acme", import_id)
    tree.unmark_deleting(api_table(), keys.unit_key("acme", "ops"), "d-1")
    assert import_job.run("acme", import_id) is None

    # Then ann was not refused as not_found for a unit that exists: the queue ran the job again, and she is in ops
    done = _get(import_id)
    assert (done["status"], done["created"], done["refused"]) == ("done", 1, [])
    assert call("GET", "/orgs/acme/units/ops/users").body["items"][0]["user_id"] == "ann"


def _counted_before(org_id: str) -> None:
    """An org as the code before the seat counter's move wrote it: the count on the org item."""
    attributes = {"org_id": org_id, "name": "Acme", "plan": "pro", "status": "active", plans.USER_COUNT: 1}
    api_table().put(stamps.new_item(keys.org_keys(org_id), keys.ORG, attributes | {plans.USER_LIMIT: 50}, "operator"))


def test_an_import_into_an_org_whose_counter_was_not_moved_yet_moves_it_and_counts_each_row_once(table, monkeypatch):
    # Given an org of one user whose count is still on its item (ops.migrate_seats has not run)
    _counted_before("acme")
    import_id = _queued_import(monkeypatch, [_row("ann"), _row("bob")])

    # When the import's job runs
    assert import_job.run("acme", import_id) is None

    # Then the counter is on its own item, with the user before and the two rows
    org, counter = seats.read(api_table(), "acme", consistent=True)
    assert org is not None and plans.USER_COUNT not in org
    assert counter is not None and (counter[plans.USER_COUNT], counter[plans.USER_LIMIT]) == (3, 50)
    assert (_get(import_id)["created"], _users()) == (2, ["ann", "bob"])


def test_an_import_into_an_org_never_counted_stops_for_the_queue_and_takes_no_seat_uncounted(table, monkeypatch):
    # Given an org written before seats were counted at all: no count on its item, no counter
    create_org("acme", plan="pro")
    import_id = _queued_import(monkeypatch, [_row("ann")])
    api_table().delete(keys.seats_key("acme"))

    # When the import's job runs, it refuses to guess the count: the queue delivers it again later
    with pytest.raises(ServiceUnavailable, match="seats are being counted"):
        import_job.run("acme", import_id)

    # Then no one went in, and the row is still to do
    assert (_users(), _get(import_id)["pending"]) == ([], 1)


def test_an_import_whose_unit_keeps_changing_stops_after_ten_reads_and_the_next_delivery_places_its_users(
    table, monkeypatch
):
    # Given an import into eng, whose path the job reads stale before each of its transactions (a
    # unit that keeps moving), a dozen times
    create_org("acme", plan="pro")
    assert create_unit("eng").status == 201
    import_id = _queued_import(monkeypatch, [_row("ann", unit="eng")])
    read, reads = import_rows.unit_paths, []

    def stale(*args):
        reads.append(1)
        paths = read(*args)
        return {**paths, "eng": "/elsewhere/eng/"} if len(reads) <= 12 and "eng" in paths else paths

    monkeypatch.setattr(import_rows, "unit_paths", stale)

    # When the job runs, it gives up for the queue to try later, and put no one
    with pytest.raises(ServiceUnavailable, match="units kept changing"):
        import_job.run("acme", import_id)
    assert len(reads) == import_job._REREADS
    assert (_users(), _usage(), _get(import_id)["pending"]) == ([], 0, 1)

    # And the next delivery, with the unit still, places the user
    monkeypatch.setattr(import_rows, "unit_paths", read)
    assert import_job.run("acme", import_id) is None
    assert (_users(), _usage(), _get(import_id)["created"]) == (["ann"], 1, 1)


def test_an_import_whose_orgs_plan_keeps_changing_stops_after_ten_reads_and_takes_no_seat(table, monkeypatch):
    # Given an import, and the org's plan that changes before each of the job's transactions, a dozen times
    create_org("acme", plan="pro")
    import_id = _queued_import(monkeypatch, [_row("ann")])
    take, changes = seats.take, []

    def plan_changes_first(*args, **options):
        if len(changes) < 12:
            plan = ("enterprise", "pro")[len(changes) % 2]
            changes.append(call("PATCH", "/orgs/acme", {"plan": plan}).status)
        return take(*args, **options)

    monkeypatch.setattr(seats, "take", plan_changes_first)

    # When the job runs, it gives up for the queue to try later: no seat taken on a limit out of date
    with pytest.raises(ServiceUnavailable, match="seats kept changing"):
        import_job.run("acme", import_id)
    assert changes == [200] * import_job._REREADS
    assert (_users(), _usage(), _get(import_id)["pending"]) == ([], 0, 1)


def test_users_another_delivery_put_between_this_ones_read_and_its_transaction_are_counted_created_once(
    table, monkeypatch
):
    # Given an import of two, and a second delivery of its job that puts both, after this delivery
    # read them missing and before its transaction, and then dies (its Lambda timed out)
    create_org("acme", plan="pro")
    import_id = _queued_import(monkeypatch, [_row("ann"), _row("bob")])
    take, takes = seats.take, []

    def second_delivery_first(*args, **options):
        takes.append(1)
        if len(takes) == 1:  # this delivery's: the second runs now
            with pytest.raises(TimeoutError):
                import_job.run("acme", import_id)
        elif len(takes) == 2:  # the second's: it puts them and dies
            take(*args, **options)
            raise TimeoutError("the function timed out")
        return take(*args, **options)

    monkeypatch.setattr(seats, "take", second_delivery_first)

    # When this delivery's transaction meets them
    assert import_job.run("acme", import_id) is None

    # Then they are this import's creations, each counted once, none left unreported
    done = _get(import_id)
    assert (done["status"], done["created"], done["pending"], done["refused"]) == ("done", 2, 0, [])
    assert (_users(), _usage()) == (["ann", "bob"], 2)


def test_a_delivery_that_read_its_rows_missing_before_another_put_them_into_the_last_seats_counts_them_created(
    table, monkeypatch
):
    # Given a free org (5 seats) and an import of 5 whose job SQS delivers twice at once: the second
    # delivery reads the rows missing, then the first puts all 5 (the org is full), then the second
    # reads the counter and decides the part before the first writes its decision
    create_org("acme")
    import_id = _queued_import(monkeypatch, [_row(f"u{i}") for i in range(5)])
    read, take, steps = seats.read, seats.take, []

    def first_puts_as_the_second_reads_the_counter(*args, **options):
        if not steps:
            steps.append("first put")
            take(*first_put[0], **first_put[1])
        return read(*args, **options)

    def second_delivery_within_the_first(*args, **options):
        if first_put:
            return take(*args, **options)
        first_put.extend((args, options))
        with monkeypatch.context() as patch:
            patch.setattr(seats, "read", first_puts_as_the_second_reads_the_counter)
            import_job.run("acme", import_id)

    first_put: list = []
    monkeypatch.setattr(seats, "take", second_delivery_within_the_first)

    # When the first delivery goes on (its decision is superseded)
    assert import_job.run("acme", import_id) is None

    # Then the import reports the 5 users it put as created, not refused for seats it held itself
    done = _get(import_id)
    assert (done["status"], done["created"], done["refused"]) == ("done", 5, [])
    assert (_users(), _usage()) == ([f"u{i}" for i in range(5)], 5)
