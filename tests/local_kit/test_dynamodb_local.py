"""The DynamoDB Local launcher: clear failures, and tables as the stack makes them."""

import socket
import sys
import uuid
from pathlib import Path

import pytest

from controlplane.dal.schema import TABLE_SCHEMA, TTL_ATTRIBUTE
from local import dynamodb_local
from local.dynamodb_local import DynamoDBLocal, JavaNotFound, PortInUse, ensure_table


def listening_addresses(port: int) -> set[str]:
    """The addresses a TCP socket listens on at ``port``, from the kernel's own tables."""
    found = set()
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state != "0A" or int(hex_port, 16) != port:  # 0A: LISTEN
                continue
            # Each 32-bit word is in host (little-endian) order.
            raw = b"".join(bytes.fromhex(address[i : i + 8])[::-1] for i in range(0, len(address), 8))
            found.add(socket.inet_ntop(family, raw))
    return found


linux_only = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/net")


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
    indexes = sorted(index["IndexName"] for index in table["GlobalSecondaryIndexes"])
    assert indexes == sorted(index["IndexName"] for index in TABLE_SCHEMA["GlobalSecondaryIndexes"])
    ttl = client.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
    assert (ttl["TimeToLiveStatus"], ttl["AttributeName"]) == ("ENABLED", TTL_ATTRIBUTE)


@linux_only
@pytest.mark.dynamodb_local
def test_dynamodb_local_listens_on_the_loopback_interface_only(dynamodb_local_server):
    assert dynamodb_local_server.loopback_only
    assert listening_addresses(dynamodb_local_server.port) <= {"127.0.0.1", "::ffff:127.0.0.1"}
    assert listening_addresses(dynamodb_local_server.port)


@linux_only
@pytest.mark.dynamodb_local
def test_without_javac_dynamodb_local_still_starts_and_says_it_listens_everywhere(monkeypatch):
    # Given a Java without javac, which cannot compile the loopback launcher
    monkeypatch.setattr(dynamodb_local, "loopback_launcher", lambda home: None)

    # When DynamoDB Local starts
    with DynamoDBLocal() as server:
        # Then it answers, listening on every interface, and says so
        assert server.client.list_tables()["TableNames"] == []
        assert not server.loopback_only
        assert listening_addresses(server.port) & {"0.0.0.0", "::"}


@pytest.mark.dynamodb_local
def test_ensure_table_adds_an_index_a_table_made_before_it_lacks(dynamodb_local_server):
    # Given a table as make run made it before org units: GSI1 only
    client = dynamodb_local_server.client
    name = f"before-units-{uuid.uuid4().hex}"
    gsi1 = TABLE_SCHEMA["GlobalSecondaryIndexes"][:1]
    named = {"PK", "SK", "GSI1PK", "GSI1SK"}
    definitions = [d for d in TABLE_SCHEMA["AttributeDefinitions"] if d["AttributeName"] in named]
    older = {**TABLE_SCHEMA, "GlobalSecondaryIndexes": gsi1, "AttributeDefinitions": definitions}
    client.create_table(TableName=name, **older)

    # When make run starts on it
    assert ensure_table(client, name) is False

    # Then it has every index of the schema
    table = client.describe_table(TableName=name)["Table"]
    assert {index["IndexName"] for index in table["GlobalSecondaryIndexes"]} == {"GSI1", "GSI2"}
