"""How long the client waits: each attempt's own bound, the whole request's (``timeout``, ``cpctl
--timeout``), and what is sent again when no answer comes. Against a server that takes connections
and never answers, and against scripted answers on a fake clock."""

import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from typer.testing import CliRunner

from cpctl import retries
from cpctl.cli import app
from cpctl.client import Client
from cpctl.errors import ServiceUnavailable


class Hung:
    """A server that accepts every connection, reads the request and never answers."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.05)
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.connections: list[socket.socket] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                connection, _ = self.server.accept()
            except TimeoutError:
                continue
            self.connections.append(connection)
            self.take(connection)

    def take(self, connection: socket.socket) -> None:
        """What becomes of a request: here, nothing (it is never answered)."""

    def close(self) -> None:
        self.stopped.set()
        self.thread.join()
        for connection in self.connections:
            connection.close()
        self.server.close()


@pytest.fixture
def hung() -> Iterator[Hung]:
    server = Hung()
    yield server
    server.close()


def test_a_read_from_a_hung_server_gives_up_within_the_requests_timeout(hung):
    # Given a server that never answers, and a client that allows a request 1 s
    client = Client(hung.url, "t0ken", timeout=1.0)

    # When it reads
    started = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        client.get_org("acme")
    took = time.monotonic() - started

    # Then it gives up after about that second, not after 5 attempts of it and the backoff between them
    assert took < 2.0, f"gave up after {took:.1f} s"


def test_a_change_the_hung_server_took_is_sent_once(hung):
    # Given a server that takes the request and never answers
    client = Client(hung.url, "t0ken", timeout=1.0)

    # When a change without an Idempotency-Key gets no answer
    with pytest.raises(httpx.ReadTimeout):
        client.update_org("acme", name="Acme Inc")

    # Then it is not sent again: the first may have been made
    assert len(hung.connections) == 1


class Silent:
    """A transport on a fake clock: each attempt takes its whole read bound and gets no answer."""

    def __init__(self) -> None:
        self.now = 0.0
        self.bounds: list[float] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        read = request.extensions["timeout"]["read"]
        self.bounds.append(read)
        self.now += read
        raise httpx.ReadTimeout("timed out", request=request)

    def client(self) -> Client:
        transport = httpx.MockTransport(self)
        return Client("http://api.test", "t0ken", transport=transport, sleep=self.wait, clock=self.clock)

    def wait(self, seconds: float) -> None:
        self.now += seconds

    def clock(self) -> float:
        return self.now


def test_a_read_has_a_shorter_bound_than_a_change_and_no_attempt_outlasts_the_request():
    reads, changes = Silent(), Silent()

    with pytest.raises(httpx.ReadTimeout):
        reads.client().get_org("acme")
    with pytest.raises(httpx.ReadTimeout):
        changes.client().update_org("acme", name="X")

    # A GET is sent again, each attempt bounded by READ_SECONDS, until the request's time is up
    assert reads.bounds[0] == retries.READ_SECONDS
    assert len(reads.bounds) == 3 and reads.now == pytest.approx(retries.TOTAL_SECONDS)
    # A change waits as long as API Gateway may take to answer, once
    assert changes.bounds == [retries.WRITE_SECONDS]


class Busy(Silent):
    """Answers 503 with ``Retry-After: 20`` at once."""

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.bounds.append(request.extensions["timeout"]["read"])
        body = {"error": {"code": "service_unavailable", "message": "seats are being counted", "request_id": "r"}}
        return httpx.Response(503, json=body, headers={"Retry-After": "20"})


def test_a_wait_that_would_end_past_the_requests_timeout_is_not_made():
    api = Busy()

    with pytest.raises(ServiceUnavailable):
        api.client().get_org("acme")

    # One wait of 20 s fits in the 30 s; a second would end past it, so the 503 is raised instead
    assert len(api.bounds) == 2 and api.now == 20.0


class BusyKeys(Busy):
    """Busy, keeping the Idempotency-Key of each attempt."""

    def __init__(self) -> None:
        super().__init__()
        self.keys: list[str | None] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.keys.append(request.headers.get("Idempotency-Key"))
        return super().__call__(request)


def test_an_import_is_sent_again_after_a_503_with_the_same_key():
    api = BusyKeys()

    with pytest.raises(ServiceUnavailable):
        api.client().import_users("acme", [{"user_id": "alice", "name": "Alice", "email": "alice@example.com"}])

    # It was sent again after the wait, as a create is, with its first attempt's key: the API makes it once
    assert len(api.keys) == 2 and api.keys[0] and api.keys[0] == api.keys[1]


@pytest.fixture
def cpctl(hung, tmp_path, monkeypatch):
    monkeypatch.setenv("CPCTL_CONFIG_DIR", str(tmp_path / "cpctl"))
    runner = CliRunner()
    return lambda *args: runner.invoke(app, ["--url", hung.url, "--token", "t0ken", "--timeout", "1", *args])


def test_cpctl_timeout_bounds_a_request_and_says_so(hung, cpctl):
    started = time.monotonic()
    shown = cpctl("orgs", "list")
    took = time.monotonic() - started

    assert shown.exit_code == 1, shown.output
    assert took < 3.0
    assert f"no answer from {hung.url} to GET /orgs in time" in shown.stderr
    assert "at most 1 s (--timeout)" in shown.stderr


def test_a_create_that_got_no_answer_says_the_key_that_makes_sending_it_again_safe(cpctl, tmp_path):
    shown = cpctl("orgs", "create", "acme", "--name", "Acme", "--idempotency-key", "k-123")
    changed = cpctl("orgs", "update", "acme", "--name", "Acme Inc")
    (tmp_path / "people.csv").write_text("user_id,name,email\nalice,Alice,alice@example.com\n")
    imported = cpctl("users", "import", "acme", str(tmp_path / "people.csv"), "--idempotency-key", "k-456")

    assert shown.exit_code == 1, shown.output
    assert "send it again with --idempotency-key k-123" in shown.stderr
    assert imported.exit_code == 1 and "send it again with --idempotency-key k-456" in imported.stderr
    assert changed.exit_code == 1 and "It may or may not have been made: look before" in changed.stderr


def test_a_change_interrupted_says_it_may_have_been_made_and_the_key_that_resends_it_safely(cpctl, monkeypatch):
    def interrupted(*_, **__):  # Ctrl-C while the request is on its way
        raise KeyboardInterrupt

    monkeypatch.setattr(httpx.Client, "request", interrupted)

    created = cpctl("orgs", "create", "acme", "--name", "Acme", "--idempotency-key", "k-123")
    changed = cpctl("orgs", "update", "acme", "--name", "Acme Inc")
    read = cpctl("orgs", "get", "acme")

    assert created.exit_code == 130, created.output
    assert "Interrupted: POST /orgs was sent or about to be." in created.stderr
    assert "send it again with --idempotency-key k-123: the API makes it once, unless Lambda" in created.stderr
    assert changed.exit_code == 130 and "It may or may not have been made: look before" in changed.stderr
    assert (read.exit_code, read.stderr) == (130, "")  # a read changes nothing: nothing to say


class Dropping(Hung):
    """A server that reads each request, then closes the connection without an answer (a proxy's
    reset, a load balancer's idle timeout): the request was sent, and may have been carried out."""

    def take(self, connection: socket.socket) -> None:
        connection.recv(65536)
        connection.close()


def test_a_change_whose_connection_closed_unanswered_says_it_may_have_been_made(tmp_path, monkeypatch):
    # Given a server that takes a request, then drops the connection without answering
    monkeypatch.setenv("CPCTL_CONFIG_DIR", str(tmp_path / "cpctl"))
    server = Dropping()
    try:
        # When a change is sent there
        shown = CliRunner().invoke(
            app, ["--url", server.url, "--token", "t0ken", "users", "delete", "acme", "bob", "-y"]
        )
    finally:
        server.close()

    # Then cpctl does not say the API is unreachable (it was reached): the delete may have been made
    assert shown.exit_code == 1, shown.output
    assert "Is the API running" not in shown.stderr
    assert f"no answer from {server.url} to DELETE /orgs/acme/users/bob" in shown.stderr
    assert "It may or may not have been made: look before sending it again." in shown.stderr
