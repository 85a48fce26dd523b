"""The book's side of an exercise: the section that explains its bug (course.toml's `explained_in`) exists as
the book's build names it, its chapter ends with a summary then the graded exercises, every claim the chapter
marks (`<!-- claim: ID -->`) has its entry in the claims ledger (tests/book/claims.toml), and the outputs the
chapter shows were recorded from its current code."""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path

from grader import ROOT
from grader.catalog import book_links, course
from grader.authoring import Problem
from grader.authoring.derived import book_ext

LEDGER_FILE = ROOT / "tests" / "book" / "claims.toml"
CLAIM_MARKER = re.compile(r"<!--\s*claim:\s*([\w-]+)\s*-->")


# ---------------------------------------------------------------------------------------------- sections
@cache
def myst_section_ids(page: str) -> frozenset[str]:
    """The HTML ids of the page's sections, from MyST's own parse (myst-parser's docutils parser gives each
    section the id the book's Sphinx build writes; _config.yml sets no `myst_heading_anchors`)."""
    from docutils import nodes
    from docutils.core import publish_doctree
    from myst_parser.parsers.docutils_ import Parser

    source = (ROOT / "book" / f"{page}.md").read_text(encoding="utf-8")
    # The page's Jupyter-Book directives (code cells, glue) are unknown to plain docutils: silence, not fail.
    doctree = publish_doctree(source, parser=Parser(), settings_overrides={"report_level": 5, "halt_level": 5})
    return frozenset(i for section in doctree.findall(nodes.section) for i in section["ids"])


def book_pages() -> set[str]:
    """The chapters of the book's parts (_toc.yml), by file name."""
    return {chapter for _, chapters in course.book_parts() for chapter in chapters}


def explaining_section(ex: course.Exercise) -> list[Problem]:
    if not ex.explained_in:
        return [Problem("course.toml gives no explained_in (the section of the book that explains the bug)",
                        'add explained_in = "<page>#<section anchor>" to its entry in course.toml', ex.name)]
    page, anchor = book_links.split(ex)
    if page not in book_pages():
        return [Problem(f"explained_in names {page}, which is not a page of the book (_toc.yml)",
                        "fix explained_in in course.toml", ex.name)]
    if anchor not in myst_section_ids(page):
        known = ", ".join(f"#{a}" for a in sorted(book_links.sections(page)))
        return [Problem(f"book/{page}.md has no section #{anchor} (explained_in)",
                        f"write the section that explains the bug in book/{page}.md, its heading giving #{anchor} "
                        f"(or point explained_in at one of: {known})", ex.name)]
    return []


def chapter_layout(chapter: str) -> list[Problem]:
    """A chapter ends with '## Summary', then '## Graded exercises' holding the {course-exercises} list."""
    text = (ROOT / "book" / f"{chapter}.md").read_text(encoding="utf-8")
    summary, exercises = text.find("\n## Summary"), text.find("\n## Graded exercises")
    if not 0 < summary < exercises:
        return [Problem(f"book/{chapter}.md does not end with '## Summary' then '## Graded exercises'",
                        f"add them at the end of book/{chapter}.md (book/AUTHORING.md)")]
    if "{course-exercises}" not in text[exercises:]:
        return [Problem(f"book/{chapter}.md's Graded exercises section does not list course.toml's exercises",
                        "put a ```{course-exercises}``` block in it")]
    return []


# ---------------------------------------------------------------------------------------------- claims
@cache
def ledger() -> dict:
    return tomllib.loads(LEDGER_FILE.read_text(encoding="utf-8"))


def claims() -> dict[str, dict]:
    return ledger().get("claims", {})


def markers(pages: list[Path]) -> list[tuple[str, int, str]]:
    """(page file, line, claim id) of every claim marker in the pages."""
    return [(page.name, number, m.group(1))
            for page in pages
            for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1)
            for m in CLAIM_MARKER.finditer(line)]


def unbacked_claims(pages: list[Path]) -> list[Problem]:
    """Claims marked in the pages with no entry in the ledger, or an entry that names no backing."""
    found = []
    for name, line, cid in markers(pages):
        entry = claims().get(cid)
        if entry is None:
            found.append(Problem(f"book/{name}:{line} marks claim {cid!r}, which tests/book/claims.toml does not back",
                                 f"add [claims.{cid}] to tests/book/claims.toml: says = ..., and what backs it "
                                 "(its header says how); then: python -m pytest tests/book/test_claims.py"))
        elif not entry.get("says") or not any(k in entry for k in ("shows", "glued", "test", "awaits")):
            found.append(Problem(f"tests/book/claims.toml's claim {cid!r} lacks says = or a backing "
                                 "(shows, glued, test or awaits)",
                                 "complete its entry; then: python -m pytest tests/book/test_claims.py"))
    return found


def unmarked_claims(pages: list[Path]) -> list[Problem]:
    """Ledger entries that no page marks any more."""
    marked = {cid for _, _, cid in markers(pages)}
    return [Problem(f"tests/book/claims.toml backs claim {cid!r}, which no page marks any more",
                    f"put <!-- claim: {cid} --> after its sentence, or remove the entry")
            for cid in sorted(set(claims()) - marked)]


# ---------------------------------------------------------------------------------------------- recorded outputs
def stale_record(page: Path) -> list[Problem]:
    """The page's code cells whose outputs were not recorded from their current code (or the code before them)."""
    import json

    store, rules = book_ext("output_store"), book_ext("recording_rules")
    cells = store.code_cells(store.read_markdown_notebook(page.read_text(encoding="utf-8")))
    if not cells:
        return []
    how = (f"record it on a machine with {rules.gpus_needed(page.stem)} GPU(s): python book/_ext/record.py "
           f"book/{page.name} (no GPU: say so when you send the change; a maintainer records it)")
    path = store.STORE / f"{page.stem}.json"
    if not path.exists():
        return [Problem(f"book/{page.name} has no recorded outputs", how)]
    recorded = {c["key"] for c in json.loads(path.read_text(encoding="utf-8"))["cells"]}
    stale = [i for i, key in enumerate(store.cell_keys([c.source for c in cells]), start=1) if key not in recorded]
    if stale:
        return [Problem(f"book/{page.name}: code cells {stale} (or a code cell before them) changed after its outputs "
                        "were recorded", how)]
    return []


def problems(ex: course.Exercise) -> list[Problem]:
    """Everything the book lacks for this exercise: its section, then its pages' layout, claims and recorded
    outputs (those are the page's, shared by the exercises of the chapter: given without the exercise's name)."""
    found = explaining_section(ex)
    if not ex.chapter_file.is_file():
        return found  # grader.authoring.files says so
    found += chapter_layout(ex.chapter)
    pages = [ex.chapter_file] + ([ROOT / "book" / f"{book_links.split(ex)[0]}.md"] if ex.explained_in else [])
    for path in dict.fromkeys(p for p in pages if p.is_file()):
        found += unbacked_claims([path]) + stale_record(path)
    return found
