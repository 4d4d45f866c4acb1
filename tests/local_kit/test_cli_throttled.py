"""A rate limit's 429 (a tenant's usage plan, ``Retry-After: 1``; the web ACL's block of an address,
``Retry-After: 30``, ``infra.api``) as cpctl says it: that it retried only when it did, since a
wait that would end past ``--timeout`` is not made. Scripted answers on a fake clock."""

import httpx
import pytest
from typer.testing import CliRunner

from cpctl.cli import app
from cpctl.client import Client
from cpctl.commands import common
from infra.constants import WAF_RETRY_AFTER_SECONDS
from tests.local_kit.test_client import ORG


def throttled(retry_after: int) -> httpx.Response:
    body = {"error": {"code": "throttled", "message": "Too many requests", "request_id": "r-429"}}
    return httpx.Response(429, json=body, headers={"Retry-After": str(retry_after)})


class Limited:
    """An API that answers ``answers`` in turn (the last repeated), at once, on a clock that only
    cpctl's waits move."""

    def __init__(self, *answers: httpx.Response):
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []
        self.now = 0.0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]

    def client(self, url: str, token: str, timeout: float) -> Client:
        return Client(
            url, token, timeout=timeout, transport=httpx.MockTransport(self), sleep=self.wait, clock=lambda: self.now
        )

    def wait(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def cpctl(tmp_path, monkeypatch):
    """``cpctl ARGS`` against ``api``, with cpctl's own --timeout (30 s unless given)."""
    monkeypatch.setenv("CPCTL_CONFIG_DIR", str(tmp_path / "cpctl"))

    def run(api: Limited, *args: str):
        monkeypatch.setattr(common, "Client", api.client)
        return CliRunner().invoke(app, ["--url", "http://api.test", "--token", "t0ken", *args])

    return run


def test_an_address_blocked_by_the_web_acl_is_not_said_to_have_been_retried_within_the_default_timeout(cpctl):
    # Given the web ACL blocking the caller's address: 429 with a Retry-After as long as cpctl's
    # default --timeout
    api = Limited(throttled(WAF_RETRY_AFTER_SECONDS))

    # When a command meets it, with the default --timeout
    shown = cpctl(api, "orgs", "get", "acme")

    # Then it was sent once (the wait would end past --timeout), and cpctl says so, not that it retried
    assert shown.exit_code == 1, shown.output
    assert len(api.requests) == 1
    assert "retrying" not in shown.stderr
    assert f"try again in {WAF_RETRY_AFTER_SECONDS} s" in shown.stderr.lower()
    assert "--timeout" in shown.stderr


def test_a_longer_timeout_waits_out_the_web_acls_block(cpctl):
    # Given the web ACL's block, lifted by the time its Retry-After has passed
    api = Limited(throttled(WAF_RETRY_AFTER_SECONDS), httpx.Response(200, json=ORG))

    # When a command meets it with a --timeout longer than the wait
    shown = cpctl(api, "--timeout", "60", "orgs", "get", "acme")

    # Then cpctl waited and was answered
    assert shown.exit_code == 0, shown.output
    assert (len(api.requests), api.now) == (2, WAF_RETRY_AFTER_SECONDS)


def test_a_rate_limit_still_refused_after_its_retries_says_it_retried(cpctl):
    # Given a tenant's usage plan refusing every attempt with Retry-After: 1
    api = Limited(throttled(1))

    # When a command meets it
    shown = cpctl(api, "orgs", "get", "acme")

    # Then it was sent again after each wait, and cpctl says it was still refused after retrying
    assert shown.exit_code == 1, shown.output
    assert len(api.requests) > 1
    assert "Still refused after retrying; try again in 1 s." in shown.stderr
