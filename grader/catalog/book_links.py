"""Links from an exercise to the section of the book that explains its bug (course.toml's `explained_in`,
"<page>#<anchor>", like rustlings' hints that name a chapter of the Rust book).

An anchor is the HTML id that the book's build gives a section: docutils' `make_id` of the heading's text,
as Sphinx writes it for every MyST heading (`tests/test_book_links.py` checks each one against MyST's own
parse of the page). Where the link points:

* in the terminal and in a notebook's hint: the published book when `_config.yml` names it (`html.baseurl`),
  else the book built in this clone (`make book` writes `_build/html/`), as a file:// address;
* in the built book (each chapter's "Graded exercises" list): a link relative to the page.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from grader import ROOT
from grader.catalog.course import Exercise

BOOK = ROOT / "book"
BUILT_BOOK = ROOT / "_build" / "html"


def anchor_of(title: str) -> str:
    """The HTML id that Sphinx gives a section with this heading text."""
    from docutils.nodes import make_id

    return make_id(title)


@cache
def headings(page: str) -> tuple[tuple[int, str], ...]:
    """((level, plain text), ...) of the page's Markdown headings, in order (code cells and front matter are not
    Markdown, so a `# comment` in a code cell is no heading)."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    md = MarkdownIt("commonmark").use(front_matter_plugin)
    tokens = md.parse((BOOK / f"{page}.md").read_text(encoding="utf-8"))
    out = []
    for opening, inline in zip(tokens, tokens[1:]):
        if opening.type == "heading_open":
            text = "".join(child.content for child in inline.children or ()
                           if child.type in ("text", "code_inline"))
            out.append((int(opening.tag[1:]), text))
    return tuple(out)


def sections(page: str) -> dict[str, str]:
    """{anchor: heading text} of the page's sections."""
    return {anchor_of(text): text for _, text in headings(page)}


def split(ex: Exercise) -> tuple[str, str]:
    page, _, anchor = ex.explained_in.partition("#")
    return page, anchor


@cache
def base_url() -> str:
    """Where the book is published (_config.yml's html.baseurl), or "" when nowhere."""
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8")) or {}
    return str((config.get("html") or {}).get("baseurl") or "").rstrip("/")


def url(ex: Exercise) -> str:
    """The address of the section, for a terminal or a notebook's output."""
    page, anchor = split(ex)
    if base_url():
        return f"{base_url()}/book/{page}.html#{anchor}"
    return f"{(BUILT_BOOK / 'book' / f'{page}.html').as_uri()}#{anchor}"


def home() -> str:
    """Where to read the book: its published address, else the built book in this clone (or how to build it)."""
    if base_url():
        return f"{base_url()}/book/intro.html"
    index = BUILT_BOOK / "index.html"
    return index.as_uri() if index.is_file() else f"{index.as_uri()} once built (make book builds it)"


def relative_link(ex: Exercise, from_page: str) -> str:
    """The section's address relative to the built page `from_page` (both are in book/)."""
    page, anchor = split(ex)
    return f"#{anchor}" if page == from_page else f"{page}.html#{anchor}"


def section_title(ex: Exercise) -> str:
    page, anchor = split(ex)
    try:
        return sections(page).get(anchor, anchor)
    except (ImportError, OSError):  # a notebook server without the book's tools, or without book/: the anchor
        return anchor


def page_title(page: str) -> str:
    try:
        return next((text for level, text in headings(page) if level == 1), page)
    except (ImportError, OSError):
        return page


def explained_line(ex: Exercise) -> str | None:
    """'Explained in the book: ...' for the end of a hint; None when the exercise names no section."""
    if not ex.explained_in:
        return None
    page, _ = split(ex)
    line = f"Explained in the book: \"{section_title(ex)}\" in {page_title(page)}, {url(ex)}"
    if not base_url() and not (BUILT_BOOK / "book" / f"{page}.html").is_file():
        line += " (build the book first: make book)"
    return line
