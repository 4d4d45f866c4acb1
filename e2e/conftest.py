"""The end-to-end suite's target: a deployment, or the local gateway started here.

    make e2e                                  # starts `make run`'s server on free ports, on its own DynamoDB Local
    make e2e API_URL=https://... TOKEN=...    # a deployment; TOKEN is an operator's ID token

Against a deployment the suite works in two orgs of its own with random ids (``e2e-<hex>``), creates
their users through the API and deletes both orgs at the end. The isolation checks that act as an
org admin or member need those users' ID tokens: with USER_POOL_ID and USER_POOL_CLIENT_ID (the
stack's outputs) and AWS credentials allowed ``cognito-idp:AdminSetUserPassword`` and
``AdminInitiateAuth``, the suite sets each new user a random password and signs them in;
without them those checks are skipped, with the reason. Locally every check runs.

What a deployment does after its answer (indexes, the stream, queued jobs, the authorizer cache's
flush) the suite waits for, bounded: ``e2e/waits.py``, docs/OPERATIONS.md "Check a deployment".
"""

import os
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from cpctl.client import Client
from cpctl.credentials import cognito_token
from cpctl.errors import NotFound, ServiceUnavailable
from e2e import waits
from local import tokens
from local.process import ServerProcess

LOCAL_TTL = 60  # the stack's default: changes of access must take effect by the flush, not the TTL
TokenFor = Callable[[str, str, str], str | None]  # (org_id, user_id, role) -> an ID token, or None


@dataclass
class Target:
    url: str
    operator_token: str
    token_for: TokenFor
    no_user_tokens: str = ""  # why member and admin tokens are unavailable, if they are

    def client(self, token: str | None, seen: set[tuple[str, str]] | None = None) -> Client:
        """A client as the caller ``token`` names; ``seen`` collects the routes it called."""
        record = (lambda route, _: seen.add(route)) if seen is not None else None
        return Client(self.url, token, on_response=record)


def _cognito(pool: str, client_id: str) -> TokenFor:
    import boto3

    cognito = boto3.client("cognito-idp", region_name=pool.split("_", 1)[0])

    def token_for(org_id: str, user_id: str, role: str) -> str:
        username, password = f"{org_id}.{user_id}", secrets.token_urlsafe(24) + "aA1!"
        cognito.admin_set_user_password(UserPoolId=pool, Username=username, Password=password, Permanent=True)
        return cognito_token(username, password, client_id, pool, cognito=cognito)

    return token_for


