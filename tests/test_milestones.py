"""What rustlings does that we did not (issue 29, last part): hints that end with the section of the book that
explains the bug, a welcome on the first run, and a word at the end of each part of the book and of the course.
Each is driven through the real `devcourse` command (watch mode through a pseudo-terminal) in a copy of the
course folder."""

from __future__ import annotations

import io
import json
import re

import pexpect
import pytest

from grader.catalog import book_links, course
from tests.learner import DEVCOURSE, devcourse, fix, learner_env, make_course_copy


@pytest.fixture
def folder(tmp_path):
    return make_course_copy(tmp_path)


def progress(folder) -> dict:
    return json.loads((folder / ".devcourse" / "progress.json").read_text())


def with_progress(folder, done: list[str], **fields) -> None:
    """A learner who has done `done` already (and was welcomed)."""
    state = folder / ".devcourse"
    state.mkdir(exist_ok=True)
    data = {"version": 1, "current": None, "welcomed": True,
            "exercises": {name: {"status": "done", "passed_once": True, "checks": 1} for name in done}, **fields}
    (state / "progress.json").write_text(json.dumps(data))


def first_line(text: str) -> str:
    return text.strip().splitlines()[0]


# -------------------------------------------------------------------------------------------- hints
def test_every_hint_ends_with_the_section_of_the_book_that_explains_the_bug(folder):
    ex = course.get("masked_mean")
    for n in range(1, len(ex.hints) + 1):
        out = devcourse(folder, "hint", ex.name, str(n))
        assert out.returncode == 0, out.stdout + out.stderr
        hint = out.stdout[out.stdout.index(f"Hint {n} of"):]
        assert f'Explained in the book: "Tensors created inside forward" in Device mismatch errors, ' in hint
        assert book_links.url(ex) in hint
        assert book_links.url(ex).endswith("/book/device-mismatch.html#tensors-created-inside-forward")


# -------------------------------------------------------------------------------------------- welcome
def test_the_first_run_welcomes_the_learner_once(folder):
    welcome = first_line(course.message("welcome"))
    out = devcourse(folder, "list", "--json")  # machine-readable output stays pure JSON, and greets nobody
    json.loads(out.stdout)
    assert welcome not in out.stdout

    out = devcourse(folder, "list")
    assert out.returncode == 0, out.stdout + out.stderr
    assert welcome in out.stdout
    for how_to_start in ("devcourse list", "devcourse watch", "devcourse check", "devcourse hint"):
        assert how_to_start in out.stdout
    assert f"The book: {book_links.home()}" in out.stdout
    assert progress(folder)["welcomed"] is True

    again = devcourse(folder, "list")
    assert welcome not in again.stdout
    assert "noise_batch" in again.stdout


def test_a_learner_from_before_the_welcome_is_not_greeted(folder):
    with_progress(folder, ["noise_batch"])
    data = progress(folder)
    del data["welcomed"]
    (folder / ".devcourse" / "progress.json").write_text(json.dumps(data))
    out = devcourse(folder, "list")
    assert first_line(course.message("welcome")) not in out.stdout


# -------------------------------------------------------------------------------------------- ends
def test_the_last_exercise_of_a_part_says_what_the_learner_can_do_and_what_to_read_next(folder):
    part = course.parts()[0]
    in_part = [e for e in course.load() if e.chapter in part.chapters]
    last = in_part[-1]
    with_progress(folder, [e.name for e in in_part[:-1]])

    out = devcourse(folder, "check", last.name)  # still broken: nothing said
    assert out.returncode == 1
    assert first_line(part.done) not in out.stdout

    fix(folder, last.name)
    out = devcourse(folder, "check", last.name)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f'End of part "{part.caption}".' in out.stdout
    assert first_line(part.done) in out.stdout
    assert first_line(course.message("finished")) not in out.stdout
    assert progress(folder)["milestones"] == [f"part:{part.caption}"]

    again = devcourse(folder, "check", last.name)  # said once
    assert again.returncode == 0
    assert first_line(part.done) not in again.stdout


