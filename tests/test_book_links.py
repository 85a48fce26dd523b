"""course.toml's book metadata: every exercise names the section of the book that explains its bug, and that
section exists; the milestone texts (grader.learner.milestones) cover the book's parts.

A section's anchor is checked against MyST's own parse of the page (myst-parser's docutils parser gives each
section the HTML id that the book's Sphinx build writes; _config.yml sets no `myst_heading_anchors`, so no
other slug is made), and against grader.catalog.book_links' lighter reading of the headings, which the hints use."""

from __future__ import annotations

import pytest

from grader import ROOT
from grader.catalog import book_links, course
from grader.authoring import book
from grader.authoring.book import myst_section_ids


@pytest.mark.parametrize("ex", course.load(), ids=lambda e: e.name)
def test_every_exercise_links_a_section_that_exists(ex):
    found = book.explaining_section(ex)  # as devcourse dev check says it
    assert not found, "\n".join(f"{p} (fix: {p.fix})" for p in found)


@pytest.mark.parametrize("page", sorted({book_links.split(e)[0] for e in course.load()}))
def test_the_hints_read_the_headings_as_myst_does(page):
    assert set(book_links.sections(page)) | {page_id(page)} == myst_section_ids(page)


def page_id(page: str) -> str:
    return book_links.anchor_of(book_links.page_title(page))


def test_the_book_links_the_section_relative_to_the_page():
    ex = course.get("masked_mean")
    assert book_links.relative_link(ex, "device-mismatch") == "#tensors-created-inside-forward"
    assert book_links.relative_link(ex, "debugging") == "device-mismatch.html#tensors-created-inside-forward"


def test_a_malformed_link_is_refused(tmp_path):
    bad = (ROOT / "course.toml").read_text(encoding="utf-8").replace(
        'explained_in = "tensors-and-devices#cpu-tensors"', 'explained_in = "CPU tensors"', 1)
    (tmp_path / "course.toml").write_text(bad, encoding="utf-8")
    with pytest.raises(course.CourseError, match="explained_in"):
        course.load(tmp_path / "course.toml")


def test_every_part_with_exercises_has_its_end_text_and_the_course_its_welcome_and_end():
    captions = [caption for caption, _ in course.book_parts()]
    raw = course._read(course.COURSE_FILE)
    for entry in raw.get("parts", []):
        assert entry["caption"] in captions, f"course.toml's part {entry['caption']!r} is not in _toc.yml"
    parts = course.parts()
    assert {e.chapter for e in course.load()} <= {c for p in parts for c in p.chapters}
    for part in parts:
        assert part.done, f"course.toml says nothing at the end of part {part.caption!r}"
    assert course.message("welcome") and course.message("finished")


@pytest.mark.skipif(not (book_links.BUILT_BOOK / "book").is_dir(), reason="the book is not built (make book)")
@pytest.mark.parametrize("ex", course.load(), ids=lambda e: e.name)
def test_the_built_book_has_each_section_and_links_it_from_the_exercise_list(ex):
    page, anchor = book_links.split(ex)
    assert f'id="{anchor}"' in (book_links.BUILT_BOOK / "book" / f"{page}.html").read_text(encoding="utf-8")
    chapter = (book_links.BUILT_BOOK / "book" / f"{ex.chapter}.html").read_text(encoding="utf-8")
    assert f'href="{book_links.relative_link(ex, ex.chapter)}"' in chapter
