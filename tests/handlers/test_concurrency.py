"""Optimistic concurrency: ETag on single-item reads and writes, If-Match on PATCH and DELETE."""

import pytest

from controlplane.logic import cascade
from tests.api import call, create_org, create_ticket, create_user


@pytest.fixture
def acme(table):
    create_org("acme")
    create_user("acme", "alice")
    return create_ticket("acme", "alice").body["ticket_id"]


def _resources(ticket_id: str) -> list[tuple[str, dict]]:
    return [
        ("/orgs/acme", {"name": "Renamed"}),
        ("/orgs/acme/users/alice", {"name": "Renamed"}),
        (f"/orgs/acme/tickets/{ticket_id}", {"subject": "Renamed"}),
    ]


def test_create_get_and_patch_carry_the_version_as_etag(acme):
    assert create_org("beta").headers["ETag"] == '"1"'
    for path, change in _resources(acme):
        assert call("GET", path).headers["ETag"] == '"1"'
        assert call("PATCH", path, change).headers["ETag"] == '"2"'
        assert call("GET", path).headers["ETag"] == '"2"'


@pytest.mark.parametrize("path, include", [("/orgs/acme", "users"), ("/orgs/acme/users/alice", "tickets")])
def test_an_include_answer_carries_no_etag(acme, path, include):
    # docs/API.md: an include= answer is not one versioned resource, so it has no ETag to send back
    # in If-Match. The document gives its 200 the plain GET's optional ETag, so only this sees one.
    reply = call("GET", path, query={"include": include})

    assert reply.status == 200
    assert "ETag" not in reply.headers


@pytest.mark.parametrize("header", ["If-Match", "if-match"])
def test_patch_with_current_etag_applies(acme, header):
    for path, change in _resources(acme):
        reply = call("PATCH", path, change, headers={header: ['"1"']})

        assert reply.status == 200
        assert reply.body["version"] == 2


def test_patch_with_stale_etag_returns_412_and_changes_nothing(acme):
    for path, change in _resources(acme):
        call("PATCH", path, {"name": "First"} if "tickets" not in path else {"subject": "First"})
        before = call("GET", path).body

        reply = call("PATCH", path, change, headers={"If-Match": ['"1"']})

        assert reply.status == 412
        assert reply.error_code == "precondition_failed"
        assert call("GET", path).body == before


def test_a_version_the_resource_never_had_is_412_without_saying_it_had_it(acme):
    for path, change in _resources(acme):
        reply = call("PATCH", path, change, headers={"If-Match": ['"99"']})

        assert reply.status == 412
        # Not "no longer 99": version 1 is the only one there has been.
        assert reply.body["error"]["message"] == "The resource is not at version 99: read it again for its current ETag"


def test_an_if_match_of_version_0_is_412_not_a_write_without_if_match(acme):
    # Given acme's org, user and ticket, each at version 1 (no resource is ever at version 0)
    for path, change in _resources(acme):
        # When a client writes with If-Match "0"
        reply = call("PATCH", path, change, headers={"If-Match": ['"0"']})

        # Then the write is refused as for any version the resource is not at, and changes nothing
        assert reply.status == 412, reply.body
        assert call("GET", path).body["version"] == 1


@pytest.mark.parametrize("etag", ["*", 'W/"1"'])
def test_wildcard_and_weak_etags_of_the_current_version_apply(acme, etag):
    reply = call("PATCH", "/orgs/acme", {"name": "X"}, headers={"If-Match": [etag]})

    assert reply.status == 200
    assert (reply.body["name"], reply.body["version"]) == ("X", 2)
    assert reply.headers["ETag"] == '"2"'


def test_a_weak_etag_of_an_older_version_returns_412(acme):
    # Given the org moved on to version 2
    call("PATCH", "/orgs/acme", {"name": "Second"})

    # When a client sends the weak form of version 1
    reply = call("PATCH", "/orgs/acme", {"name": "X"}, headers={"If-Match": ['W/"1"']})

    # Then it is compared, not ignored: 412, and the org is as version 2 left it
    assert reply.status == 412
    stored = call("GET", "/orgs/acme").body
    assert (stored["name"], stored["version"]) == ("Second", 2)


