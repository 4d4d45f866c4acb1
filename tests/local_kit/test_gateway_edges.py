"""The local gateway at the edges of HTTP: HEAD, odd framing, repeated headers, odd console paths."""

import http.client
import json

import pytest

from local import apigw, console, tokens
from tests.local_kit.test_local_gateway import _raw

OPERATOR = f"Bearer {tokens.issue(tokens.OPERATOR)}"


@pytest.fixture
def lambda_sees(monkeypatch):
    seen = []

    def fake_invoke(event):
        seen.append(event)
        return {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": '{"ok": true}'}

    monkeypatch.setattr(apigw, "invoke", fake_invoke)
    return seen


def _connection(gateway: str) -> http.client.HTTPConnection:
    return http.client.HTTPConnection(gateway.removeprefix("http://"), timeout=10)


def test_a_head_answer_has_no_body_so_the_next_answer_on_the_connection_is_read_as_sent(gateway, lambda_sees):
    # Given one keep-alive connection, a HEAD then a GET on it (as a client pipelines them)
    head = f"HEAD /orgs HTTP/1.1\r\nAuthorization: {OPERATOR}\r\n\r\n".encode()
    get = b"GET /console/config.json HTTP/1.1\r\nConnection: close\r\n\r\n"

    # When both are answered
    _, _, rest = _raw(gateway, head + get)

    # Then the HEAD's answer ends with its headers (RFC 9110 9.3.2): the next bytes are the GET's answer
    assert rest.startswith(b"HTTP/1.1 200 OK\r\n"), rest[:60]
    assert json.loads(rest.partition(b"\r\n\r\n")[2])["localSignIn"] is True


def test_the_console_answers_head_as_cloudfront_does_with_the_gets_headers_and_no_body(gateway):
    # CloudFront's default behaviour allows GET and HEAD (infra/console.py sets no other)
    connection = _connection(gateway)

    connection.request("HEAD", "/console/js/app.js")
    answer = connection.getresponse()

    assert answer.status == 200
    assert answer.headers["Content-Type"] == "text/javascript; charset=utf-8"
    assert int(answer.headers["Content-Length"]) == len((console.CONSOLE_DIR / "js" / "app.js").read_bytes())
    assert answer.read() == b""
