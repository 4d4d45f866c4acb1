"""Identifier formats and the server-side ticket id generator."""

import os
import threading
import time

# Client-chosen ids: lower-case DNS-label-like slugs, so they can never contain a key separator.
SLUG_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$"
# The implicit root of every org's tree of units (issue 27): a unit id no one can create.
ROOT_UNIT = "root"
# A canonical ULID in Crockford base32; the first character is at most 7 (128-bit limit).
ULID_PATTERN = r"^[0-7][0-9A-HJKMNP-TV-Z]{25}$"
# email-validator is not in the Powertools layer, so EmailStr is out; this is the pragmatic
# "something@domain.tld" check that a control plane needs before Cognito sends the invite. No
# control character either (models.text says why).
EMAIL_PATTERN = r"^[^@\s\x00-\x1F\x7F-\x9F]{1,64}@[^@\s\x00-\x1F\x7F-\x9F]+\.[^@\s\x00-\x1F\x7F-\x9F]+$"

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_RANDOM_BITS = 80
_lock = threading.Lock()
_last = 0


def ulid_floor(milliseconds: int) -> str:
    """The smallest ULID of a millisecond: every id made from then on sorts after it."""
    return _encode(milliseconds << _RANDOM_BITS)


def new_ulid() -> str:
    """A ULID that is also monotonic within this process.

    Written here rather than imported from python-ulid because the functions may only rely on
    Powertools and boto3 at run time (the tests check the result with python-ulid). Two ids made
    in the same millisecond still sort in creation order: the second is the first plus one.
    """
    global _last
    with _lock:
        candidate = (time.time_ns() // 1_000_000) << _RANDOM_BITS | int.from_bytes(os.urandom(10), "big")
        _last = candidate if candidate > _last else _last + 1
        value = _last
    return _encode(value)


def _encode(value: int) -> str:
    return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))