def test_one_exercise_done_is_not_the_end_of_its_part_and_the_end_comes_with_the_last_one_done(folder):
    # The part's last exercise passed first, with nothing else of it done: not its end, and nothing recorded
    # (said early, the end would never be said when it comes). The end comes when the part's last undone
    # exercise passes, whatever its place in the part.
    part = course.parts()[0]
    in_part = [e for e in course.load() if e.chapter in part.chapters]
    first, last = in_part[0], in_part[-1]
    with_progress(folder, [])
    fix(folder, last.name)
    out = devcourse(folder, "check", last.name)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "End of part" not in out.stdout and first_line(part.done) not in out.stdout
    assert progress(folder).get("milestones", []) == []

    with_progress(folder, [e.name for e in in_part[1:]])
    fix(folder, first.name)
    out = devcourse(folder, "check", first.name)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f'End of part "{part.caption}".' in out.stdout and first_line(part.done) in out.stdout
    assert progress(folder)["milestones"] == [f"part:{part.caption}"]


def test_the_last_exercise_of_the_course_ends_its_part_and_the_course(folder):
    exercises = course.load()
    last = exercises[-1]
    part = course.part_of(last)
    earlier_parts = [f"part:{p.caption}" for p in course.parts() if p != part]
    with_progress(folder, [e.name for e in exercises[:-1]], milestones=earlier_parts)

    fix(folder, last.name)
    out = devcourse(folder, "check", last.name)
    assert out.returncode == 0, out.stdout + out.stderr
    assert first_line(part.done) in out.stdout
    assert "The end of the course." in out.stdout
    assert first_line(course.message("finished")) in out.stdout
    assert out.stdout.index(first_line(part.done)) < out.stdout.index("The end of the course.")
    for p in course.parts():
        if p != part:
            assert first_line(p.done) not in out.stdout  # said when they were reached, not again
    assert progress(folder)["milestones"][-2:] == [f"part:{part.caption}", "finished"]


# -------------------------------------------------------------------------------------------- in watch mode
def test_watch_greets_on_its_first_screen_and_ends_a_part(folder):
    part = course.parts()[0]
    in_part = [e for e in course.load() if e.chapter in part.chapters]
    last = in_part[-1]
    child = pexpect.spawn(str(DEVCOURSE), ["watch", last.name], cwd=str(folder), env=learner_env(),
                          encoding="utf-8", timeout=60, dimensions=(60, 160))
    child.expect_exact(first_line(course.message("welcome")))  # after the screen's clear, so it stays in view
    child.expect("does not pass yet")
    child.send("q")
    child.expect(pexpect.EOF)
    assert progress(folder)["welcomed"] is True

    with_progress(folder, [e.name for e in in_part[:-1]])
    fix(folder, last.name)
    child = pexpect.spawn(str(DEVCOURSE), ["watch", last.name], cwd=str(folder), env=learner_env(),
                          encoding="utf-8", timeout=60, dimensions=(60, 160))
    child.logfile_read = screen = io.StringIO()
    child.expect(f'End of part "{part.caption}".')
    child.expect_exact(first_line(part.done))
    child.expect("Press n for the next exercise")
    child.send("q")
    child.expect(pexpect.EOF)
    assert first_line(course.message("welcome")) not in screen.getvalue()  # once only
    assert progress(folder)["milestones"] == [f"part:{part.caption}"]


def test_every_chapter_and_part_a_message_names_is_in_the_book():
    # The end-of-part messages named chapters that do not exist ("Data loading", "Asynchrony": issue 41).
    # A message names a part by its caption, a chapter by its title (its page's heading), both in quotes.
    captions = [caption for caption, _ in course.book_parts()]
    titles = [book_links.page_title(page) for _, pages in course.book_parts() for page in pages]
    texts = [course.message("welcome"), course.message("finished"), *(part.done for part in course.parts())]
    named = [name for text in texts for name in re.findall(r'"([^"]+)"', text)]
    chapters = [name for text in texts for name in re.findall(r'chapter "([^"]+)"', text)]
    assert len(chapters) >= 4 and set(chapters) <= set(titles), sorted(set(chapters) - set(titles))
    book_title = book_links.page_title("intro")
    assert not set(named) - {*captions, *titles, book_title}, sorted(set(named) - {*captions, *titles, book_title})
