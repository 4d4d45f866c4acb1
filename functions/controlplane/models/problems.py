"""What failed validation, said in plain words: the API's ``details`` and cpctl's own checks show the
same messages. pydantic's own read "Value error, ..." or quote a regular expression."""

from typing import Any

from controlplane.models import text
from controlplane.models.ids import EMAIL_PATTERN, SLUG_PATTERN, ULID_PATTERN

# A pattern's meaning, by the pattern itself: the id types and the e-mail address all use these.
_PATTERNS = {
    SLUG_PATTERN: "must be 1 to 63 lower-case letters, digits or dashes, not starting or ending with a dash",
    ULID_PATTERN: "not an id the API gave (26 characters: digits and capital letters)",  # tickets, imports
    EMAIL_PATTERN: "not a valid e-mail address",
    text.ONE_LINE: "must not contain control characters (U+0000 to U+001F, U+007F to U+009F), line breaks included",
    text.LINES: "must not contain control characters other than tab and line breaks",
}
_TYPES = {
    "extra_forbidden": "not a field of this request",
    "missing": "required",
}


def plain(problem: dict[str, Any]) -> str:
    """The message of one pydantic error (``type``, ``msg`` and ``ctx``), as a person reads it."""
    kind, message = problem.get("type", ""), str(problem.get("msg", ""))
    if kind == "string_pattern_mismatch":
        return malformed(str((problem.get("ctx") or {}).get("pattern")))
    if kind in _TYPES:
        return _TYPES[kind]
    return message.removeprefix("Value error, ").removeprefix("Assertion failed, ")


def malformed(pattern: str) -> str:
    """What a value that does not match ``pattern`` gets wrong, wherever it was sent (path or body)."""
    return _PATTERNS.get(pattern, "not in the expected format")


def field(location: list[str | int] | tuple[str | int, ...]) -> str:
    """Where, as a person names it: ``email``, ``tags.2``; the request's part (body, query...) left out."""
    names = [str(part) for part in location]
    if names and names[0] in ("body", "query", "path", "header"):
        names = names[1:]
    return ".".join(names) or "body"