def test_the_wildcard_applies_to_any_version(acme):
    call("PATCH", "/orgs/acme", {"name": "Second"})

    reply = call("PATCH", "/orgs/acme", {"name": "X"}, headers={"If-Match": ["*"]})

    assert reply.status == 200
    assert (reply.body["name"], reply.body["version"]) == ("X", 3)


# "²" is a digit to str.isdigit but not to int(); 40 digits are more than a DynamoDB number holds.
@pytest.mark.parametrize("etag", ["abc", '"1", "2"', '""', '"\u00b2"', '"\u0661"', '"' + "9" * 40 + '"'])
def test_malformed_if_match_returns_412_and_changes_nothing(acme, etag):
    reply = call("PATCH", "/orgs/acme", {"name": "X"}, headers={"If-Match": [etag]})

    assert reply.status == 412
    assert call("GET", "/orgs/acme").body["version"] == 1


def test_patch_with_if_match_on_missing_item_returns_404(acme):
    reply = call("PATCH", "/orgs/ghost", {"name": "X"}, headers={"If-Match": ['"1"']})

    assert reply.status == 404


def test_delete_ticket_with_stale_etag_returns_412_and_keeps_it(acme):
    call("PATCH", f"/orgs/acme/tickets/{acme}", {"status": "solved"})

    reply = call("DELETE", f"/orgs/acme/tickets/{acme}", headers={"If-Match": ['"1"']})

    assert reply.status == 412
    assert call("GET", f"/orgs/acme/tickets/{acme}").status == 200
    assert call("DELETE", f"/orgs/acme/tickets/{acme}", headers={"If-Match": ['"2"']}).status == 204


def test_delete_user_with_stale_etag_returns_412_and_keeps_their_tickets(acme):
    call("PATCH", "/orgs/acme/users/alice", {"name": "Alice 2"})

    reply = call("DELETE", "/orgs/acme/users/alice", headers={"If-Match": ['"1"']})

    assert reply.status == 412
    assert call("GET", f"/orgs/acme/tickets/{acme}").status == 200
    assert call("GET", "/orgs/acme/users/alice").status == 200


def test_a_user_changed_after_their_delete_removed_the_sign_in_is_deleted_not_left_without_one(acme, monkeypatch):
    # Given a delete at the user's version whose sign-in removal is followed by a PATCH of the user
    patched = []
    remove_sign_in = cascade.remove_sign_in

    def patched_meanwhile(org_id, user_id):
        remove_sign_in(org_id, user_id)
        patched.append(call("PATCH", "/orgs/acme/users/alice", {"name": "Alice 2"}).status)

    monkeypatch.setattr(cascade, "remove_sign_in", patched_meanwhile)

    # When the delete goes on
    reply = call("DELETE", "/orgs/acme/users/alice", headers={"If-Match": ['"1"']})

    # Then it completes: no 412 after the sign-in went, which left a user who could never sign in
    assert patched == [200]
    assert reply.status == 204, reply.body
    assert call("GET", "/orgs/acme/users/alice").status == 404
    assert call("GET", f"/orgs/acme/tickets/{acme}").status == 404


def test_delete_org_with_stale_etag_returns_412_and_keeps_everything(acme):
    call("PATCH", "/orgs/acme", {"name": "Acme 2"})

    reply = call("DELETE", "/orgs/acme", headers={"If-Match": ['"1"']})

    assert reply.status == 412
    assert call("GET", "/orgs/acme/users/alice").status == 200
    assert call("GET", f"/orgs/acme/tickets/{acme}").status == 200
    assert call("DELETE", "/orgs/acme", headers={"If-Match": ['"2"']}).status == 204
