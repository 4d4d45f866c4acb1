"""API Gateway's 29-second integration timeout: the caller gets ``504`` with the generic 5xx gateway
response (``internal_error``, "Endpoint request timed out"; ``infra.api``) while the function runs
on and may still make the change. The functions' own 28 s timeout (``infra.constants.TIMEOUT``)
usually ends them first: Lambda kills the function, maybe after it wrote, and the caller gets ``502``
(``internal_error``, "Internal server error"), as for a function that crashed. For the client and
cpctl either is no answer at all: sent again only when that is safe, and a change it ends may or may
not have been made. Each test meets both. Scripted answers on a fake clock."""

import httpx
import pytest
from typer.testing import CliRunner

from cpctl.cli import app
from cpctl.client import Client
from cpctl.commands import common
from cpctl.errors import InternalError
from infra.constants import TIMEOUT
from tests.local_kit.test_client import ORG

GATEWAY_SECONDS = 29.0
TIMED_OUT = {"error": {"code": "internal_error", "message": "Endpoint request timed out", "request_id": "r-504"}}
KILLED = {"error": {"code": "internal_error", "message": "Internal server error", "request_id": "r-502"}}
# How long the first attempt takes, and its answer: API Gateway's own timeout, or Lambda's of the function.
ENDS = {504: (GATEWAY_SECONDS, TIMED_OUT), 502: (TIMEOUT.to_seconds(), KILLED)}
IN_PROGRESS = {
    "error": {
        "code": "conflict",
        "message": "A request with this Idempotency-Key is still in progress; retry shortly",
        "request_id": "r-409",
    }
}


class Gateway:
    """API Gateway in front of a function that outlasts its time: the first attempt takes ``seconds``
    (API Gateway's 29 s for a ``504``, the function's 28 s for Lambda's kill, a ``502``) and is
    answered ``status``; each later one is answered ``then`` at once (the last repeated), or like the
    first when there is none. An attempt whose read bound is shorter gets no answer in it."""

    def __init__(self, *then: httpx.Response, status: int = 504, seconds: float | None = None):
        self.then = list(then)
        self.status = status
        self.seconds = seconds or ENDS[status][0]
        self.now = 0.0
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if len(self.requests) > 1 and self.then:
            return self.then.pop(0) if len(self.then) > 1 else self.then[0]
        read = request.extensions["timeout"]["read"]
        if read < self.seconds:
            self.now += read
            raise httpx.ReadTimeout("timed out", request=request)
        self.now += self.seconds
        return httpx.Response(self.status, json=ENDS[self.status][1], headers={"x-amzn-RequestId": f"r-{self.status}"})

    def client(self, url: str = "http://api.test", token: str = "t0ken", timeout: float = 120.0) -> Client:
        transport = httpx.MockTransport(self)
        return Client(url, token, timeout=timeout, transport=transport, sleep=self.wait, clock=self.clock)

    def wait(self, seconds: float) -> None:
        self.now += seconds

    def clock(self) -> float:
        return self.now

    def keys(self) -> list[str | None]:
        return [request.headers.get("Idempotency-Key") for request in self.requests]


@pytest.fixture(params=[504, 502], ids=lambda status: f"answered {status}")
def status(request) -> int:
    """How API Gateway ends the first attempt: its own timeout (504), or the function's (502)."""
    return request.param


def test_a_create_answered_504_or_502_is_sent_again_with_its_key_and_gets_what_the_first_made(status):
    # Given API Gateway answering a create 504 after 29 s (or 502, its function killed at 28 s), and
    # the create's replay (the function finished it) 201
    api = Gateway(httpx.Response(201, json=ORG), status=status)

    # When an org is created, with time for more than one attempt
    org = api.client(timeout=120.0).create_org("acme", name="Acme")

    # Then it was sent again, as after no answer, with the same key: the API made it once
    assert org.org_id == "acme"
    first, second = api.keys()
    assert first and first == second


def test_a_change_without_a_key_answered_504_or_502_is_sent_once(status):
    api = Gateway(httpx.Response(200, json=ORG), status=status)

    with pytest.raises(InternalError):
        api.client().update_org("acme", name="Acme Inc")

    assert len(api.requests) == 1  # the first may have been made: sending it again could make it twice


def test_a_read_answered_504_or_502_is_sent_again(status):
    # Given a gateway whose 504 comes within a read's own bound (a shorter integration timeout), or
    # a function that crashed within it (502)
    api = Gateway(httpx.Response(200, json=ORG), status=status, seconds=5.0)

    # When the org is read; Then the read is sent again, as after no answer
    assert api.client().get_org("acme").org_id == "acme"
    assert len(api.requests) == 2


@pytest.fixture
def cpctl(tmp_path, monkeypatch):
    """``cpctl ARGS`` against ``gateway``, with cpctl's own --timeout (30 s unless given)."""
    monkeypatch.setenv("CPCTL_CONFIG_DIR", str(tmp_path / "cpctl"))
    (tmp_path / "people.csv").write_text("user_id,name,email\nalice,Alice,alice@example.com\n")

    def run(gateway: Gateway, *args: str):
        monkeypatch.setattr(common, "Client", gateway.client)
        args = tuple(arg.replace("{csv}", str(tmp_path / "people.csv")) for arg in args)
        return CliRunner().invoke(app, ["--url", "http://api.test", "--token", "t0ken", *args])

    return run


