"""Read a table's stream the way Lambda's event source mapping does, for the local run and the tests.

DynamoDB Local (and moto) keep a real stream but run no triggers, so this polls it: DescribeStream
for the shards, GetShardIterator, GetRecords, and hands each batch to the events function's
``lambda_handler`` as the Lambda DynamoDB stream event. As Lambda does with
ReportBatchItemFailures, a batch item failure is retried from the first failed record, up to
``retry_attempts`` times; then its records are dropped with a log line (the cloud sends them to the
on-failure queue). Records the event source mapping's filter would not deliver
(``activity.FILTERS``: the activity log's own items, idempotency records...) are dropped first.
``publish_lifecycle_events`` is that loop for ``make run``.
"""

import os
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

from controlplane import config
from local import apigw
from local.sink import Sink

STREAM_POLL_SECONDS = 0.5


def lambda_record(record: dict, stream_arn: str) -> dict:
    """A GetRecords record as Lambda delivers it: ApproximateCreationDateTime in epoch seconds."""
    change = dict(record["dynamodb"])
    created = change.get("ApproximateCreationDateTime")
    if created is not None and not isinstance(created, int | float):
        change["ApproximateCreationDateTime"] = created.timestamp()
    return {**record, "dynamodb": change, "eventSourceARN": stream_arn}


@dataclass
class StreamReader:
    """New records of a table's stream; ``from_start`` reads what the stream already holds too."""

    streams: object  # a boto3 dynamodbstreams client
    stream_arn: str
    from_start: bool = True
    _iterators: dict[str, str | None] = field(default_factory=dict)

    def __post_init__(self):
        if not self.from_start:  # only changes made from now on: the shards that exist start at LATEST
            for shard in self._shards():
                self._iterators[shard] = self._iterator(shard, "LATEST")

    def _shards(self) -> list[str]:
        shards, start = [], None
        while True:
            args = {"StreamArn": self.stream_arn, **({"ExclusiveStartShardId": start} if start else {})}
            description = self.streams.describe_stream(**args)["StreamDescription"]
            shards += [shard["ShardId"] for shard in description["Shards"]]
            start = description.get("LastEvaluatedShardId")
            if not start:
                return shards

    def _iterator(self, shard: str, kind: str) -> str:
        return self.streams.get_shard_iterator(StreamArn=self.stream_arn, ShardId=shard, ShardIteratorType=kind)[
            "ShardIterator"
        ]

    def read(self) -> list[dict]:
        """Every record that arrived since the last read, shard by shard (new shards from their start)."""
        for shard in self._shards():
            if shard not in self._iterators:
                self._iterators[shard] = self._iterator(shard, "TRIM_HORIZON")
        found = []
        for shard, iterator in self._iterators.items():
            while iterator:
                response = self.streams.get_records(ShardIterator=iterator)
                found += [lambda_record(record, self.stream_arn) for record in response["Records"]]
                iterator = response.get("NextShardIterator")
                if not response["Records"]:
                    break
            self._iterators[shard] = iterator
        return found


def delivered(record: dict) -> bool:
    """Whether the event source mapping's filter criteria let ``record`` through. Imported here, not at
    the top: the tests import this module before they set the functions' environment."""
    from controlplane.lifecycle import activity

    return activity.accepts(record)


@dataclass
class Feeder:
    """Feeds records to a stream handler in batches, retrying from the first failure as Lambda does."""

    handler: Callable[[dict, object], dict]
    context: object
    batch_size: int = 100
    retry_attempts: int = 3
    on_drop: Callable[[list[dict]], None] = lambda records: None
    accept: Callable[[dict], bool] = delivered  # the event source mapping's filter criteria
    _pending: list[dict] = field(default_factory=list)
    _attempts: int = 0

    def feed(self, records: list[dict]) -> None:
        self._pending += [record for record in records if self.accept(record)]
        while self._pending:
            batch = self._pending[: self.batch_size]
            failures = self.handler({"Records": batch}, self.context).get("batchItemFailures") or []
            failed = {failure["itemIdentifier"] for failure in failures}
            first = next((i for i, r in enumerate(batch) if r["dynamodb"]["SequenceNumber"] in failed), None)
            if first is None:
                self._pending = self._pending[len(batch) :]
                self._attempts = 0
                continue
            self._pending = self._pending[first:]
            self._attempts += 1
            if self._attempts > self.retry_attempts:
                self.on_drop(self._pending[:1])
                self._pending = self._pending[1:]
                self._attempts = 0
                continue
            return  # the rest waits for the next feed, as Lambda retries later


def publish_lifecycle_events(
    stop: threading.Event,
    one_at_a_time: threading.Lock,
    log: Callable[[str], None],
    sink: Sink | None = None,
) -> None:
    """What Lambda's event source mapping does in the cloud: the table's stream into the events
    function, in process, until ``stop``; its bus is the local sink (``sink``, or .local/events.jsonl's
    with the gateway's authorizer as a listener). It takes the stream's position, then returns and
    reads from a thread: called before the gateway serves, every change made while it serves is
    published. ``one_at_a_time`` is the gateway's: the functions run one request at a time."""
    import boto3
    from botocore.exceptions import ClientError

    os.environ.setdefault("EVENT_BUS_NAME", "controlplane-local")  # the sink's name for the bus
    if sink is None:
        from local.authorizer import AUTHORIZER  # its cache drops on the events that change access

        sink = Sink(log=log, listeners=(AUTHORIZER.on_events,))
    config.use_bus(sink)
    table = config.dynamodb().describe_table(TableName=config.settings().table_name)["Table"]
    streams = boto3.client("dynamodbstreams", endpoint_url=os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"))
    try:
        reader = StreamReader(streams, table["LatestStreamArn"], from_start=False)
    except (KeyError, ClientError) as error:  # moto, the no-Java fallback, has no stream to read
        log(f"Lifecycle events are off: this DynamoDB has no readable stream ({error!r})")
        return
    threading.Thread(target=_poll, args=(reader, stop, one_at_a_time, log), daemon=True).start()


def _poll(reader: StreamReader, stop: threading.Event, one_at_a_time: threading.Lock, log: Callable[[str], None]):
    from events.handler import lambda_handler

    def drop(records: list[dict]) -> None:
        log(f"events: gave up on stream record {records[0]['eventID']} (in the cloud: the on-failure queue)")

    feeder = Feeder(lambda_handler, apigw.LambdaContext("events"), on_drop=drop)
    while not stop.wait(STREAM_POLL_SECONDS):
        try:
            records = reader.read()
            with one_at_a_time:
                feeder.feed(records)
        except Exception:  # keep publishing after a hiccup, as Lambda would retry
            traceback.print_exc()
