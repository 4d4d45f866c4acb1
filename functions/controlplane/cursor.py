"""Opaque, tamper-proof pagination cursors.

A cursor is ``base64url(json) . base64url(hmac_sha256(json))``. The JSON holds the list it belongs to
(its *scope*, e.g. ``tickets:acme:alice``) and DynamoDB's LastEvaluatedKey. A cursor is accepted only
if the signature verifies and the scope is the one of the list being read, so a client can neither
forge a start key nor carry a cursor from one list (or tenant) to another. The key condition of a
query always comes from the path; the cursor only says where to resume.
"""

import base64
import binascii
import hashlib
import hmac
import json

from controlplane.errors import InvalidCursor


def encode(scope: str, last_key: dict[str, str] | None, secret: bytes) -> str | None:
    if not last_key:
        return None
    payload = json.dumps({"scope": scope, "key": last_key}, separators=(",", ":"), sort_keys=True).encode()
    return f"{_b64(payload)}.{_b64(_sign(payload, secret))}"


def decode(scope: str, token: str | None, secret: bytes) -> dict[str, str] | None:
    if token is None:
        return None
    try:
        body, signature = token.split(".")
        payload = _unb64(body)
        valid = hmac.compare_digest(_unb64(signature), _sign(payload, secret))
    except (ValueError, binascii.Error):
        valid = False
    if not valid:
        raise InvalidCursor("The cursor is malformed or was altered")
    data = json.loads(payload)
    if data["scope"] != scope:
        raise InvalidCursor("The cursor belongs to another list")
    return data["key"]


def _sign(payload: bytes, secret: bytes) -> bytes:
    return hmac.new(secret, payload, hashlib.sha256).digest()


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
