"""Read the test table's stream and run it through the events function, as Lambda would."""

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from controlplane import config
from controlplane.dal.schema import TABLE_SCHEMA
from controlplane.lifecycle import publisher
from controlplane.lifecycle.contract import SOURCE
from local.apigw import LambdaContext
from local.stream import Feeder, StreamReader

BUS = "controlplane-test"
# EventBridge refuses a PutEvents call whose entries add up to 256 KB or more, each entry counted as
# its Time (14 bytes) and the UTF-8 bytes of its Source, DetailType and Detail.
PUT_EVENTS_MAX_BYTES = 256 * 1024


def entry_size(entry: dict) -> int:
    return 14 + sum(len(entry[name].encode()) for name in ("Source", "DetailType", "Detail"))


@dataclass
class RecordingBus:
    """A stand-in for EventBridge's PutEvents: keeps what it accepted; ``refuse`` decides per entry."""

    refuse: object = None  # callable(entry, call number) -> error code or None
    calls: list[list[dict]] = field(default_factory=list)
    accepted: list[dict] = field(default_factory=list)

    def put_events(self, Entries):
        self.calls.append(Entries)
        if sum(entry_size(entry) for entry in Entries) >= PUT_EVENTS_MAX_BYTES:
            message = "Total size of the entries in the request is over the limit."
            raise ClientError({"Error": {"Code": "ValidationException", "Message": message}}, "PutEvents")
        results = []
        for entry in Entries:
            code = self.refuse(entry, len(self.calls)) if self.refuse else None
            if code:
                results.append({"ErrorCode": code, "ErrorMessage": "refused by the test"})
            else:
                self.accepted.append(entry)
                results.append({"EventId": str(len(self.accepted))})
        return {"FailedEntryCount": sum("ErrorCode" in r for r in results), "Entries": results}

    def events(self) -> list[tuple[str, dict]]:
        return [(entry["DetailType"], json.loads(entry["Detail"])) for entry in self.accepted]


def stream_on(table_name: str) -> dict:
    """The table's description, with its stream on from the next write: a test that reads the stream
    turns it on first (the tests' tables on DynamoDB Local have none, see tests/conftest.py; moto's
    have it from the start)."""
    description = config.dynamodb().describe_table(TableName=table_name)["Table"]
    if "LatestStreamArn" not in description:
        spec = TABLE_SCHEMA["StreamSpecification"]
        description = config.dynamodb().update_table(TableName=table_name, StreamSpecification=spec)["TableDescription"]
    return description


def stream_reader(table_name: str) -> StreamReader:
    """The table's stream, from the first write after this call on. Not at an account's own endpoint
    (botocore's default where it knows the account), which moto does not serve."""
    description = stream_on(table_name)
    streams = boto3.client(
        "dynamodbstreams",
        endpoint_url=os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"),
        config=Config(account_id_endpoint_mode="disabled"),
    )
    return StreamReader(streams, description["LatestStreamArn"])


def handler():
    publisher.bus_name.cache_clear()
    publisher._table.cache_clear()
    from events.handler import lambda_handler

    return lambda_handler


def feeder(**options) -> Feeder:
    return Feeder(handler(), LambdaContext("events"), **options)


def status_changes_to_the_deletions_queue(table_name: str, monkeypatch) -> Callable[[], None]:
    """On moto, the cloud's path from an org's status write to the deletions queue the settings name:
    the table's stream through the events function to EventBridge, whose rule (the stack's,
    infra/deletions.py, with the same detail-types) sends the status transitions to the queue. The
    stream is read from this call on; what it returns relays every record written since its last
    call, and fails the test if the events function fails one."""
    from controlplane.logic import signins

    monkeypatch.setenv("EVENT_BUS_NAME", BUS)
    eventbridge, sqs = boto3.client("events"), boto3.client("sqs")
    eventbridge.create_event_bus(Name=BUS)
    queue_url = config.settings().deletions_queue_url
    arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    pattern = {"source": [SOURCE], "detail-type": list(signins.events())}
    eventbridge.put_rule(Name="status-changes", EventBusName=BUS, EventPattern=json.dumps(pattern))
    eventbridge.put_targets(Rule="status-changes", EventBusName=BUS, Targets=[{"Id": "deletions", "Arn": arn}])
    reader = stream_reader(table_name)

    def dropped(records: list[dict]) -> None:
        raise AssertionError(f"the events function failed stream record {records[0]['eventID']}")

    relay = feeder(retry_attempts=0, on_drop=dropped)
    return lambda: relay.feed(reader.read())
