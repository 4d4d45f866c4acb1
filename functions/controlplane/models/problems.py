"""What failed validation, said in plain words: the API's ``details`` and cpctl's own checks show the
same messages. pydantic's own read "Value error, ..." or quote a regular expression."""

from typing import Any

from controlplane.models.ids import EMAIL_PATTERN, SLUG_PATTERN, ULID_PATTERN

# A pattern's meaning, by the pattern itself: the id types and the e-mail address all use these.
_PATTERNS = {
    SLUG_PATTERN: "must be 1 to 63 lower-case letters, digits or dashes, not starting or ending with a dash",
    ULID_PATTERN: "not a ticket id (26 characters, as the API gave them)",
    EMAIL_PATTERN: "not a valid e-mail address",
}
_TYPES = {
    "extra_forbidden": "not a field of this request",
    "missing": "required",
}


def plain(problem: dict[str, Any]) -> str:
    """The message of one pydantic error (``type``, ``msg`` and ``ctx``), as a person reads it."""
    kind, message = problem.get("type", ""), str(problem.get("msg", ""))
    if kind == "string_pattern_mismatch":
        pattern = (problem.get("ctx") or {}).get("pattern")
        return _PATTERNS.get(str(pattern), "not in the expected format")
    if kind in _TYPES:
        return _TYPES[kind]
    return message.removeprefix("Value error, ").removeprefix("Assertion failed, ")


def field(location: list[str | int] | tuple[str | int, ...]) -> str:
    """Where, as a person names it: ``email``, ``tags.2``; the request's part (body, query...) left out."""
    names = [str(part) for part in location]
    if names and names[0] in ("body", "query", "path", "header"):
        names = names[1:]
    return ".".join(names) or "body"
