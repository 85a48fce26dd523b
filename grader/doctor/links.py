"""The book's section for a kind of finding, as a title and an address (grader.catalog.book_links' rules: the
published book where _config.yml names it, else the book built in this clone)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from grader.catalog import book_links

if TYPE_CHECKING:  # findings imports this module to link each finding
    from grader.doctor.findings import Kind


def anchor(kind: Kind) -> str:
    return book_links.anchor_of(kind.heading)


def url(kind: Kind) -> str:
    page = kind.page
    if book_links.base_url():
        return f"{book_links.base_url()}/book/{page}.html#{anchor(kind)}"
    return f"{(book_links.BUILT_BOOK / 'book' / f'{page}.html').as_uri()}#{anchor(kind)}"


def section(kind: Kind) -> dict:
    return {"title": kind.heading, "chapter": book_links.page_title(kind.page), "url": url(kind)}


def home() -> str:
    """The book's first page: published, or built in this clone."""
    if book_links.base_url():
        return f"{book_links.base_url()}/book/intro.html"
    return (book_links.BUILT_BOOK / "index.html").as_uri()
