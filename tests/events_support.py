"""Read the test table's stream and run it through the events function, as Lambda would."""

import json
import os
from dataclasses import dataclass, field

import boto3
from botocore.exceptions import ClientError

from controlplane import config
from controlplane.dal.schema import TABLE_SCHEMA
from controlplane.lifecycle import publisher
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
    """The table's stream, from the first write after this call on."""
    description = stream_on(table_name)
    streams = boto3.client("dynamodbstreams", endpoint_url=os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"))
    return StreamReader(streams, description["LatestStreamArn"])


def handler():
    publisher.bus_name.cache_clear()
    publisher._table.cache_clear()
    from events.handler import lambda_handler

    return lambda_handler


def feeder(**options) -> Feeder:
    return Feeder(handler(), LambdaContext("events"), **options)
