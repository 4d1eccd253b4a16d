"""The README is a short front page and the rest lives in docs/: its size, its links and its anchors are checked here.

Links are read with a Markdown parser (markdown-it-py, CommonMark), so a link-looking text inside a code block or a
code span is not taken for a link, and a heading inside a fenced block is not taken for a heading.
"""

import re
from itertools import pairwise
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
FRONT_PAGE_LIMIT = 12 * 1024  # bytes

PARSER = MarkdownIt("commonmark").enable("table")


def docs_pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped except '-' and '_', each space a '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every #anchor GitHub gives the headings of a Markdown file (a repeated heading gets -1, -2, ...)."""
    tokens = PARSER.parse(path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    found = set()
    for opening, inline in pairwise(tokens):
        if opening.type != "heading_open":
            continue
        text = "".join(child.content for child in inline.children or [] if child.type in ("text", "code_inline"))
        base = slug(text)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[str]:
    """The targets of every link and image in a Markdown file, in order."""
    targets = []
    for token in PARSER.parse(path.read_text(encoding="utf-8")):
        for child in token.children or []:
            if child.type == "link_open":
                targets.append(str(child.attrs["href"]))
            elif child.type == "image":
                targets.append(str(child.attrs["src"]))
    return targets


def broken_links(path: Path) -> list[str]:
    """Relative links of a Markdown file whose file does not exist, or whose #anchor names no heading of its file."""
    problems = []
    for target in links(path):
        parts = urlsplit(target)
        if parts.scheme or parts.netloc:  # http(s), mailto: not checked here (tests talk only to 127.0.0.1)
            continue
        destination = (path.parent / unquote(parts.path)).resolve() if parts.path else path
        if not destination.exists():
            problems.append(f"{path.name}: {target}: no file {destination}")
        elif parts.fragment and destination.suffix == ".md" and parts.fragment not in anchors(destination):
            problems.append(f"{path.name}: {target}: no heading #{parts.fragment} in {destination.name}")
    return problems


def test_the_front_page_is_short_and_keeps_the_two_quick_start_commands() -> None:
    text = README.read_bytes()
    assert len(text) <= FRONT_PAGE_LIMIT, f"README.md is {len(text)} bytes, over {FRONT_PAGE_LIMIT}"
    assert b"make eval" in text
    assert b"make test" in text


def test_there_are_docs_pages() -> None:
    assert len(docs_pages()) >= 5


@pytest.mark.parametrize("page", [README, *docs_pages()], ids=lambda page: page.name)
def test_every_relative_link_reaches_a_file_and_a_heading(page: Path) -> None:
    assert broken_links(page) == []


def test_every_docs_page_is_linked_from_the_front_page() -> None:
    linked = {(ROOT / unquote(urlsplit(target).path)).resolve() for target in links(README) if "://" not in target}
    unlinked = [page.name for page in docs_pages() if page.resolve() not in linked]
    assert unlinked == []


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        # worked by hand from GitHub's rule
        ("Serving a detector: `fcb serve`", "serving-a-detector-fcb-serve"),
        ("`fcb compare` and regression gates", "fcb-compare-and-regression-gates"),
        ("The real-data benchmark", "the-real-data-benchmark"),
        ("Outputs, metrics and reports", "outputs-metrics-and-reports"),
        ("snake_case stays", "snake_case-stays"),
    ],
)
def test_anchors_follow_githubs_rule(tmp_path: Path, heading: str, anchor: str) -> None:
    page = tmp_path / "page.md"
    page.write_text(f"# {heading}\n\ntext\n")
    assert anchors(page) == {anchor}


def test_a_repeated_heading_gets_a_numbered_anchor_and_a_fenced_hash_is_no_heading(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("## Notes\n\n## Notes\n\n```\n# not a heading\n```\n")
    assert anchors(page) == {"notes", "notes-1"}


def test_the_checker_finds_a_missing_file_and_a_missing_anchor(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Present\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Here\n\n[ok](other.md#present) [ok](#here) [gone](missing.md) [bad anchor](other.md#absent) "
        "[bad local](#nowhere) [web](https://example.org/x#y) `[code](missing-too.md)`\n"
    )
    assert broken_links(page) == [
        f"page.md: missing.md: no file {tmp_path / 'missing.md'}",
        "page.md: other.md#absent: no heading #absent in other.md",
        "page.md: #nowhere: no heading #nowhere in page.md",
    ]
