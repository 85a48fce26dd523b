"""The course checks itself (as rustlings' `dev check` does): metadata and files agree, every exercise fails its
grader as shipped and every solution passes, on every leg that applies. The rules are grader.authoring's, which
`devcourse dev check` applies too (tests/test_dev_check.py runs that command)."""

import functools

import pytest

from grader import ROOT
from grader.engine import runner
from grader.catalog import course
from grader.authoring import book, files, submissions

EXERCISES = course.load()
IDS = [e.name for e in EXERCISES]


def said(problems) -> str:
    return "\n".join(f"{p}  (fix: {p.fix})" for p in problems)


def test_course_has_exercises():
    assert len(EXERCISES) >= 3


def test_each_part_ends_with_its_capstones():
    # `devcourse list` marks the capstones (Exercise.capstone, from the title), as the README promises: one a part,
    # two in "Beyond one device" (issue 43), listed last, in the part's last chapter
    for part in course.parts():
        in_part = [e for e in EXERCISES if e.chapter in part.chapters]
        capstones = [e for e in in_part if e.capstone]
        assert capstones and capstones == in_part[-len(capstones):], part.caption
        assert {e.chapter for e in capstones} == {in_part[-1].chapter}, part.caption
        assert len(capstones) == (2 if part.caption == "Beyond one device" else 1), part.caption


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_exercise_files_exist(ex):
    found = files.exercise_files(ex)
    assert not found, said(found)


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_exercise_is_linked_from_its_chapter(ex):
    found = files.listed_by_its_chapter(ex)
    assert not found, said(found)


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_exercise_has_progressive_hints(ex):
    found = files.entry(ex)
    assert not found, said(found)


def test_no_file_without_metadata():
    found = files.files_without_metadata()
    assert not found, said(found)


# Other submissions of every exercise, kept in tests/submissions/<exercise>/: right_*.py must pass on every
# leg; wrong_*.py must fail, with the phrase on their first line ('# expect: <phrase>') in a failure message.
SUBMISSIONS = sorted((ROOT / "tests" / "submissions").glob("*/*.py"))
FIRST: dict[tuple[str, str], object] = {}  # (exercise, "right" or "wrong") -> its first submission
for _p in SUBMISSIONS:
    FIRST.setdefault((_p.parent.name, _p.stem.split("_")[0]), _p)


def _sample(paths):
    """`make test` grades the first right and the first wrong submission of each exercise; `make test-all`
    grades every one (a sweep: each grader's behaviour is met once in the sample)."""
    return [p if p in FIRST.values() else pytest.param(p, marks=pytest.mark.exhaustive) for p in paths]


@functools.cache
def _graded(name: str) -> dict:
    """The shipped file, the solution and the sampled submissions of one exercise, graded in one batch per leg
    family (runner.grade_many, as a class is): the checks are collected once for the four."""
    ex = course.get(name)
    paths = [ex.exercise_file, ex.solution_file, *(FIRST[(name, k)] for k in ("right", "wrong") if (name, k) in FIRST)]
    return dict(zip(paths, runner.grade_many(ex, paths)))


def _grade(ex, path):
    graded = _graded(ex.name)
    return graded[path] if path in graded else runner.grade(ex, path)


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_shipped_exercise_fails_with_its_message(ex):
    found = submissions.verdict_problems(ex, "shipped", ex.exercise_file, _grade(ex, ex.exercise_file))
    assert not found, said(found)


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_solution_passes_on_every_leg(ex):
    found = submissions.verdict_problems(ex, "solution", ex.solution_file, _grade(ex, ex.solution_file))
    assert not found, said(found)


@pytest.mark.parametrize("path", _sample(SUBMISSIONS), ids=[f"{p.parent.name}/{p.stem}" for p in SUBMISSIONS])
def test_other_submissions(path):
    ex = course.get(path.parent.name)
    assert path.stem.startswith(("right_", "wrong_")), f"{path.name}: name it right_*.py or wrong_*.py"
    if path.stem.startswith("wrong_"):
        assert files.expectation(path), f"{path}: a wrong submission starts with '# expect: <phrase>'"
    found = submissions.verdict_problems(ex, path.stem, path, _grade(ex, path))
    assert not found, said(found)


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_every_exercise_has_other_submissions(ex):
    found = files.submission_files(ex)
    assert not found, said(found)


def instructor_pages() -> set[str]:
    """The pages of the book's "For instructors" part: guides for teachers, not chapters with exercises."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return {ch["file"] for part in toc["parts"] if part.get("caption") == "For instructors" for ch in part["chapters"]}


CHAPTERS = sorted(p.removeprefix("book/") for p in files.toc_pages() - instructor_pages()
                  if p not in ("book/intro", "book/hardware-status"))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_ends_with_summary_and_exercises(chapter):
    found = book.chapter_layout(chapter)
    assert not found, said(found)