def _local_users(server: ServerProcess) -> TokenFor:
    """A user's token carries their sign-in's subject, stored on their item in the server's table."""
    import boto3

    from local.environment import LOCAL

    dynamodb = boto3.client(
        "dynamodb",
        endpoint_url=server.dynamodb_endpoint,
        region_name=LOCAL["AWS_DEFAULT_REGION"],
        aws_access_key_id=LOCAL["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=LOCAL["AWS_SECRET_ACCESS_KEY"],
    )
    return lambda org_id, user_id, role: tokens.for_user(org_id, user_id, dynamodb=dynamodb, table=LOCAL["TABLE_NAME"])


@pytest.fixture(scope="session")
def target(tmp_path_factory) -> Iterator[Target]:
    url = os.environ.get("E2E_API_URL")
    if url:
        token = os.environ.get("E2E_TOKEN")
        if not token:
            pytest.exit("make e2e API_URL=... needs TOKEN=<an operator's ID token>", returncode=2)
        pool, client_id = os.environ.get("E2E_USER_POOL_ID"), os.environ.get("E2E_USER_POOL_CLIENT_ID")
        if pool and client_id:
            yield Target(url, token, _cognito(pool, client_id))
        else:
            reason = "needs USER_POOL_ID and USER_POOL_CLIENT_ID (and AWS credentials) to sign in org users"
            yield Target(url, token, lambda *_: None, no_user_tokens=reason)
        return
    folder = tmp_path_factory.mktemp("e2e-server")
    try:
        # Limits off: the suite's outcome must not depend on the machine's speed (they have their own tests).
        # The stack's cache TTL: suspensions and revocations must bite through the flush (seconds), not the TTL.
        env = {"RATE_LIMITS": "off", "AUTHORIZER_TTL_SECONDS": str(LOCAL_TTL)}
        server = ServerProcess(folder / "server.log", folder / "dynamodb", **env)
    except RuntimeError as error:
        pytest.fail(str(error))
    try:
        yield Target(server.url, tokens.issue(tokens.OPERATOR), _local_users(server))
    finally:
        server.stop()


@pytest.fixture(scope="session")
def operator(target) -> Iterator[Client]:
    with target.client(target.operator_token) as client:
        yield client


def new_id(prefix: str = "e2e") -> str:
    return f"{prefix}-{secrets.token_hex(4)}"


def delete_org(client: Client, org_id: str, timeout: float = waits.JOB_SECONDS) -> None:
    """Delete the org and wait until it is gone: on AWS a delete that outgrows its request answers
    202 and finishes from a queue. One still there after ``timeout`` fails, naming the org, rather
    than being left behind unnoticed."""
    try:
        accepted = client.delete_org(org_id)
    except NotFound:
        return
    if accepted is not None:
        waits.eventually(lambda: _gone(client, org_id), bool, f"org {org_id}'s delete (202) to finish", timeout)


def _gone(client: Client, org_id: str) -> bool:
    try:
        client.get_org(org_id)
    except NotFound:
        return True
    return False


def limits_ready(api: Client, org_id: str, timeout: float = waits.JOB_SECONDS) -> None:
    """Wait until the org's API key is in its usage plan. Until then a stack answers the org's users
    ``503`` (docs/LIMITS.md), which the client retries for about 20 s only (5 attempts, Retry-After 5):
    a new org's key comes from the tenant-keys consumer, through EventBridge and SQS (cold on a fresh
    stack, paced at 0.5 s a key, behind the keys of the orgs the suite made before), and reaches API
    Gateway's fleet after that. Operators have their own key from the start; locally it is at once."""
    waits.eventually(lambda: _limits_set(api, org_id), bool, f"org {org_id}'s API key (503 until then)", timeout)


def _limits_set(api: Client, org_id: str) -> bool:
    try:
        api.get_org(org_id)
    except ServiceUnavailable:
        return False
    return True


def delete_orgs(client: Client, org_ids: list[str]) -> None:
    """Delete each org, the others too when one fails; then raise the first failure."""
    failures = []
    for org_id in org_ids:
        try:
            delete_org(client, org_id)
        except Exception as failed:
            failures.append(failed)
    if failures:
        raise failures[0]


@dataclass
class Tenants:
    """Org A (admin ``root``, members ``alice`` and ``amy``, a ticket each) and org B (admin ``bob``,
    one ticket); a Client per caller, None where no token can be had."""

    a: str
    b: str
    tickets: dict[str, str]
    callers: dict[str, Client | None]


@pytest.fixture(scope="session")
def tenants(target, operator) -> Iterator[Tenants]:
    a, b = new_id(), new_id()
    created = []
    try:
        for org_id in (a, b):
            operator.create_org(org_id, name=f"E2E {org_id}", plan="enterprise")
            created.append(org_id)
        people = [(a, "root", "admin"), (a, "alice", "member"), (a, "amy", "member"), (b, "bob", "admin")]
        for org_id, user_id, role in people:
            operator.create_user(org_id, user_id, name=user_id.title(), email=f"{user_id}@{org_id}.example", role=role)
        operator.create_ticket(b, "bob", "bolt secret")
        tickets = {user: operator.create_ticket(a, user, f"{user}'s ticket").ticket_id for user in ("alice", "amy")}

        def client(org_id: str, user_id: str, role: str) -> Client | None:
            token = target.token_for(org_id, user_id, role)
            return target.client(token) if token else None

        callers = {
            "operator": operator,
            "admin_a": client(a, "root", "admin"),
            "member_a": client(a, "alice", "member"),
            "admin_b": client(b, "bob", "admin"),
            "no_token": target.client(None),
        }
        for org_id, who in ((a, "admin_a"), (b, "admin_b")):
            if (admin := callers[who]) is not None:
                limits_ready(admin, org_id)
        yield Tenants(a, b, tickets, callers)
        for caller in callers.values():
            if caller is not None and caller is not operator:
                caller.close()
    finally:
        delete_orgs(operator, created)
