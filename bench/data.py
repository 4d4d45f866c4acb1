"""The data the benchmarks read: organizations and users through the API, tickets in bulk."""

import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from boto3.dynamodb.types import TypeSerializer

from bench.harness import TABLE_NAME, call
from controlplane import keys, tickets
from controlplane.models import TicketCreate

BATCH_SIZE = 25  # BatchWriteItem's limit
THREADS = 4
_BODY = TicketCreate(subject="Benchmark ticket", description="Loaded in bulk by the benchmarks.")
_serializer = TypeSerializer()


def ticket_item(org_id: str, user_id: str) -> dict:
    """A ticket exactly as ``tickets.create_ticket`` stores it."""
    return tickets.ticket_item(org_id, user_id, _BODY)


def create(path: str, body: dict) -> None:
    status, answer = call("POST", path, body=body)
    if status != 201 and (answer or {}).get("error", {}).get("code") != "already_exists":
        raise RuntimeError(f"POST {path} answered {status}: {answer}")


def seed(client, org_id: str, tickets: dict[str, int]) -> dict[str, list[str]]:
    """An organization with a user per key of ``tickets``, each with that many tickets; their ids."""
    create("/orgs", {"org_id": org_id, "name": org_id.title(), "plan": "enterprise"})  # seats for every user
    for user_id in tickets:
        create(f"/orgs/{org_id}/users", {"user_id": user_id, "name": user_id.title(), "email": f"{user_id}@bench.test"})
    return {user_id: load_tickets(client, org_id, user_id, count)[0] for user_id, count in tickets.items()}


def load_tickets(client, org_id: str, user_id: str, count: int, threads: int = THREADS) -> tuple[list[str], float]:
    """``count`` tickets for a user, written with BatchWriteItem; their ids and the seconds it took."""
    start = time.perf_counter()
    items = [ticket_item(org_id, user_id) for _ in range(count)]
    batches = [items[i : i + BATCH_SIZE] for i in range(0, len(items), BATCH_SIZE)]
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(partial(_write, client), batches))
    return [item["ticket_id"] for item in items], time.perf_counter() - start


def _write(client, items: list[dict]) -> None:
    requests = {TABLE_NAME: [{"PutRequest": {"Item": _serialize(item)}} for item in items]}
    while requests:
        requests = client.batch_write_item(RequestItems=requests)["UnprocessedItems"]


def _serialize(item: dict) -> dict:
    return {name: _serializer.serialize(value) for name, value in item.items()}


def check_ticket_shape(client, org_id: str, user_id: str) -> None:
    """Fail if a bulk-loaded ticket has other attributes than one the API created."""
    status, ticket = call("POST", f"/orgs/{org_id}/users/{user_id}/tickets", body={"subject": "Shape check"})
    if status != 201:
        raise RuntimeError(f"creating a ticket answered {status}: {ticket}")
    key = _serialize(keys.ticket_key(org_id, ticket["ticket_id"]))
    stored = client.get_item(TableName=TABLE_NAME, Key=key)["Item"]
    built = _serialize(ticket_item(org_id, user_id))
    if _types(stored) != _types(built):
        raise RuntimeError(f"bulk tickets differ from the API's: {_types(stored)} != {_types(built)}")


def _types(item: dict) -> dict[str, str]:
    return {name: next(iter(value)) for name, value in item.items()}
