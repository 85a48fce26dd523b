"""course.toml and the files of each exercise: the broken file, the fix, the grader, the chapter that lists it,
its hints, and its other submissions (tests/submissions/NAME/right_*.py and wrong_*.py). Nothing here runs
learner code."""

from __future__ import annotations

from pathlib import Path

from grader import ROOT
from grader.catalog import course
from grader.authoring import Problem

SUBMISSIONS = ROOT / "tests" / "submissions"
#: Each exercise has at least this many right_*.py, and as many wrong_*.py.
AT_LEAST = 2


def toc_pages() -> set[str]:
    """Every page _toc.yml builds ("book/device-mismatch"), the root included."""
    import yaml

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                yield node["file"]
            for value in node.values():
                yield from walk(value)
        elif isinstance(node, list):
            for item in node:
                yield from walk(item)

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return {toc["root"], *walk(toc)}


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def expectation(path: Path) -> str | None:
    """The phrase a wrong submission's failure must contain: its first line, '# expect: <phrase>'."""
    lines = path.read_text(encoding="utf-8").splitlines()
    first = lines[0] if lines else ""
    if not first.startswith("# expect:"):
        return None
    return first.removeprefix("# expect:").strip() or None


def other_submissions(ex: course.Exercise) -> list[Path]:
    return sorted((SUBMISSIONS / ex.name).glob("*.py"))


def problems(ex: course.Exercise) -> list[Problem]:
    """What the exercise's entry and files lack."""
    return [*exercise_files(ex), *listed_by_its_chapter(ex), *entry(ex), *submission_files(ex)]


def exercise_files(ex: course.Exercise) -> list[Problem]:
    found = []
    wanted = [(ex.exercise_file, "the broken program the learner fixes"), (ex.solution_file, "the reference fix"),
              (ex.grader_file, "its hidden grader (an ordinary pytest file: grader/AUTHORING.md)"),
              (ex.chapter_file, f"the chapter page named by chapter = {ex.chapter!r} in course.toml")]
    for path, what in wanted:
        if not path.is_file():
            found.append(Problem(f"{shown(path)} is missing: {what}", f"create {shown(path)}", ex.name))
    if ex.exercise_file.is_file() and ex.solution_file.is_file() \
            and ex.exercise_file.read_text(encoding="utf-8") == ex.solution_file.read_text(encoding="utf-8"):
        found.append(Problem(f"{shown(ex.exercise_file)} is the same as its solution: the shipped file has no bug",
                             f"put the bug back into {shown(ex.exercise_file)}", ex.name))
    return found


def listed_by_its_chapter(ex: course.Exercise) -> list[Problem]:
    found = []
    if f"book/{ex.chapter}" not in toc_pages():
        found.append(Problem(f"its chapter book/{ex.chapter}.md is not in _toc.yml",
                             f"add 'file: book/{ex.chapter}' to _toc.yml (or fix chapter = in course.toml)", ex.name))
    if ex.chapter_file.is_file() and "{course-exercises}" not in ex.chapter_file.read_text(encoding="utf-8"):
        found.append(Problem(f"book/{ex.chapter}.md has no {{course-exercises}} directive to list it",
                             f"end book/{ex.chapter}.md's '## Graded exercises' section with a ```{{course-exercises}}"
                             "``` block", ex.name))
    return found


def entry(ex: course.Exercise) -> list[Problem]:
    found = []
    if len(ex.hints) < 2 or len(set(ex.hints)) != len(ex.hints):
        found.append(Problem("course.toml gives it fewer than two different hints",
                             "add hints to its entry in course.toml, each more explicit than the last", ex.name))
    for key in ("title", "teaches", "failure"):
        if not getattr(ex, key).strip():
            found.append(Problem(f"course.toml's {key} is empty", f"give {key} = \"...\" in its entry in course.toml",
                                 ex.name))
    return found


def submission_files(ex: course.Exercise) -> list[Problem]:
    folder = SUBMISSIONS / ex.name
    found = []
    for kind in ("right", "wrong"):
        count = len(list(folder.glob(f"{kind}_*.py")))
        if count < AT_LEAST:
            what = ("right ones written differently (another correct fix)" if kind == "right"
                    else "plausible wrong fixes, each starting '# expect: <phrase of its failure message>'")
            found.append(Problem(f"tests/submissions/{ex.name}/ has {count} {kind}_*.py; it needs at least "
                                 f"{AT_LEAST}: {what}",
                                 f"add tests/submissions/{ex.name}/{kind}_<what_it_does>.py", ex.name))
    for path in other_submissions(ex):
        if not path.stem.startswith(("right_", "wrong_")):
            found.append(Problem(f"{shown(path)} is neither right_*.py nor wrong_*.py",
                                 f"rename it right_{path.stem}.py or wrong_{path.stem}.py", ex.name))
        elif path.stem.startswith("wrong_") and expectation(path) is None:
            found.append(Problem(f"{shown(path)} does not start with '# expect: <phrase>'",
                                 f"make its first line '# expect: <a phrase of the message it must fail with>'",
                                 ex.name))
    return found


def files_without_metadata() -> list[Problem]:
    """Exercise, solution and grader files of no exercise in course.toml (a new exercise without its entry)."""
    exercises = course.load()
    known = {e.path for e in exercises}
    found = [Problem(f"{folder}/{f.relative_to(ROOT / folder).as_posix()} is not in course.toml",
                     "add its [[exercises]] entry to course.toml (grader/AUTHORING.md says what it holds)")
             for folder in ("exercises", "solutions") for f in sorted((ROOT / folder).rglob("*.py"))
             if f.relative_to(ROOT / folder).as_posix() not in known]
    graders = {e.grader_file for e in exercises}
    found += [Problem(f"{shown(f)} grades no exercise in course.toml",
                      "add the exercise's entry to course.toml, or remove the grader")
              for f in sorted((ROOT / "grader" / "checks").rglob("test_*.py")) if f not in graders]
    names = {e.name for e in exercises}
    found += [Problem(f"tests/submissions/{d.name}/ belongs to no exercise in course.toml",
                      "rename the folder after its exercise, or add the exercise's entry to course.toml")
              for d in sorted(SUBMISSIONS.iterdir()) if d.is_dir() and d.name not in names and any(d.glob("*.py"))]
    return found
