import os

import boto3
import pytest
from moto import mock_aws

from controlplane import config
from controlplane.schema import TABLE_SCHEMA

TABLE_NAME = "control-plane-test"

os.environ.update(
    AWS_ACCESS_KEY_ID="testing",
    AWS_SECRET_ACCESS_KEY="testing",
    AWS_SESSION_TOKEN="testing",
    AWS_DEFAULT_REGION="us-east-1",
    TABLE_NAME=TABLE_NAME,
    CURSOR_SECRET="test-cursor-secret",
    POWERTOOLS_SERVICE_NAME="control-plane",
    POWERTOOLS_METRICS_NAMESPACE="ControlPlane",
    POWERTOOLS_TRACE_DISABLED="true",
    POWERTOOLS_DEV="false",
    LOG_LEVEL="WARNING",
)
os.environ.pop("AWS_ENDPOINT_URL_DYNAMODB", None)


@pytest.fixture
def table():
    """A fresh moto table built from the shared schema; the functions' cached client is reset."""
    with mock_aws():
        config.reset()
        boto3.client("dynamodb").create_table(TableName=TABLE_NAME, **TABLE_SCHEMA)
        yield TABLE_NAME
        config.reset()


@pytest.fixture
def dynamodb_calls(table):
    """The DynamoDB operations the functions send, recorded at the HTTP-request level."""
    calls: list[str] = []

    def record(event_name: str, **_):
        calls.append(event_name.rsplit(".", 1)[-1])

    config.dynamodb().meta.events.register("before-send.dynamodb", record)
    return calls
