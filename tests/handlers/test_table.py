"""The data layer's batch writes (the cascade deletes): everything is written, what DynamoDB leaves
unprocessed is sent again, and a table that never takes it is a 503's error, not a silent loss."""

import pytest

from controlplane import config
from controlplane.dal import batches
from controlplane.dal.table import Table, api_table
from controlplane.models.errors import ServiceUnavailable


def _stored(count: int) -> list[dict]:
    return [{"PK": f"BULK#{i}", "SK": "BULK", "entity": "bulk", "n": i} for i in range(count)]


def _store(table: Table, count: int) -> None:
    for item in _stored(count):
        table.put(item)


def _count(table: Table) -> int:
    return sum(1 for i in range(60) if table.get({"PK": f"BULK#{i}", "SK": "BULK"}))


def test_delete_all_deletes_every_item_in_batches_of_25(table, dynamodb_calls):
    bulk = api_table()
    _store(bulk, 60)
    dynamodb_calls.clear()

    batches.delete_all(bulk, _stored(60))

    assert dynamodb_calls == ["BatchWriteItem"] * 3
    assert _count(bulk) == 0


def test_delete_all_sends_again_what_dynamodb_left_unprocessed(table, monkeypatch):
    _store(api_table(), 25)
    client = config.dynamodb()
    real = client.batch_write_item
    left = []

    def leave_half_unprocessed(RequestItems):
        ((name, requests),) = RequestItems.items()
        if len(left) < 2:  # the first two answers leave half of the batch for later
            left.append(len(requests) // 2)
            real(RequestItems={name: requests[left[-1] :]})
            return {"UnprocessedItems": {name: requests[: left[-1]]}}
        return real(RequestItems=RequestItems)

    monkeypatch.setattr(client, "batch_write_item", leave_half_unprocessed)

    batches.delete_all(api_table(), _stored(25))

    assert left == [12, 6]
    assert _count(api_table()) == 0


@pytest.mark.parametrize("table", ["moto"], indirect=True)
def test_delete_all_gives_up_after_bounded_retries_with_backoff(table, monkeypatch):
    _store(api_table(), 3)
    client = config.dynamodb()
    sent, slept = [], []

    def never_processed(RequestItems):
        sent.append(1)
        return {"UnprocessedItems": RequestItems}

    monkeypatch.setattr(client, "batch_write_item", never_processed)
    monkeypatch.setattr("controlplane.dal.batches.time.sleep", slept.append)

    with pytest.raises(ServiceUnavailable):
        batches.delete_all(api_table(), _stored(3))

    assert len(sent) == 8
    assert slept == sorted(slept) and slept[0] < slept[-1] <= 2
    assert _count(api_table()) == 3
