"""Text a person writes, as the API accepts it: no control characters.

A NUL, an escape sequence or a C1 code (U+0080 to U+009F, what Latin-1 bytes decoded as UTF-8
become) in a name is never what the writer meant. It hides in logs, breaks terminals (cpctl prints
these fields) and looks like a different value than it is. So each field a person types is refused
with 422 when it holds one:

- ``ONE_LINE``: names, subjects, suspension reasons and tags: none of C0 (U+0000 to U+001F, tab
  and line breaks included), DEL (U+007F) or C1 (U+0080 to U+009F).
- ``LINES``: a ticket's description, which is prose: tab, line feed and carriage return are allowed
  (a browser's text area sends CRLF), the other control characters are not.

Patterns, not validators, so the OpenAPI document shows the rule to clients (and schemathesis
generates from it), and ``models.problems`` says it in plain words. Leading and trailing whitespace
is stripped before the pattern is checked, as it always was.
"""

from typing import Final

ONE_LINE: Final = r"^[^\x00-\x1F\x7F-\x9F]*$"
LINES: Final = r"^[^\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F]*$"
