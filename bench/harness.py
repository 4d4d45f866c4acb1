"""The benchmarks' world: the functions' environment on DynamoDB Local, API calls as API Gateway
makes them, and a recorder of what the functions send to DynamoDB."""

import copy
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import boto3
from botocore import xform_name

from controlplane import config
from local import ROOT, environment
from local.apigw import OPERATOR_CONTEXT, Reply, build_event
from local.apigw import call as apigw_call
from local.dynamodb_local import DynamoDBLocal, client, create_table
from local.stream import StreamReader

TABLE_NAME = "control-plane-bench"


@dataclass
class Section:
    """One measure of the report: its Markdown and the goals it checked."""

    title: str
    body: str
    goals: list[tuple[str, bool]] = field(default_factory=list)


@contextmanager
def dynamodb_local() -> Iterator[DynamoDBLocal]:
    """DynamoDB Local in memory with the table, and the functions' environment pointing at it."""
    # As deployed: LOG_LEVEL, and LAMBDA_TASK_ROOT as Lambda sets it: without it, importing the X-Ray
    # SDK (Powertools' Tracer does, even when disabled) builds a sampler with a botocore client of its
    # own, ~0.4 s that no function pays in Lambda.
    environment.isolate(TABLE_NAME=TABLE_NAME, LOG_LEVEL="INFO", LAMBDA_TASK_ROOT=str(ROOT / "functions"))
    with DynamoDBLocal() as server:
        os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = server.endpoint
        config.reset()
        create_table(client(server.endpoint), TABLE_NAME)
        yield server


def bare_client():
    """A plain boto3 client of its own, configured as the functions' one: the baseline."""
    return boto3.client("dynamodb", config=config.CLIENT_CONFIG)


def event(method: str, path: str, query: dict | None = None) -> dict:
    """The proxy event API Gateway passes on for an operator's request."""
    return build_event(method, path, query=query, authorizer=OPERATOR_CONTEXT)


def label(method: str, path: str, query: dict | None = None) -> str:
    """A route as the report names it: ``GET /orgs/{org_id}?include=users``."""
    suffix = "?" + "&".join(f"{name}={value}" for name, value in query.items()) if query else ""
    return f"`{method} {path}{suffix}`"


@dataclass
class Exchange:
    """One DynamoDB operation the functions made: what they asked and what came back."""

    operation: str
    params: dict
    response: dict | None = None


class Recorder:
    """Hooks on a client: every HTTP request it sends (retries included), every operation's
    parameters as the caller passed them, and its parsed response. With ``capacity``, each request
    also asks for ReturnConsumedCapacity=TOTAL."""

    def __init__(self, capacity: bool):
        self.capacity = capacity
        self.sent: list[str] = []
        self.exchanges: list[Exchange] = []

    def clear(self) -> None:
        self.sent.clear()
        self.exchanges.clear()

    def before_parameter_build(self, params: dict, model, **_) -> None:
        self.exchanges.append(Exchange(model.name, copy.deepcopy(params)))
        if self.capacity and "ReturnConsumedCapacity" in model.input_shape.members:
            params["ReturnConsumedCapacity"] = "TOTAL"

    def before_send(self, event_name: str, **_) -> None:
        self.sent.append(event_name.rsplit(".", 1)[-1])

    def after_call(self, parsed: dict, **_) -> None:
        self.exchanges[-1].response = parsed

    def the_one_request(self) -> tuple[str, dict]:
        """The method name and parameters of the single request made, to replay on a bare client."""
        if len(self.sent) != 1:
            raise AssertionError(f"expected one DynamoDB request, got {self.sent}")
        exchange = self.exchanges[0]
        return xform_name(exchange.operation), exchange.params


@contextmanager
def recording(client, capacity: bool = False) -> Iterator[Recorder]:
    recorder = Recorder(capacity)
    hooks = {
        "before-parameter-build.dynamodb": recorder.before_parameter_build,
        "before-send.dynamodb": recorder.before_send,
        "after-call.dynamodb": recorder.after_call,
    }
    for name, hook in hooks.items():
        client.meta.events.register(name, hook)
    try:
        yield recorder
    finally:
        for name, hook in hooks.items():
            client.meta.events.unregister(name, hook)


def replay(client, method: str, params: dict):
    """The bare call: the same request, straight through boto3."""
    return lambda: getattr(client, method)(**params)


def call(method: str, path: str, body: dict | None = None) -> Reply:
    """An operator's request through its function (``local.apigw.call``), then the metrics emptied:
    with POWERTOOLS_METRICS_DISABLED, Powertools' flush keeps what the handler added, and the 100th
    metric kept in one process fails the request that adds it. A benchmark making many creates needs
    this; in Lambda every flush empties them."""
    from controlplane.observability import metrics

    try:
        return apigw_call(method, path, body)
    finally:
        metrics.clear_metrics()


def stream_reader() -> StreamReader:
    arn = config.dynamodb().describe_table(TableName=config.settings().table_name)["Table"]["LatestStreamArn"]
    streams = boto3.client("dynamodbstreams", endpoint_url=os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"))
    return StreamReader(streams, arn, from_start=False)
