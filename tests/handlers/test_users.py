import boto3
import pytest

from tests.api import call, create_org, create_ticket, create_user


def test_create_user_returns_201_with_defaults(table):
    create_org("acme")

    reply = create_user("acme", "alice")

    assert reply.status == 201
    assert reply.headers["Location"] == "/local/orgs/acme/users/alice"
    assert reply.body["role"] == "member"
    assert reply.body["org_id"] == "acme"
    assert reply.body["email"] == "alice@example.com"
    assert reply.body["version"] == 1


def test_create_user_in_missing_org_returns_404_and_writes_nothing(table):
    reply = create_user("ghost", "alice")

    assert reply.status == 404
    assert "ghost" in reply.body["error"]["message"]
    assert call("GET", "/orgs/ghost/users/alice").status == 404


def test_create_existing_user_returns_409_and_leaves_it_unchanged(table):
    create_org("acme")
    create_user("acme", "alice", name="Alice", role="admin")

    reply = create_user("acme", "alice", name="Mallory")

    assert reply.status == 409
    assert reply.error_code == "already_exists"
    stored = call("GET", "/orgs/acme/users/alice").body
    assert (stored["name"], stored["role"]) == ("Alice", "admin")


def test_get_user_returns_it(table):
    create_org("acme")
    create_user("acme", "alice")

    reply = call("GET", "/orgs/acme/users/alice")

    assert reply.status == 200
    assert reply.body["user_id"] == "alice"
    assert "GSI1PK" not in reply.body


def test_get_user_of_another_org_returns_404(table):
    create_org("acme")
    create_org("other")
    create_user("acme", "alice")

    assert call("GET", "/orgs/other/users/alice").status == 404


def test_get_missing_user_returns_404(table):
    create_org("acme")

    assert call("GET", "/orgs/acme/users/ghost").status == 404


def test_get_user_with_tickets_returns_user_and_newest_tickets_first(table):
    create_org("acme")
    create_user("acme", "alice")
    ids = [create_ticket("acme", "alice", subject=f"t{i}").body["ticket_id"] for i in range(3)]

    reply = call("GET", "/orgs/acme/users/alice", query={"include": "tickets"})

    assert reply.status == 200
    assert reply.body["user"]["user_id"] == "alice"
    assert [t["ticket_id"] for t in reply.body["tickets"]] == ids[::-1]
    assert reply.body["next_cursor"] is None


def test_get_missing_user_with_tickets_returns_404(table):
    create_org("acme")

    assert call("GET", "/orgs/acme/users/ghost", query={"include": "tickets"}).status == 404


def test_list_users_returns_only_users(table):
    create_org("acme")
    create_user("acme", "bob")
    create_user("acme", "alice")

    reply = call("GET", "/orgs/acme/users")

    assert reply.status == 200
    assert [u["user_id"] for u in reply.body["items"]] == ["alice", "bob"]


def test_list_users_of_org_without_users_is_empty(table):
    create_org("acme")

    reply = call("GET", "/orgs/acme/users")

    assert reply.status == 200
    assert reply.body == {"items": [], "next_cursor": None}


def test_patch_user_changes_fields_and_bumps_version(table):
    create_org("acme")
    create_user("acme", "alice")

    reply = call("PATCH", "/orgs/acme/users/alice", {"role": "admin", "email": "a@acme.io"})

    assert reply.status == 200
    assert (reply.body["role"], reply.body["email"], reply.body["version"]) == ("admin", "a@acme.io", 2)


def test_patch_missing_user_returns_404_and_creates_nothing(table):
    create_org("acme")

    assert call("PATCH", "/orgs/acme/users/ghost", {"name": "Ghost"}).status == 404
    assert call("GET", "/orgs/acme/users/ghost").status == 404


def test_delete_user_removes_user_and_their_tickets_only(table):
    create_org("acme")
    create_user("acme", "alice")
    create_user("acme", "bob")
    gone = create_ticket("acme", "alice").body["ticket_id"]
    kept = create_ticket("acme", "bob").body["ticket_id"]

    reply = call("DELETE", "/orgs/acme/users/alice")

    assert reply.status == 204
    assert call("GET", "/orgs/acme/users/alice").status == 404
    assert call("GET", f"/orgs/acme/tickets/{gone}").status == 404
    assert call("GET", f"/orgs/acme/tickets/{kept}").status == 200
    assert call("GET", "/orgs/acme").status == 200


def test_delete_missing_user_returns_404(table):
    create_org("acme")

    assert call("DELETE", "/orgs/acme/users/ghost").status == 404


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # SQS exists on moto only
def test_delete_missing_user_with_a_queue_is_404_after_one_read_and_queues_nothing(
    table, deletions_queue, dynamodb_calls
):
    """Where a queue sweeps a deleted user's tickets, the delete asked again sweeps nothing itself
    (make run's does: tests/handlers/test_cascade.py)."""
    create_org("acme")
    dynamodb_calls.clear()

    assert call("DELETE", "/orgs/acme/users/ghost").status == 404
    assert dynamodb_calls == ["GetItem"]
    assert boto3.client("sqs").receive_message(QueueUrl=deletions_queue).get("Messages", []) == []
