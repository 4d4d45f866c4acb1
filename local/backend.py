"""Which DynamoDB ``make run`` uses: the one at AWS_ENDPOINT_URL_DYNAMODB if that is set; otherwise
DynamoDB Local with its data in DYNAMODB_DATA_DIR (.local/dynamodb) on DYNAMODB_PORT (8000), or moto
in memory when Java is missing."""

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from local import ROOT
from local.dynamodb_local import DynamoDBLocal, JavaNotFound


@contextmanager
def dynamodb(log: Callable[[str], None]) -> Iterator[str]:
    """Point the functions at a DynamoDB for this run; yields where, for the banner. What it
    started stops when the block ends."""
    if endpoint := os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"):
        yield f"{endpoint} (from AWS_ENDPOINT_URL_DYNAMODB; nothing started)"
    elif shutil.which("java"):
        data = Path(os.environ.get("DYNAMODB_DATA_DIR", ROOT / ".local" / "dynamodb"))
        with DynamoDBLocal(port=int(os.environ.get("DYNAMODB_PORT", "8000")), db_path=data) as local:
            os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = local.endpoint
            if not local.loopback_only:
                log(
                    "Warning: DynamoDB Local listens on every interface, not only 127.0.0.1: without `javac` "
                    "(a JDK, e.g. openjdk-17-jdk-headless) its bind address cannot be set."
                )
            yield f"DynamoDB Local on {local.endpoint} (pid {local.process.pid}), data in {data}"
    else:
        from moto import mock_aws

        log(f"{JavaNotFound()}\nFalling back to moto in this process: the data is lost when the server stops.")
        with mock_aws():
            yield "moto, in memory (no Java)"
