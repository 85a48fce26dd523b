"""The course checks itself (as rustlings' `dev check` does): metadata and files agree, every exercise
fails its grader as shipped and every solution passes, on every leg that applies."""

import pytest
import yaml

from grader import ROOT, course, legs, runner, simulated

EXERCISES = course.load()
IDS = [e.name for e in EXERCISES]


def toc_pages() -> set[str]:
    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                yield node["file"]
            for value in node.values():
                yield from walk(value)
        elif isinstance(node, list):
            for item in node:
                yield from walk(item)

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return {toc["root"], *walk(toc)}


def test_course_has_exercises():
    assert len(EXERCISES) >= 3


def test_each_part_ends_with_its_one_capstone():
    # `devcourse list` marks the capstones (Exercise.capstone, from the title), as the README promises one a part
    for part in course.parts():
        in_part = [e for e in EXERCISES if e.chapter in part.chapters]
        assert [e.name for e in in_part if e.capstone] == [in_part[-1].name], part.caption


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_exercise_files_exist(ex):
    for f in (ex.exercise_file, ex.solution_file, ex.grader_file, ex.chapter_file):
        assert f.is_file(), f"{ex.name}: {f.relative_to(ROOT)} is missing"
    assert ex.exercise_file.read_text() != ex.solution_file.read_text(), f"{ex.name}: exercise equals solution"


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_exercise_is_linked_from_its_chapter(ex):
    assert f"book/{ex.chapter}" in toc_pages(), f"{ex.name}: chapter {ex.chapter} is not in _toc.yml"
    assert "{course-exercises}" in ex.chapter_file.read_text(), (
        f"{ex.name}: book/{ex.chapter}.md has no course-exercises directive to list it"
    )


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_exercise_has_progressive_hints(ex):
    assert len(ex.hints) >= 2 and len(set(ex.hints)) == len(ex.hints)
    assert ex.failure and ex.teaches and ex.title


def test_no_file_without_metadata():
    known = {e.path for e in EXERCISES}
    for folder in ("exercises", "solutions"):
        for f in (ROOT / folder).rglob("*.py"):
            assert f.relative_to(ROOT / folder).as_posix() in known, f"{f.relative_to(ROOT)} is not in course.toml"
    graders = {e.grader_file for e in EXERCISES}
    for f in (ROOT / "grader" / "checks").rglob("test_*.py"):
        assert f in graders, f"{f.relative_to(ROOT)} grades no exercise in course.toml"


def expected_legs(ex) -> list[str]:
    real = [leg for leg in legs.real_legs() if legs.family(leg) in ex.legs]
    sim = list(legs.SIMULATED_LEGS) if "accelerator" in ex.legs and simulated.is_supported() else []
    return real + sim


def _legs_of(grade) -> list[str]:
    """Single-device legs that ran ('sim:0+sim:1' pair checks count for both)."""
    return sorted({leg for r in grade.ran for leg in r.leg.split("+")})


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_shipped_exercise_fails_with_its_message(ex):
    grade = runner.grade(ex, ex.exercise_file)
    broken = [leg for leg in expected_legs(ex) if legs.family(leg) in ex.broken_on]
    assert broken, f"{ex.name}: no leg here on which the bug can show"
    for leg in broken:
        assert not grade.passed_on(leg), f"{ex.name}: the shipped exercise passes on {leg}"
        messages = [r.message for r in grade.failures if r.leg == leg]
        assert any(ex.failure in m for m in messages), (
            f"{ex.name} on {leg}: no failure says {ex.failure!r}; got {messages}"
        )


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_solution_passes_on_every_leg(ex):
    grade = runner.grade(ex, ex.solution_file)
    assert grade.passed, [r for r in grade.results if r.outcome != "passed"]
    assert set(expected_legs(ex)) <= set(_legs_of(grade)), (expected_legs(ex), grade.legs())


# Other submissions of every exercise, kept in tests/submissions/<exercise>/: right_*.py must pass on every
# leg; wrong_*.py must fail, with the phrase on their first line ('# expect: <phrase>') in a failure message.
SUBMISSIONS = sorted((ROOT / "tests" / "submissions").glob("*/*.py"))


def _sample(paths):
    """`make test` grades the first right and the first wrong submission of each exercise; `make test-all`
    grades every one (a sweep: each grader's behaviour is met once in the sample)."""
    first = {}
    for p in paths:
        first.setdefault((p.parent.name, p.stem.split("_")[0]), p)
    return [p if p in first.values() else pytest.param(p, marks=pytest.mark.exhaustive) for p in paths]


def _expectation(path):
    first = path.read_text().splitlines()[0]
    return first.removeprefix("# expect:").strip() if first.startswith("# expect:") else None


@pytest.mark.parametrize("path", _sample(SUBMISSIONS), ids=[f"{p.parent.name}/{p.stem}" for p in SUBMISSIONS])
def test_other_submissions(path):
    ex = course.get(path.parent.name)
    grade = runner.grade(ex, path)
    if path.stem.startswith("right_"):
        assert grade.passed, [r for r in grade.results if r.outcome != "passed"]
        return
    assert path.stem.startswith("wrong_"), f"{path.name}: name it right_*.py or wrong_*.py"
    phrase = _expectation(path)
    assert phrase, f"{path}: a wrong submission starts with '# expect: <phrase of its failure message>'"
    ran = [(r.leg, r.check, r.outcome) for r in grade.results]
    assert not grade.passed, f"{path.name} passes but should fail: {ran}"
    messages = [r.message for r in grade.failures]
    assert any(phrase in m for m in messages), f"{path.name}: no failure says {phrase!r}; got {messages}"


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_every_exercise_has_other_submissions(ex):
    folder = ROOT / "tests" / "submissions" / ex.name
    rights = list(folder.glob("right_*.py"))
    wrongs = list(folder.glob("wrong_*.py"))
    assert len(rights) >= 2 and len(wrongs) >= 2, (
        f"{ex.name}: tests/submissions/{ex.name}/ needs at least two right_*.py and two wrong_*.py")


def instructor_pages() -> set[str]:
    """The pages of the book's "For instructors" part: guides for teachers, not chapters with exercises."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return {ch["file"] for part in toc["parts"] if part.get("caption") == "For instructors" for ch in part["chapters"]}


CHAPTERS = sorted(p.removeprefix("book/") for p in toc_pages() - instructor_pages()
                  if p not in ("book/intro", "book/hardware-status"))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_ends_with_summary_and_exercises(chapter):
    text = (ROOT / "book" / f"{chapter}.md").read_text()
    summary, exercises = text.find("\n## Summary"), text.find("\n## Graded exercises")
    assert 0 < summary < exercises, f"{chapter}: needs '## Summary' then '## Graded exercises'"
    assert "{course-exercises}" in text[exercises:], f"{chapter}: its Exercises section must list course.toml's"
