"""What the ops commands that take ``--table`` share: a name that finds nothing ends the command
with one line, not botocore's traceback."""

import argparse
from collections.abc import Iterator
from contextlib import contextmanager

from botocore.exceptions import ClientError


@contextmanager
def refused_if_missing(parser: argparse.ArgumentParser, given: str) -> Iterator[None]:
    """Run a command's work. A table (or user pool) that is not there, from a typo, another region or
    DynamoDB Local not pointed at, fails its first request with ResourceNotFoundException: exit 2
    naming what was ``given`` (``--table x``) instead. No request of its own: the command's first
    Query is the check."""
    try:
        yield
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
            raise
        message = error.response["Error"].get("Message", "")
        parser.error(f"{given}: not found in this account and region ({error.operation_name}: {message})")
