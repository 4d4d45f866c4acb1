"""The data the benchmarks read: organizations and users through the API, tickets and activity in bulk."""

import time
from concurrent.futures import ThreadPoolExecutor

from boto3.dynamodb.types import TypeSerializer

from bench.harness import TABLE_NAME
from controlplane.dal import batches, keys
from controlplane.dal.table import Table
from controlplane.lifecycle import activity, contract
from controlplane.logic import tickets
from controlplane.models.resources import TicketCreate
from local.apigw import OPERATOR_CONTEXT, call

BATCH_SIZE = 25  # BatchWriteItem's limit: one request per thread's turn
THREADS = 4
_BODY = TicketCreate(subject="Benchmark ticket", description="Loaded in bulk by the benchmarks.")
_serializer = TypeSerializer()


def ticket_item(org_id: str, user_id: str) -> dict:
    """A ticket exactly as ``tickets.create_ticket`` stores it, opened by the benchmarks' operator."""
    return tickets.ticket_item(org_id, user_id, _BODY, OPERATOR_CONTEXT["sub"])


def create(path: str, body: dict) -> None:
    reply = call("POST", path, body)
    if reply.status != 201 and reply.error_code != "already_exists":
        raise RuntimeError(f"POST {path} answered {reply.status}: {reply.body}")


def seed(client, org_id: str, tickets: dict[str, int]) -> dict[str, list[str]]:
    """An organization with a user per key of ``tickets``, each with that many tickets; their ids."""
    create("/orgs", {"org_id": org_id, "name": org_id.title(), "plan": "enterprise"})  # seats for every user
    for user_id in tickets:
        create(f"/orgs/{org_id}/users", {"user_id": user_id, "name": user_id.title(), "email": f"{user_id}@bench.test"})
    return {user_id: load_tickets(client, org_id, user_id, count)[0] for user_id, count in tickets.items()}


def load_tickets(client, org_id: str, user_id: str, count: int, threads: int = THREADS) -> tuple[list[str], float]:
    """``count`` tickets for a user, written with ``batches.put_all``; their ids and the seconds it took."""
    start = time.perf_counter()
    items = [ticket_item(org_id, user_id) for _ in range(count)]
    chunks = [items[i : i + BATCH_SIZE] for i in range(0, len(items), BATCH_SIZE)]
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda batch: batches.put_all(Table(client, TABLE_NAME), batch), chunks))
    return [item["ticket_id"] for item in items], time.perf_counter() - start


def _serialize(item: dict) -> dict:
    return {name: _serializer.serialize(value) for name, value in item.items()}


def check_ticket_shape(client, org_id: str, user_id: str) -> None:
    """Fail if a bulk-loaded ticket has other attributes than one the API created."""
    reply = call("POST", f"/orgs/{org_id}/users/{user_id}/tickets", {"subject": "Shape check"})
    if reply.status != 201:
        raise RuntimeError(f"creating a ticket answered {reply.status}: {reply.body}")
    key = _serialize(keys.ticket_key(org_id, reply.body["ticket_id"]))
    stored = client.get_item(TableName=TABLE_NAME, Key=key)["Item"]
    built = _serialize(ticket_item(org_id, user_id))
    if _types(stored) != _types(built):
        raise RuntimeError(f"bulk tickets differ from the API's: {_types(stored)} != {_types(built)}")


def _types(item: dict) -> dict[str, str]:
    return {name: next(iter(value)) for name, value in item.items()}


def load_activity(client, org_id: str) -> int:
    """The activity entries the events function writes for the creation of each of the org's users, made
    by the same code from stream records shaped as Lambda delivers them; how many."""
    response = client.query(
        TableName=TABLE_NAME,
        KeyConditionExpression="PK = :pk AND begins_with(SK, :users)",
        ExpressionAttributeValues={":pk": {"S": keys.org_partition(org_id)}, ":users": {"S": keys.USER_PREFIX}},
    )
    entries = []
    for number, item in enumerate(response["Items"], start=1):
        record = {
            "eventID": f"bench-{number}",
            "dynamodb": {
                "ApproximateCreationDateTime": time.time(),
                "Keys": {"PK": item["PK"], "SK": item["SK"]},
                "NewImage": item,
                "SequenceNumber": str(number),
            },
        }
        events = contract.events_for(record, lambda _: False)
        entries += activity.entries(str(number), events, activity.DEFAULT_RETENTION_DAYS)
    batches.put_all(Table(client, TABLE_NAME), entries)
    return len(entries)
