"""The events function starts no PutEvents call it may not finish: PUT_SECONDS covers the longest
one its client's configuration allows, and the function's timeout leaves time to start one."""

import boto3

from controlplane import config
from controlplane.lifecycle import publisher
from infra import constants
from local import ROOT


def test_put_seconds_cover_the_longest_call_the_events_client_allows():
    client = config.EVENTS_CLIENT_CONFIG
    boto3.client("events", region_name="us-east-1", config=client)  # botocore normalizes the retries here
    attempts = client.retries["total_max_attempts"]
    # botocore's standard mode: a throttled retry waits up to min(2**i, 20) s, raised by up to 5 s
    # when the answer carries x-amz-retry-after (botocore/retries/standard.py, ExponentialBackoff)
    backoffs = sum(min(2**i, 20) + 5 for i in range(attempts - 1))

    longest = attempts * (client.connect_timeout + client.read_timeout) + backoffs

    assert longest <= publisher.PUT_SECONDS
    assert constants.TIMEOUT.to_seconds() > 2 * publisher.PUT_SECONDS


def test_the_events_doc_gives_put_seconds():
    assert f"less than {publisher.PUT_SECONDS} s of the invocation left" in (ROOT / "docs" / "EVENTS.md").read_text()
