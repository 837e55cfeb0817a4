"""The README and the pages in docs/ hold together: every relative link leads to a file that exists (and an
`#anchor` into one of our Markdown pages to a heading it has), the README stays an overview, and no page
sends a reader to a folder that a clone does not have.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 260
"""The README is the overview: quickstart, tour and the index of docs/; the reference lives in docs/."""

FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.S | re.M)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.M)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose(text: str) -> str:
    """`text` without fenced code blocks and code spans, where brackets are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text lower-cased, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").strip().lower()
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor of a Markdown page's headings, a repeated heading numbered as GitHub numbers it."""
    seen: dict[str, int] = {}
    found = set()
    for match in HEADING.finditer(FENCE.sub("", page.read_text(encoding="utf-8"))):
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(page: Path) -> list[str]:
    """The relative link targets of a page (web addresses left out)."""
    return [target for target in LINK.findall(prose(page.read_text(encoding="utf-8")))
            if not SCHEME.match(target)]


def broken_links(page: Path) -> list[str]:
    """Each relative link of `page` that names no file, or a heading its Markdown page does not have."""
    broken = []
    for target in links(page):
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / unquote(path_part)).resolve() if path_part else page
        if not dest.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and dest.is_file() and unquote(anchor).lower() not in anchors(dest):
            broken.append(f"{target} (no heading #{anchor} in {dest.name})")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_page_names_a_folder_outside_the_clone(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert "../shared" not in text, f"{page.name} points at ../shared, which a clone does not have"


def test_the_readme_is_an_overview() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines < README_MAX_LINES, f"README.md has {lines} lines: move reference into docs/"


def test_the_readme_links_every_docs_page() -> None:
    """A page of docs/ that the README's index does not name is a page nobody finds."""
    named = {(README.parent / target.partition("#")[0]).resolve() for target in links(README)}
    unlinked = [page.name for page in PAGES[1:] if page.resolve() not in named]
    assert unlinked == []


def test_the_checker_sees_a_broken_link_and_a_missing_heading(tmp_path: Path) -> None:
    """The reader above finds what it must: a missing file, a missing heading; code is not a link."""
    (tmp_path / "other.md").write_text("# Title\n\n## Where `things` live\n\n## Where things live\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("[a](other.md#where-things-live) [b](other.md#where-things-live-1) [c](missing.md)\n"
                    "[d](other.md#nowhere) [e](#title) `[f](gone.md)`\n```\n[g](gone.md)\n```\n"
                    "[h](about:blank)\n", encoding="utf-8")
    assert broken_links(page) == ["missing.md (no such file)", "other.md#nowhere (no heading #nowhere in other.md)",
                                  "#title (no heading #title in page.md)"]
