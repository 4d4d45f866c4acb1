"""The local API Gateway: HTTP on 127.0.0.1 in, the same three Lambda handlers behind it.

``make run`` runs ``python -m local.server``. It picks a DynamoDB (``local.backend``: the one at
AWS_ENDPOINT_URL_DYNAMODB, else DynamoDB Local with its data in .local/dynamodb, else moto in
memory), creates the table if needed, publishes the table's changes as lifecycle events
(``local.stream``), and serves the API, the OpenAPI document at /openapi.json and Swagger UI at
/docs until Ctrl-C or SIGTERM, then stops what it started.

Settings (environment): PORT (3000), DYNAMODB_PORT (8000), DYNAMODB_DATA_DIR (.local/dynamodb),
LOCAL_API_FILE (.local/api.json: where it says it serves, ``local.running``), plus the functions'
own variables, which default to the values of ``local.environment.LOCAL``.
"""

import base64
import json
import os
import re
import signal
import sys
import threading
import time
import traceback
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from controlplane import config
from controlplane.http.errors import error_body
from local import ROOT, apigw, backend, console, docs, environment, limits, openapi, running, stream, tokens
from local.authorizer import AUTHORIZER, UNAUTHORIZED, Refusal  # noqa: F401 (UNAUTHORIZED: the tests' view)
from local.dynamodb_local import PortInUse, ensure_table
from local.sink import events_file

HOST = "127.0.0.1"
JSON = "application/json"
MAX_BODY = 10 * 1024 * 1024  # API Gateway's payload limit; the functions refuse far less (413)
Answer = tuple[int, list[tuple[str, str]], bytes]


# Lambda gives each execution environment one request at a time, and the handlers keep per-request
# state in module globals (the resolver's current event, the logger's keys): so one at a time here.
_one_at_a_time = threading.Lock()


_log_lock = threading.Lock()


def log(message: str) -> None:
    """One line, written whole: request lines and the stream thread's event lines never share one."""
    with _log_lock:
        sys.stderr.write(f"{message}\n")
        sys.stderr.flush()


