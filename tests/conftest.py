import uuid

import boto3
import botocore.loaders
import botocore.session
import pytest
from moto import mock_aws

from controlplane import config
from controlplane.dal.schema import TABLE_SCHEMA
from local import dynamodb_local, environment, server
from tests import contract

TABLE_NAME = "control-plane-test"

# Metrics on, unlike make run: the handlers' EMF output is built (and must not fail) in every test.
# jsii (under aws_cdk, imported by tests/infra) prints a Node end-of-life banner on Node 20, which the
# README supports; cdk.json's app command sets the same for every `cdk synth`.
# Rate limits off: a test must not pass or fail with the machine's speed; tests/local_kit/test_limits.py
# gives the gateway a limiter with its own clock.
environment.isolate(
    TABLE_NAME=TABLE_NAME,
    POWERTOOLS_METRICS_DISABLED="false",
    JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20",
    RATE_LIMITS="off",
)


@pytest.fixture(scope="session")
def dynamodb_local_server():
    """One in-memory DynamoDB Local for the whole run, started only if a test asks for it."""
    try:
        server = dynamodb_local.DynamoDBLocal().start()
    except dynamodb_local.JavaNotFound as error:
        pytest.fail(
            f"{error}\nThe handler tests also run on DynamoDB Local; to skip them: pytest -m 'not dynamodb_local'"
        )
    yield server
    server.stop()


BACKENDS = ("moto", "dynamodb_local")


def pytest_collection_modifyitems(items):
    """Mark each test with the backend its table runs on, so ``-m`` selects a layer; this also
    covers tests that pick one backend with ``parametrize("table", [...], indirect=True)``."""
    for item in items:
        backend = getattr(item, "callspec", None) and item.callspec.params.get("table")
        if backend in BACKENDS:
            item.add_marker(backend)


# moto gives each mock a new boto3 session, which reads botocore's JSON models again: ~150 ms a
# test, more than most tests take. The models never change, so every session shares one loader.
_MODELS = botocore.loaders.create_loader()


def _new_boto3_session() -> None:
    session = botocore.session.Session()
    session.register_component("data_loader", _MODELS)
    boto3.setup_default_session(botocore_session=session)


@pytest.fixture(params=BACKENDS)
def table(request, monkeypatch):
    """A fresh, empty table built from the shared schema, on moto and on DynamoDB Local.

    The functions' cached settings and client are reset, so they pick up the table and endpoint.
    """
    if request.param == "moto":
        with mock_aws():
            _new_boto3_session()
            config.reset()
            boto3.client("dynamodb").create_table(TableName=TABLE_NAME, **TABLE_SCHEMA)
            yield TABLE_NAME
            config.reset()
        return

    # A new table per test on the one server: creating one takes ~7 ms, and deleting it (+13 ms)
    # buys nothing, as the in-memory database ends with the session. No TTL: neither engine expires.
    # No stream until a test reads it (tests.events_support.stream_on turns it on): DynamoDB Local
    # keeps every stream record of the session, and each write to a streamed table gets slower with
    # them all (a 98-put transaction: 0.13 s at the start of a run, 3.7 s after 5 minutes of the
    # handler tests), while the handlers never see a stream.
    server = request.getfixturevalue("dynamodb_local_server")
    name = f"{TABLE_NAME}-{uuid.uuid4().hex}"
    server.client.create_table(TableName=name, **{k: v for k, v in TABLE_SCHEMA.items() if k != "StreamSpecification"})
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", server.endpoint)
    monkeypatch.setenv("TABLE_NAME", name)
    _new_boto3_session()
    config.reset()
    yield name
    config.reset()


@pytest.fixture
def deletions_queue(table, monkeypatch):
    """A deletions queue of its own on moto, which the functions' settings name: its URL."""
    queue_url = boto3.client("sqs").create_queue(QueueName=f"deletions-{uuid.uuid4().hex}")["QueueUrl"]
    monkeypatch.setenv("DELETIONS_QUEUE_URL", queue_url)
    config.reset()
    yield queue_url
    config.reset()


@pytest.fixture
def dynamodb_calls(table):
    """The DynamoDB operations the functions send, recorded at the HTTP-request level."""
    calls: list[str] = []

    def record(event_name: str, **_):
        calls.append(event_name.rsplit(".", 1)[-1])

    config.dynamodb().meta.events.register("before-send.dynamodb", record)
    return calls


@pytest.fixture
def gateway(monkeypatch):
    """The local gateway (make run's) in a thread of this process, on a free port; the functions
    behind it use whatever table the test set up. Each answer it gives a route is held against the
    OpenAPI document, and the test fails at its end on any that differs (``contract.watch``)."""
    drift = contract.watch(monkeypatch)
    with server.in_thread() as url:
        yield url
    assert not drift, "the local gateway answered what the OpenAPI document does not give:\n" + "\n".join(drift)


# The tests that run the table's stream through the events function (handlers, and cpctl's activity
# log): defined here once, so that no test module imports another's fixtures (ruff reads an imported
# fixture taken as a parameter as a redefinition, F811).


@pytest.fixture
def bus(table, monkeypatch):
    """EventBridge as a recorder, which the events function publishes to; no waits between PutEvents
    attempts; the activity log's retention read again from this test's environment."""
    # Imported here: the functions' modules read their settings as they load, after isolate() above.
    from controlplane.lifecycle import publisher
    from tests.events_support import BUS, RecordingBus

    monkeypatch.setenv("EVENT_BUS_NAME", BUS)
    monkeypatch.setattr(publisher.time, "sleep", lambda _: None)  # the backoff between PutEvents attempts
    publisher.retention_days.cache_clear()
    recorder = RecordingBus()
    config.use_bus(recorder)
    yield recorder
    config.use_bus(None)
    publisher.retention_days.cache_clear()


@pytest.fixture
def stream(table):
    """The table's stream, from the first write after the test starts."""
    from tests.events_support import stream_reader

    return stream_reader(table)
