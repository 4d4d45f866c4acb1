"""Request bodies read strictly, as JSON text (RFC 8259) is defined: UTF-8, and an object's names
unique. Anything else is 400 ``invalid_json`` before a model sees it, so nothing is stored.

Where bytes become text: API Gateway treats a payload whose media type is not one of the API's
binary media types (this API configures none) as UTF-8 text and hands it to a proxy integration as a
string (AWS's "Binary media types for REST APIs in API Gateway"); a binary one would come
base64-encoded. Bytes that are not UTF-8 reach the function as U+FFFD, the replacement character
(API Gateway does not refuse them; that they are replaced is observed behaviour, not documented),
as they do through ``make run``'s gateway (local/server.py decodes the same way). The function
cannot tell those from a U+FFFD the client sent, so a text body that holds one is refused: nobody
types it, and a client that means it can send it escaped (``\\ufffd``). A base64-encoded body is
decoded here, strictly, rather than by Powertools (whose ``decoded_body`` would raise a 500).

``\\ud800``-style escapes of half a surrogate pair parse to a string that is no Unicode text (it
cannot be encoded as UTF-8, so DynamoDB could not store it): refused too, as is an integer longer
than Python reads (``sys.get_int_max_str_digits``, 4,300 digits), which it refuses with a bare
ValueError that was a 500. So are ``NaN``, ``Infinity`` and ``-Infinity``, which Python's parser
reads as numbers and RFC 8259 does not have: a model answered them 422, but a user import, whose rows
are any objects until the import judges each, was stored (202) with one. And so is a body nested
deeper than ``MAX_DEPTH``: the parser reads about 1,000 levels, but pydantic serializes no more than
255, which an Idempotency-Key's record asks of a user import's rows (a 500, where the same body
without a key was a 202).
"""

import base64
import binascii
import json
from typing import Any

from controlplane.models.errors import InvalidJson, TooDeep

_REPLACEMENT = "\ufffd"
NOT_UTF8 = "The request body is not valid UTF-8"
TOO_DEEP = "The request body is nested too deeply"
# Levels of objects and arrays a body may have. No request of the API has more than 3 (a user
# import's body, its rows, a row); 32 is DynamoDB's own limit for a stored document.
MAX_DEPTH = 32


def size(event: dict[str, Any]) -> int:
    """The body's size in bytes, as a route's limit counts them: its UTF-8 for text (a character may
    be up to 4), what it decodes to when base64-encoded."""
    body = event.get("body") or ""
    if event.get("isBase64Encoded"):
        return len(body) // 4 * 3 - body[-2:].count("=")
    return len(body) if body.isascii() else len(body.encode("utf-8", "surrogatepass"))


def as_text(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` with a base64-encoded body decoded to text, strictly (400 if it is not UTF-8)."""
    if not event.get("isBase64Encoded") or not event.get("body"):
        return event
    try:
        text = base64.b64decode(event["body"], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise InvalidJson(NOT_UTF8) from None
    return {**event, "body": text, "isBase64Encoded": False}


def loads(raw: str) -> Any:
    """The JSON value of a text body; ``InvalidJson`` for what RFC 8259 does not allow and Python's
    parser lets through (it keeps the last of a repeated key)."""
    if _REPLACEMENT in raw:
        raise InvalidJson(f"{NOT_UTF8} (it holds U+FFFD, what invalid bytes are replaced with)")
    try:
        value = json.loads(raw, object_pairs_hook=_unique_names, parse_constant=_no_constant)
    except json.JSONDecodeError:
        raise  # the resolver's own 400
    except ValueError:  # an integer of more digits than int() reads (4,300): valid JSON, and no value of ours
        raise InvalidJson("The request body holds a number too long to read") from None
    _text_within_depth(value)
    return value


def _no_constant(name: str) -> Any:
    raise InvalidJson(f"The request body holds {name}, which is not a JSON value")


def _unique_names(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        repeated = next(name for name, _ in pairs if name in seen or seen.add(name))  # type: ignore[func-returns-value]
        raise InvalidJson(f"The request body repeats the name {json.dumps(repeated)[:80]} in an object")
    return found


def _text_within_depth(value: Any) -> None:
    """Every string of the value (names too) is Unicode text, and it nests at most ``MAX_DEPTH``
    levels. Iterative: the parser allows a depth that recursion here might not."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                raise TooDeep(TOO_DEEP)
            children = [*item, *item.values()] if isinstance(item, dict) else item  # a dict's names too
            pending.extend((child, depth + 1) for child in children)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidJson("The request body holds an escaped lone surrogate (\\ud800 to \\udfff)") from None
