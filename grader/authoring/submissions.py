"""Every submission of an exercise, judged: the source policy accepts each one, and, graded several times on
every leg of this machine (each time on fresh random draws), the shipped file fails on the legs of its
`broken_on` with its `failure` phrase, the solution and every right_*.py pass on every leg, every wrong_*.py
fails with the phrase of its `# expect:` line, and no check changes its outcome from one grading to the next
(the audit of tools/determinism.py)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from grader import simulated
from grader.engine import legs, runner
from grader.guard import integrity
from grader.catalog import course
from grader.authoring import Problem
from grader.authoring.files import SUBMISSIONS, expectation, shown


def submissions(ex: course.Exercise) -> dict[str, Path]:
    """{label: file}: "shipped", "solution", then each other submission by its file's stem."""
    found = {"shipped": ex.exercise_file, "solution": ex.solution_file}
    for f in sorted((SUBMISSIONS / ex.name).glob("*.py")):
        found[f.stem] = f
    return found


def expected_legs(ex: course.Exercise) -> list[str]:
    """The single-device legs this machine grades the exercise on."""
    real = [leg for leg in legs.real_legs() if legs.family(leg) in ex.legs]
    sim = list(legs.SIMULATED_LEGS) if "accelerator" in ex.legs and simulated.is_supported() else []
    return real + sim


def legs_of(grade: runner.Grade) -> list[str]:
    """Single-device legs that ran ('sim:0+sim:1' pair checks count for both)."""
    return sorted({leg for r in grade.ran for leg in r.leg.split("+")})


def _see(ex: course.Exercise, label: str, path: Path) -> str:
    """The command that shows the learner's report of this submission."""
    if label == "shipped":
        return f"devcourse check {ex.name}"
    if label == "solution":
        return f"devcourse check {ex.name} --solution"
    return f"devcourse check {ex.name} {shown(path)}"


def _first_lines(messages: list[str]) -> str:
    return "; ".join(dict.fromkeys(m.splitlines()[0][:120] for m in messages if m)) or "no failure message"


# ---------------------------------------------------------------------------------------------- the source policy
def refused_by_policy(ex: course.Exercise) -> list[Problem]:
    """Submissions the source policy (grader/guard/policy.py) refuses before they run: a fix, right or wrong, must be
    judged by its checks, never refused for how it is written."""
    found = []
    for label, path in submissions(ex).items():
        if path.is_file():
            refused = integrity.scan(path.read_text(encoding="utf-8"), shown(path))
            if refused:
                found.append(Problem(f"the source policy refuses {shown(path)} before it runs: {'; '.join(refused)}",
                                     "write those lines as a learner's fix would (grader/guard/policy.py says why each "
                                     f"construct is refused); see: {_see(ex, label, path)}", ex.name))
    return found


# ---------------------------------------------------------------------------------------------- verdicts
def verdict_problems(ex: course.Exercise, label: str, path: Path, grade: runner.Grade) -> list[Problem]:
    """How this grade differs from the verdict its submission must get."""
    see = _see(ex, label, path)
    if label == "shipped":
        broken = [leg for leg in expected_legs(ex) if legs.family(leg) in ex.broken_on
                  and not (ex.shipped_passes_on_cuda and leg.startswith("cuda"))]
        if not broken:
            return [Problem(f"no leg of this machine can show the bug (broken_on = {list(ex.broken_on)})",
                            "fix broken_on in course.toml", ex.name)]
        found = []
        for leg in broken:
            if grade.passed_on(leg):
                found.append(Problem(f"the shipped {shown(path)} passes on {leg}: its bug does not show there",
                                     f"make the bug fail a check on {leg} (or fix broken_on in course.toml); "
                                     f"see: {see}", ex.name))
                continue
            messages = [r.message for r in grade.failures if leg in r.leg.split("+")]  # a pair check: both legs
            if not any(ex.failure in m for m in messages):
                found.append(Problem(f"the shipped {shown(path)} fails on {leg}, but no message says course.toml's "
                                     f"failure = {ex.failure!r}; it says: {_first_lines(messages)}",
                                     f"make failure = a phrase of the grader's message for the bug; see: {see}",
                                     ex.name))
        return found
    if label == "solution" or label.startswith("right_"):
        failing = [f"{r.check} [{r.leg}]: {_first_lines([r.message])}"
                   for r in grade.failures + grade.simulator_limits()]
        if not grade.passed:
            why = ("; ".join(failing[:3]) + (f"; and {len(failing) - 3} more" if len(failing) > 3 else "")
                   or f"nothing ran on {', '.join(grade.missing_legs()) or 'some leg'}")
            return [Problem(f"{shown(path)} must pass on every leg, but: {why}",
                            f"fix the {'solution' if label == 'solution' else 'submission or the grader'}; see: {see}",
                            ex.name)]
        missing = sorted(set(expected_legs(ex)) - set(legs_of(grade)))
        if label == "solution" and missing:
            return [Problem(f"{shown(path)} was graded on no check on {', '.join(missing)}",
                            f"give the grader checks for every leg of legs = {list(ex.legs)}; see: {see}", ex.name)]
        return []
    phrase = expectation(path)
    if grade.passed:
        return [Problem(f"{shown(path)} passes every check, but it is a wrong fix",
                        f"add the check that catches it (its first line says what it must fail with); see: {see}",
                        ex.name)]
    messages = [r.message for r in grade.failures]
    if phrase and not any(phrase in m for m in messages):
        return [Problem(f"{shown(path)} fails, but no message says its '# expect: {phrase}'; it says: "
                        f"{_first_lines(messages)}",
                        f"make its # expect: line a phrase of the message it should fail with; see: {see}", ex.name)]
    return []


