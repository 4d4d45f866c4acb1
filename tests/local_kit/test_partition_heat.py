"""The partition heat of `make bench` (bench.heat) on DynamoDB Local: a small mix over two orgs, every
write read back from the table's stream, the events function's activity log included."""

import pytest

from bench import heat
from controlplane.dal import keys
from tests.events_support import stream_on

ORGS = 2
# What tenant() sends per org: users, tickets, solved tickets, renamed users, deleted tickets, a deleted user.
PER_ORG = heat.USERS * (1 + heat.TICKETS_PER_USER) + heat.SOLVED_USERS * heat.TICKETS_PER_USER
PER_ORG += heat.RENAMED_USERS + heat.DELETED_TICKETS + 1


@pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)
def test_every_request_of_the_mix_is_read_back_as_write_units_on_its_orgs_partitions(table):
    stream_on(table)
    measured = heat.measure(ORGS, prefix="smoke")

    assert measured.requests == ORGS * PER_ORG
    for org_id in measured.orgs:
        own = sum(
            units for (_, partition), units in measured.units.items() if heat.owner(partition, measured.orgs) == org_id
        )
        # At least a table write for each user and ticket created, updated or deleted.
        assert own >= PER_ORG, (org_id, own)
    # Each user and ticket created came back from the stream, and so did the activity entries the
    # events function wrote for them.
    assert measured.entities[keys.USER] >= ORGS * heat.USERS
    assert measured.entities[keys.TICKET] >= ORGS * heat.USERS * heat.TICKETS_PER_USER
    assert measured.entities[keys.ACTIVITY] >= ORGS * heat.USERS * (1 + heat.TICKETS_PER_USER)
    assert 0 < measured.share() < 1
    assert measured.ceiling > 0


@pytest.mark.parametrize("table", ["dynamodb_local"], indirect=True)
def test_the_report_names_the_hottest_partitions_and_judges_the_goals(table):
    stream_on(table)
    heats = {count: heat.measure(count, prefix=f"report{count}-") for count in (1, 2)}

    section = heat.report(heats)

    assert "Hottest shared" in section.body
    assert [goal for goal, _ in section.goals] == ["heat: the hottest partition's share falls as orgs are added"]
