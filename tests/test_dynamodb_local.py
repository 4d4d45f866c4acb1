"""The DynamoDB Local launcher: clear failures, and tables as the stack makes them."""

import uuid

import pytest

from controlplane.schema import TABLE_SCHEMA, TTL_ATTRIBUTE
from local.dynamodb_local import DynamoDBLocal, JavaNotFound, PortInUse, ensure_table


def test_without_java_start_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))

    with pytest.raises(JavaNotFound, match="needs Java 17 or newer"):
        DynamoDBLocal().start()


@pytest.mark.dynamodb_local
def test_a_taken_port_is_refused_before_java_starts(dynamodb_local_server):
    with pytest.raises(PortInUse, match=str(dynamodb_local_server.port)):
        DynamoDBLocal(port=dynamodb_local_server.port).start()


@pytest.mark.dynamodb_local
def test_ensure_table_creates_the_schema_with_ttl_once(dynamodb_local_server):
    client = dynamodb_local_server.client
    name = f"ensure-{uuid.uuid4().hex}"

    assert ensure_table(client, name) is True
    assert ensure_table(client, name) is False

    table = client.describe_table(TableName=name)["Table"]
    assert table["KeySchema"] == TABLE_SCHEMA["KeySchema"]
    indexes = [index["IndexName"] for index in table["GlobalSecondaryIndexes"]]
    assert indexes == [index["IndexName"] for index in TABLE_SCHEMA["GlobalSecondaryIndexes"]]
    ttl = client.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
    assert (ttl["TimeToLiveStatus"], ttl["AttributeName"]) == ("ENABLED", TTL_ATTRIBUTE)