CREATES = [
    ("orgs", "create", "acme", "--name", "Acme"),
    ("users", "create", "acme", "bob", "--name", "Bob", "--email", "bob@acme.example"),
    ("tickets", "open", "acme", "bob", "--subject", "Printer on fire"),
    ("units", "create", "acme", "eng", "--name", "Engineering"),
    ("users", "import", "acme", "{csv}"),
]


@pytest.mark.parametrize("command", CREATES, ids=lambda command: " ".join(command[:2]))
def test_a_create_answered_504_or_502_says_it_may_have_been_made_and_the_key_that_sends_it_again(
    cpctl, command, status
):
    # Given API Gateway answering 504 after 29 s, its function still running the create (or 502,
    # Lambda having ended it at 28 s, maybe after it wrote): the attempts sent again with the key in
    # the time left are answered 409, still in progress
    gateway = Gateway(httpx.Response(409, json=IN_PROGRESS), status=status)

    # When a create meets it
    shown = cpctl(gateway, *command, "--idempotency-key", "k-504")

    # Then, as after no answer: it may or may not have been made, and the key that sends it again
    assert shown.exit_code == 1, shown.output
    assert set(gateway.keys()) == {"k-504"}
    assert "It may or may not have been made: send it again with --idempotency-key k-504" in shown.stderr


def test_a_create_with_no_answer_then_still_in_progress_says_the_key_too(cpctl):
    # Given a server that does not answer a create within the attempt's 30 s, then answers the
    # attempts sent again with its key 409, still in progress
    gateway = Gateway(httpx.Response(409, json=IN_PROGRESS), seconds=40.0)

    # When the create meets it, with time for more than one attempt
    shown = cpctl(gateway, "--timeout", "120", "orgs", "create", "acme", "--name", "Acme", "--idempotency-key", "k-1")

    # Then the 409 is said, and after it the key: the first attempt may have made the org
    assert shown.exit_code == 1, shown.output
    assert "Error: conflict: A request with this Idempotency-Key is still in progress" in shown.stderr
    assert "It may or may not have been made: send it again with --idempotency-key k-1" in shown.stderr


def test_a_504_or_502_with_no_time_left_to_send_again_says_so_with_the_key(cpctl, status):
    gateway = Gateway(status=status)
    no_time_left = str(gateway.seconds + 0.1)

    shown = cpctl(gateway, "--timeout", no_time_left, "tickets", "open", "acme", "bob", "--subject", "Printer on fire")

    assert shown.exit_code == 1, shown.output
    message = ENDS[status][1]["error"]["message"]
    assert f"Error: internal_error: {message} (status {status}, request r-{status})" in shown.stderr
    assert "It may or may not have been made: send it again with --idempotency-key " in shown.stderr


@pytest.mark.parametrize(
    "command", [("orgs", "update", "acme", "--name", "Acme Inc"), ("users", "delete", "acme", "bob", "--yes")]
)
def test_a_change_without_a_key_answered_504_or_502_says_to_look_before_sending_it_again(cpctl, command, status):
    gateway = Gateway(status=status)

    shown = cpctl(gateway, *command)

    assert shown.exit_code == 1, shown.output
    assert len(gateway.requests) == 1
    assert "It may or may not have been made: look before sending it again." in shown.stderr


def test_in_json_output_a_504_or_502_is_still_the_apis_error_body_alone(cpctl, status):
    shown = cpctl(Gateway(status=status), "-o", "json", "orgs", "update", "acme", "--name", "Acme Inc")

    assert shown.exit_code == 1
    assert shown.stderr.strip() == httpx.Response(status, json=ENDS[status][1]).text


class Unreachable(Gateway):
    """A gateway that answers the first attempt 504 after 29 s (or 502), then takes no connection at all
    (the network dropped): each attempt sent again fails before any of it leaves."""

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if self.requests:
            self.requests.append(request)
            raise httpx.ConnectError("Network is unreachable", request=request)
        return super().__call__(request)


def test_a_create_answered_504_or_502_then_unreachable_still_says_it_may_have_been_made_with_its_key(cpctl, status):
    # Given a create answered 504 (its function runs on) or 502 (it was killed, maybe after it
    # wrote), whose attempts sent again reach nothing
    gateway = Unreachable(status=status)

    # When a ticket is opened, with time for more than one attempt
    shown = cpctl(
        gateway,
        "--timeout",
        "120",
        "tickets",
        "open",
        "acme",
        "bob",
        "--subject",
        "Printer on fire",
        "--idempotency-key",
        "k-504",
    )

    # Then it is not said as never sent ("cannot reach"): the first attempt may have opened the
    # ticket, and only its key sends it again safely
    assert shown.exit_code == 1, shown.output
    assert len(gateway.requests) > 1
    assert "cannot reach" not in shown.stderr
    assert "It may or may not have been made: send it again with --idempotency-key k-504" in shown.stderr


def test_the_client_raises_the_504_or_502_not_the_later_connection_error_for_a_change_it_may_have_made(status):
    # Given a create answered 504 or 502, whose attempts sent again reach nothing
    api = Unreachable(status=status)

    # When the client creates the org
    with pytest.raises(InternalError) as raised:
        api.client().create_org("acme", name="Acme", idempotency_key="k-504")

    # Then the error says what is true: it may have been made, and the key that sends it again
    assert raised.value.maybe_made and raised.value.idempotency_key == "k-504"
    assert isinstance(raised.value.__cause__, httpx.ConnectError)
