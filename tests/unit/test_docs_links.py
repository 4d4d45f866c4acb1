"""Every relative link in README.md and docs/*.md leads somewhere: a file or folder of the checkout and,
for a ``#anchor``, a heading of that markdown file. The README names the files a request passes
through by link, so a rename that forgets the docs fails here."""

import re
import unicodedata
from pathlib import Path

import pytest

from local import ROOT

PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
_CODE = re.compile(r"(`+).+?\1", re.S)
_INLINE = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s.*)?$", re.M)
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$", re.M)
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def _prose(text: str) -> str:
    """The text without code blocks and code spans, where brackets are not links."""
    return _CODE.sub("", _FENCE.sub("", text))


def links(text: str) -> list[str]:
    prose = _prose(text)
    return [*_INLINE.findall(prose), *_REFERENCE.findall(prose)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text as rendered, lowercased, punctuation dropped
    (letters, digits, marks, ``_``, ``-`` and spaces stay), each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text, not its target
    text = re.sub(r"<[^>]+>", "", text).replace("`", "")
    text = re.sub(r"(\*\*?)(\S.*?\S|\S)\1", r"\2", text)
    kept = (c for c in text.lower() if c in "_- " or unicodedata.category(c)[0] in "LMN")
    return "".join(kept).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading's anchor; a repeated one gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    for _, heading in _HEADING.findall(_FENCE.sub("", text)):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken(page: Path, root: Path = ROOT) -> list[str]:
    problems = []
    for link in links(page.read_text()):
        if _SCHEME.match(link):
            continue
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            problems.append(f"{link}: no file {target}")
        elif root not in (target, *target.parents):
            problems.append(f"{link}: outside the checkout")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target.read_text()):
            problems.append(f"{link}: no heading #{anchor} in {target.name}")
    return problems


def test_there_are_pages_to_check():
    assert ROOT / "README.md" in PAGES and len(PAGES) > 3


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    assert broken(page) == []


def test_the_readme_is_the_first_hour_not_the_reference():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 200, "move reference material to docs/"


def test_the_readme_links_every_docs_page():
    linked = {(ROOT / link.partition("#")[0]).resolve() for link in links((ROOT / "README.md").read_text())}

    assert [page.name for page in PAGES if page.parent.name == "docs" and page not in linked] == []


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Follow one request", "follow-one-request"),
        ("The client and `cpctl`", "the-client-and-cpctl"),
        ("Check a deployment: `make e2e`", "check-a-deployment-make-e2e"),
        ("One function in a container: `sam local invoke`", "one-function-in-a-container-sam-local-invoke"),
        ("Guarantees, and what a client should do", "guarantees-and-what-a-client-should-do"),
        ("Pages, cursors and `If-Match`", "pages-cursors-and-if-match"),
        ("**Bold** and [a link](x.md)", "bold-and-a-link"),
        ("snake_case and 1\u20132 \u2713", "snake_case-and-12-"),  # an en dash and a check mark drop out
    ],
)
def test_anchors_follow_githubs_slugs(heading, anchor):
    assert slug(heading) == anchor


def test_a_broken_link_is_found(tmp_path):
    root = tmp_path / "checkout"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "A.md").write_text("# A page\n\n## Its part\n")
    (tmp_path / "x.md").write_text("")
    page = root / "README.md"
    page.write_text(
        "[ok](docs/A.md) [ok](docs/A.md#its-part) [ok](#top) [ok](docs/) [web](https://example.com)\n"
        "`[in code](gone.md)`\n\n```sh\n[in a block](gone.md)\n```\n\n# Top\n\n"
        "[gone](docs/B.md) [no heading](docs/A.md#no-part) [self](#nowhere) [out](../x.md)\n\n"
        "[ref]: docs/C.md\n"
    )

    found = [problem.split(":")[0] for problem in broken(page, root=root)]

    assert found == ["docs/B.md", "docs/A.md#no-part", "#nowhere", "../x.md", "docs/C.md"]