class Gateway(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def handle_request(self) -> None:
        started = time.perf_counter()
        url = urlsplit(self.path)
        # The whole body is read before any answer, even an early 401: on a keep-alive connection an
        # unread body would be taken for the start of the next request.
        try:
            request_body = self.read_body()
        except BadBody as bad:
            self.close_connection = True  # what is left of the body cannot be told from a next request
            status, headers, body = error_answer(bad.status, bad.code, bad.message)
        else:
            if self.command == "GET" and url.path == "/":
                status, headers, body = 302, [("Location", "/docs"), ("Content-Type", JSON)], ROOT_ANSWER
            elif self.command == "GET" and url.path == tokens.JWKS_PATH:  # as Cognito serves a pool's keys
                status, headers, body = 200, [("Content-Type", JSON)], json.dumps(tokens.jwks()).encode()
            elif docs.serves(self.command, url.path):
                status, headers, body = docs.answer(url.path, parse_qs(url.query))
            elif self.command in ("GET", "HEAD") and console.serves(url.path):  # as CloudFront allows
                status, headers, body = console.answer(url.path)
            elif self.command == "OPTIONS" and (
                cors := apigw.preflight(url.path, self.headers, config.cors_allow_origins())
            ):
                status, headers, body = apigw.PREFLIGHT_STATUS, cors, b""
            else:
                status, headers, body = self.proxy(url.path, url.query, request_body)
        # Logged before the answer leaves: once the client has it, the line is there too.
        log(f"{self.command} {self.path} {status} {(time.perf_counter() - started) * 1000:.0f}ms")
        self.answer(status, headers, body)

    def answer(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if status not in (HTTPStatus.NO_CONTENT, HTTPStatus.NOT_MODIFIED):
            self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":  # its answer ends with the headers: a body would be read as the next answer
            self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's answer to a request it cannot parse (request line, headers, URI too long):
        the error contract too, and the connection closes, as the rest of the stream is unreadable."""
        if self.request_version == "HTTP/0.9":  # unparsed: answer as HTTP/1.1, with a status line and headers
            self.request_version = self.protocol_version
        self.close_connection = True
        status, headers, body = error_answer(code, "bad_request", message or HTTPStatus(code).phrase)
        log(f"{status} to an unparsable request: {getattr(self, 'requestline', '')[:200]!r}")
        self.answer(status, headers, body)

    def read_body(self) -> bytes:
        # Every Transfer-Encoding line, in order: the body is chunked only if chunked is the last coding
        lines = self.headers.get_all("Transfer-Encoding") or ()
        codings = [c.strip().lower() for v in lines for c in v.split(",") if c.strip()]  # empty elements: ignored
        if lines:
            if codings != ["chunked"]:  # another coding: its end cannot be found, or it is not decoded here
                raise BadBody(400, "bad_request", f"Unsupported Transfer-Encoding: {', '.join(codings)}")
            if "Content-Length" in self.headers:  # the chunks frame it; a smuggling attempt (RFC 9112 6.1)
                self.close_connection = True
            return self._read_chunked()
        lengths = {value.strip() for value in self.headers.get_all("Content-Length") or ()}
        if not lengths:
            return b""
        if len(lengths) > 1:  # which bytes are the body? (RFC 9112 6.3: an unrecoverable error)
            raise BadBody(400, "bad_request", f"Conflicting Content-Length values: {sorted(lengths)}")
        [declared] = lengths
        if not (declared.isascii() and declared.isdigit()):  # "²" is a digit to str, not to int()
            raise BadBody(400, "bad_request", f"Content-Length is not a number: {declared!r}")
        length = int(declared)
        if length > MAX_BODY:
            raise BadBody(413, "payload_too_large", "The request body is too large")
        return self.rfile.read(length)

    def _read_chunked(self) -> bytes:
        body = b""
        while True:
            size_line = self.rfile.readline(1024).split(b";")[0].strip()
            if not re.fullmatch(rb"[0-9A-Fa-f]{1,16}", size_line):  # not "-5" (a read to the end) nor "0x5"
                raise BadBody(400, "bad_request", "Malformed chunked request body")
            size = int(size_line, 16)
            if size == 0:
                while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):  # trailers
                    pass
                return body
            if len(body) + size > MAX_BODY:
                raise BadBody(413, "payload_too_large", "The request body is too large")
            body += self.rfile.read(size)
            self.rfile.readline(3)  # the CRLF after each chunk

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = handle_request

    def __getattr__(self, name: str):
        """Any other method (HEAD, TRACE, QUERY...) goes through too: API Gateway answers them,
        and here the handlers do (405 on a known path)."""
        if name.startswith("do_"):
            return self.handle_request
        raise AttributeError(name)

    def proxy(self, path: str, query: str, body: bytes) -> Answer:
        """What API Gateway does: authorizer, proxy event, Lambda, response mapping."""
        route, _ = apigw.match(self.command, path)
        context = None
        if route:
            # The authorizer's refusals are the stack's gateway responses; the function never runs.
            # The last value, as the event's single-value headers (the identity source) hold it
            authorization = (self.headers.get_all("Authorization") or [None])[-1]
            context = AUTHORIZER.decide(authorization, self.command, path)
            if isinstance(context, Refusal):
                status, headers, body = error_answer(context.status, context.code, context.message)
                return status, [*headers, *context.headers], body
        limiter: limits.Limiter | None = getattr(self.server, "limiter", None)
        if context is not None and limiter and (refused := limiter.admit(context)):
            status, headers_, body_ = error_answer(429, "throttled", refused.message)
            return status, [*headers_, ("Retry-After", str(refused.retry_after))], body_
        headers: dict[str, list[str]] = {}
        for name, value in self.headers.items():
            headers.setdefault(name, []).append(value)
        event = apigw.build_event(
            self.command,
            path,
            query=parse_qs(query, keep_blank_values=True),
            headers=headers,
            # As API Gateway hands on a text payload: invalid bytes become U+FFFD, which the functions
            # refuse (functions/controlplane/http/json_body.py).
            body=body.decode(errors="replace") if body else None,
            authorizer=context,
            stage_in_url=False,
        )
        request_id = event["requestContext"]["requestId"]
        if apigw.outgrows_lambda(event):  # refused by Lambda, before the function runs
            return error_answer(413, "payload_too_large", "The request body is too large", request_id)
        try:
            with _one_at_a_time:
                response = apigw.invoke(event)
        except Exception:
            traceback.print_exc()  # a crashed function: API Gateway answers 502, through the stack's DEFAULT_5XX
            return error_answer(502, "internal_error", "Internal server error", request_id)
        answer = response.get("body") or ""
        raw = base64.b64decode(answer) if response.get("isBase64Encoded") else answer.encode()
        return response["statusCode"], [*apigw.response_headers(response), ("x-amzn-RequestId", request_id)], raw

    def log_request(self, code="-", size="-") -> None:
        """One line per request is written by handle_request, with its duration."""


class BadBody(Exception):
    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def error_answer(status: int, code: str, message: str, request_id: str | None = None) -> Answer:
    """An answer of the gateway itself, in the API's error contract (the stack's gateway responses)."""
    request_id = request_id or str(uuid.uuid4())
    body = error_body(code, message, request_id)
    compact = json.dumps(body, separators=(",", ":")).encode()  # the functions' style, for every error body
    return status, [("Content-Type", JSON), ("x-amzn-RequestId", request_id)], compact


ROOT_ANSWER = json.dumps({"docs": "/docs", "openapi": "/openapi.json"}).encode()


@contextmanager
def in_thread(limiter: limits.Limiter | None = None) -> Iterator[str]:
    """The gateway in a thread of this process, on a free port, over whatever DynamoDB the
    functions' environment names (the tests'); yields its URL. ``limiter``: the tests' own, with
    its clock; else RATE_LIMITS says."""
    httpd = ThreadingHTTPServer((HOST, 0), Gateway)
    AUTHORIZER.trust(f"http://{HOST}:{httpd.server_port}{tokens.JWKS_PATH}")
    httpd.limiter = limiter or limits.from_environment()
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://{HOST}:{httpd.server_port}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def main() -> int:
    environment.use_defaults()
    warnings.filterwarnings("ignore", "No application metrics to publish")  # read routes emit no metric
    port = int(os.environ.get("PORT", "3000"))
    try:
        server = ThreadingHTTPServer((HOST, port), Gateway)
        server.limiter = limits.from_environment()
    except OSError as error:
        log(
            f"Cannot listen on {HOST}:{port}: {error.strerror}. Is `make run` already running? "
            "Stop it, or use another port: PORT=3001 make run"
        )
        return 1
    # Stop on SIGTERM as on Ctrl-C; and on SIGINT even when started in the background by a shell,
    # which would otherwise have Python ignore it.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.default_int_handler)
    try:
        running.refuse_while_serving("make run again")
        with backend.dynamodb(log) as where:
            config.reset()
            AUTHORIZER.trust(f"http://{HOST}:{port}{tokens.JWKS_PATH}")
            table = config.settings().table_name
            created = ensure_table(config.dynamodb(), table)
            openapi.document()  # imports the three functions now, not on the first request
            stop = threading.Event()
            # Positioned on the stream before the gateway serves: a write made the moment it is up is published.
            stream.publish_lifecycle_events(stop, _one_at_a_time, log)
            log(
                f"DynamoDB: {where}; table {table}{' (created)' if created else ''}\n"
                f"API on http://{HOST}:{port}  (Swagger UI /docs, OpenAPI /openapi.json)\n"
                f"Console on http://{HOST}:{port}/console/  (make console prints sign-in links)\n"
                f"Lifecycle events: one line each below, and in {os.path.relpath(events_file(), ROOT)}\n"
                f"Rate limits per org, from the plans: {'on' if server.limiter else 'off'} (RATE_LIMITS=on|off)\n"
                "Tokens: make token (an operator), make token ORG=acme USER=alice (a user), make tokens (demo).\n"
                "Ctrl-C stops."
            )
            # make seed, make console, make tokens and cpctl find it here, and its DynamoDB if others can reach it
            endpoint = {"dynamodb": url} if (url := os.environ.get("AWS_ENDPOINT_URL_DYNAMODB")) else {}
            with running.recorded(f"http://{HOST}:{port}", table=table, **endpoint):
                server.serve_forever()
    except KeyboardInterrupt:
        pass
    except PortInUse as error:
        log(
            f"Cannot start DynamoDB Local: {error}. Is another `make run` using it? Use another port "
            "(DYNAMODB_PORT=8001 make run) or that DynamoDB (AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:8000 make run)"
        )
        return 1
    except (RuntimeError, TimeoutError) as error:  # DynamoDB Local failed to start: its output says why
        log(f"Cannot start: {error}")
        return 1
    finally:
        server.server_close()
    log("Stopped.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
