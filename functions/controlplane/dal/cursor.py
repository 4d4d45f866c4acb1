"""Opaque, tamper-proof pagination cursors.

A cursor is ``base64url(id) . base64url(hmac_sha256(scope, id))``: the id of the last item of the
page (or, for a list whose order is not by id, its place: an activity entry's log position, a unit
listing's move count, unit creation and path), and a signature over it and the list it belongs to
(its *scope*, e.g. ``tickets:acme:alice``).
Everything else a start key needs comes from the path, so a cursor shows no key attribute, a client
can neither forge a start key nor carry a cursor from one list (or tenant) to another, and the key
condition of a query always comes from the path. Only the spelling ``encode`` gives is read: padded,
standard-alphabet or otherwise re-encoded copies of a cursor are refused like altered ones.
"""

import base64
import binascii
import hashlib
import hmac
from typing import Any

from controlplane import config
from controlplane.models.errors import InvalidCursor

INVALID = "The cursor is malformed, was altered, or belongs to another list"


def encode(scope: str, last_id: str, secret: bytes) -> str:
    return f"{_b64(last_id.encode())}.{_b64(_sign(scope, last_id, secret))}"


def decode(scope: str, token: str | None, secret: bytes) -> str | None:
    """The id to resume after; None for the first page (no cursor, or an empty one)."""
    if not token:
        return None
    try:
        body, signature = token.split(".")
        last_id = _unb64(body).decode()
        valid = hmac.compare_digest(_unb64(signature), _sign(scope, last_id, secret))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        valid = False
    if not valid:
        raise InvalidCursor(INVALID)
    return last_id


def _sign(scope: str, last_id: str, secret: bytes) -> bytes:
    return hmac.new(secret, f"{scope}\n{last_id}".encode(), hashlib.sha256).digest()


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    """The bytes of unpadded base64url ``text``, only in the spelling ``_b64`` gives them: the decoder
    itself also takes padding, ``+`` and ``/``, skips other characters and ignores a last character's
    spare bits, so one cursor would have many spellings."""
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(raw) != text:
        raise ValueError("not the canonical spelling")
    return raw


def resume_after(scope: str, cursor_token: str | None) -> str | None:
    """The id of the item a page resumes after; None for the first page."""
    return decode(scope, cursor_token, config.settings().cursor_secret)


def next_cursor(scope: str, page: list[dict[str, Any]], id_attribute: str, more: bool) -> str | None:
    """A cursor after the page's last item, if DynamoDB said there is more."""
    if not more:
        return None
    return encode(scope, page[-1][id_attribute] if page else "", config.settings().cursor_secret)
