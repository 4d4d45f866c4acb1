"""Keys, cursors and ids: no AWS, no handler."""

import base64
import time

import pytest
from ulid import ULID

from controlplane.dal import cursor, keys
from controlplane.models.errors import InvalidCursor
from controlplane.models.ids import new_ulid, ulid_floor

SECRET = b"unit-secret"


def test_keys_follow_the_documented_design():
    assert keys.org_keys("acme") == {"PK": "ORG#acme", "SK": "METADATA#acme", "GSI1PK": "ORGS", "GSI1SK": "ORG#acme"}
    assert keys.user_keys("acme", "alice") == {
        "PK": "ORG#acme",
        "SK": "USER#alice",
        "GSI1PK": "ORG#acme#USER#alice",
        "GSI1SK": "USER#alice",
        "GSI2PK": "ORG#acme#MEMBERS",
        "GSI2SK": "USER#!alice",
    }
    assert keys.user_keys("acme", "alice", ("eng", "platform"))["GSI2SK"] == "USER#eng#platform#!alice"
    assert keys.unit_keys("acme", ("eng", "platform")) == {
        "PK": "ORG#acme#UNITS",
        "SK": "UNIT#platform",
        "GSI1PK": "ORG#acme#UNITS",
        "GSI1SK": "UNIT#eng#platform#",
    }
    assert keys.ticket_keys("acme", "alice", "01T") == {
        "PK": "ORG#acme#TICKET#01T",
        "SK": "TICKET#01T",
        "GSI1PK": "ORG#acme#USER#alice",
        "GSI1SK": "TICKET#01T",
    }


def test_org_metadata_sorts_before_users_and_user_after_its_tickets():
    assert keys.org_key("a")["SK"] < keys.user_key("a", "0")["SK"]
    assert keys.ticket_keys("a", "u", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ")["GSI1SK"] < keys.user_keys("a", "u")["GSI1SK"]


def test_new_ulid_is_a_valid_ulid_with_the_current_time():
    before = int(time.time() * 1000)

    ticket_id = new_ulid()

    parsed = ULID.from_str(ticket_id)
    assert str(parsed) == ticket_id
    assert before <= parsed.milliseconds <= int(time.time() * 1000)


def test_new_ulids_are_unique_and_sort_in_creation_order():
    ids = [new_ulid() for _ in range(10_000)]

    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)


def test_ulid_floor_is_the_first_ulid_of_its_millisecond():
    now = int(time.time() * 1000)

    floor = ulid_floor(now)

    assert ULID.from_str(floor).milliseconds == now and floor.endswith("0" * 16)
    assert ulid_floor(now - 1) < floor < new_ulid()


def test_cursor_round_trips_within_its_scope():
    token = cursor.encode("users:acme", "alice", SECRET)

    assert cursor.decode("users:acme", token, SECRET) == "alice"


def test_cursor_is_rejected_in_another_scope():
    token = cursor.encode("users:acme", "a", SECRET)

    with pytest.raises(InvalidCursor):
        cursor.decode("users:other", token, SECRET)


def test_cursor_is_rejected_in_a_scope_that_runs_on_into_its_id():
    # "users:acme" then "ali" reads as "users:acm" then "eali": signed without a separator, the
    # signature of one would carry over to the other
    signature = cursor.encode("users:acme", "ali", SECRET).split(".")[1]
    moved = f"{base64.urlsafe_b64encode(b'eali').decode().rstrip('=')}.{signature}"

    with pytest.raises(InvalidCursor):
        cursor.decode("users:acm", moved, SECRET)


def test_cursor_signed_with_another_secret_is_rejected():
    token = cursor.encode("orgs", "acme", b"other-secret")

    with pytest.raises(InvalidCursor):
        cursor.decode("orgs", token, SECRET)