# ---------------------------------------------------------------------------------------------- draws
def changed_outcomes(outcomes: dict[tuple, list[str]], runs: int) -> dict[tuple, list[str]]:
    """The keys whose outcome was not the same in each of `runs` gradings (or that some gradings lacked)."""
    return {key: seen for key, seen in outcomes.items() if len(set(seen)) > 1 or len(seen) != runs}


#: The check a grading process's own failure is reported as (grader.engine.runner, grader.learner.report).
PROCESS_FAILURE = "(grader process)"


def unstable_checks(ex: course.Exercise, graded: dict[str, list[runner.Grade]]) -> list[Problem]:
    """One problem per check whose outcome changed between gradings, naming each submission and leg it changed on;
    a submission whose grading process failed in some grading (a crash, a time limit) is said so instead, since
    its checks did not all run."""
    runs = min(len(g) for g in graded.values())
    found, outcomes = [], defaultdict(list)
    for label, grades in graded.items():
        failed = [next(r for r in g.failures if r.check == PROCESS_FAILURE) for g in grades
                  if any(r.check == PROCESS_FAILURE for r in g.failures)]
        if failed:
            if len(failed) < len(grades):  # failing in every grading is a wrong verdict, said by verdict_problems
                found.append(Problem(f"{label}: its grading process failed in {len(failed)} of {len(grades)} "
                                     f"gradings ({failed[0].leg}: {_first_lines([failed[0].message])})",
                                     f"see: {_see(ex, label, submissions(ex)[label])} (on a busy machine a time "
                                     "limit may be the machine's: run again)", ex.name))
            continue
        for grade in grades:
            for r in grade.results:
                outcomes[(r.check, label, r.leg)].append(r.outcome)
    by_check: dict[str, list[str]] = defaultdict(list)
    for (check, label, leg), seen in sorted(changed_outcomes(outcomes, runs).items()):
        by_check[check].append(f"{label} [{leg}] passed {seen.count('passed')} of {len(seen)}")
    return found + [Problem(f"the check {check} changed its outcome between gradings, so it depends on the random "
                            "draw: " + ", ".join(where),
                            "draw so that the bug shows on every draw, and compare so that NaN fails "
                            f"(grader/AUTHORING.md, rule 7); see: python tools/determinism.py --only {ex.name} "
                            "--repeat 10", ex.name)
                    for check, where in by_check.items()]


def grade_all(ex: course.Exercise, repeat: int) -> dict[str, list[runner.Grade]]:
    """{label: [its grade in each of `repeat` gradings]}, graded through the warm grading processes."""
    found = {label: path for label, path in submissions(ex).items() if path.is_file()}
    labels = list(found)
    grades = runner.grade_many(ex, [found[label] for label in labels] * repeat)
    return {label: grades[i::len(labels)] for i, label in enumerate(labels)}


def problems(ex: course.Exercise, graded: dict[str, list[runner.Grade]]) -> list[Problem]:
    """For grade_all's gradings: each submission's wrong verdict (from the first grading that gives one), then
    the checks whose outcome changed between gradings."""
    paths = submissions(ex)
    found = []
    for label, grades in graded.items():
        for grade in grades:
            wrong = verdict_problems(ex, label, paths[label], grade)
            if wrong:
                found += wrong
                break
    return found + unstable_checks(ex, graded)
