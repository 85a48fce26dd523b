"""Grade one submission: run its hidden grader over every applicable device leg and collect the results.

The real legs (the CPU, every GPU, MPS) are graded by one warm worker, the simulated accelerator's two
devices by another, both at once (grader.engine.workers, reached through grader.engine.daemon). A crash, a hang or a trick
of the learner's code becomes a failed check with an explanation, never an exception here."""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from grader.engine import daemon, legs, limits
from grader.catalog.course import Exercise


SIMULATOR_LIMIT = "the simulated accelerator cannot run"  # how grader.engine.expect.running words such a skip


@dataclass(frozen=True)
class CheckResult:
    check: str
    leg: str
    outcome: str  # passed, failed, skipped
    message: str = ""
    # The learner's own frames behind a failure, outermost first: (line, function, source line); a line of
    # None marks frames left out. Shown under the message by the front ends (grader.learner.report).
    trace: tuple[tuple[int | None, str, str], ...] = ()
    output: str = ""  # what the learner's code printed during the check (its end: grader.engine.limits.output_tail)


@dataclass
class Grade:
    exercise: Exercise
    submission: Path
    results: list[CheckResult] = field(default_factory=list)
    device: str | None = None  # the --device asked for, if not every leg
    # How each grading process was confined (grader.guard.sandbox): {"spec", "isolated", "how"}.
    isolation: list[dict] = field(default_factory=list)

    @property
    def unisolated(self) -> list[str]:
        """Why some process graded without isolation, each reason once (none when every one was isolated)."""
        return list(dict.fromkeys(i["how"] for i in self.isolation if not i["isolated"]))

    @property
    def ran(self) -> list[CheckResult]:
        return [r for r in self.results if r.outcome != "skipped"]

    @property
    def failures(self) -> list[CheckResult]:
        return [r for r in self.results if r.outcome == "failed"]

    @property
    def passed(self) -> bool:
        """Every check that ran passed, something ran on each kind of leg the exercise needs (a bug that only
        shows on an accelerator is not passed by the CPU alone when every accelerator leg was skipped), and no
        check met a limit of the simulator: such a grade is incomplete on every machine, a GPU one too, so
        that code which provokes a limit on purpose gains nothing, and the verdict does not depend on the host."""
        return bool(self.ran) and not self.failures and not self.missing_legs() and not self.simulator_limits()

    def simulator_limits(self) -> list[CheckResult]:
        """Checks the simulator could not run (skipped by the grader, saying so)."""
        return [r for r in self.results if r.outcome == "skipped" and r.message.startswith(SIMULATOR_LIMIT)]

    def missing_legs(self) -> list[str]:
        """Leg families of the exercise on which no check ran (all skipped, or none on this machine)."""
        families = self.exercise.legs if self.exercise is not None else ()
        if self.device is not None:  # only what was asked for: 'cpu', 'sim', 'cuda:1'... ('real' may be the CPU alone)
            asked = {"cpu" if p.strip() in ("cpu", "real") else "accelerator" for p in self.device.split(",")}
            families = [f for f in families if f in asked]
        ran = {legs.family(leg) for r in self.ran for leg in r.leg.split("+") if leg not in ("-", "real")}
        return [f for f in families if f not in ran]

    def legs(self) -> list[str]:
        return sorted({r.leg for r in self.ran})

    def passed_on(self, leg: str) -> bool:
        on_leg = [r for r in self.ran if r.leg == leg]
        return bool(on_leg) and all(r.outcome == "passed" for r in on_leg)


def process_specs(exercise: Exercise, device: str | None = None) -> list[tuple[str, str]]:
    """(family, --device value) of each grading process for this exercise. No torch here: the worker finds
    the real devices itself."""
    if device is not None:
        legs.parse_syntax(device)
        return [("sim" if legs.is_simulated(device) else "real", device)]
    specs = []
    if "cpu" in exercise.legs:
        specs.append(("real", "real" if "accelerator" in exercise.legs else "cpu"))
    elif "accelerator" in exercise.legs:
        specs.append(("real", "accelerators"))
    if "accelerator" in exercise.legs:
        specs.append(("sim", "sim"))
    return specs


_SOON: dict[tuple, Future] = {}  # gradings started by grade_soon, by what they grade


def _key(exercise: Exercise, submission: Path, device: str | None) -> tuple:
    return exercise.name, exercise.timeout, tuple(exercise.legs), str(Path(submission).resolve()), device


def grade_soon(exercise: Exercise, submission: Path, device: str | None = None) -> None:
    """Start grading in a background thread; the next grade() of the same arguments returns its result.
    The thread mostly waits on the grading processes, so the caller's own work (importing its user
    interface) runs meanwhile. A result nobody asks for is dropped with the process."""
    future: Future = Future()

    def work():
        try:
            future.set_result(_grade(exercise, submission, device))
        except BaseException as exc:  # noqa: BLE001 - re-raised by grade(), in the caller's thread
            future.set_exception(exc)

    _SOON[_key(exercise, submission, device)] = future
    threading.Thread(target=work, daemon=True).start()


def grade(exercise: Exercise, submission: Path, device: str | None = None) -> Grade:
    started = _SOON.pop(_key(exercise, submission, device), None)
    if started is not None:
        return started.result()
    return _grade(exercise, submission, device)


def _grade(exercise: Exercise, submission: Path, device: str | None = None) -> Grade:
    submission = Path(submission).resolve()
    result = Grade(exercise, submission, device=device)
    jobs = [(family, {"grader": str(exercise.grader_file), "submission": str(submission), "spec": spec,
                      "timeout": exercise.timeout, "cwd": os.getcwd()})
            for family, spec in process_specs(exercise, device)]
    for (family, job), answer in zip(jobs, daemon.submit(jobs)):
        _add(result, job["spec"], answer)
    return result


def grade_many(exercise: Exercise, submissions: list[Path]) -> list[Grade]:
    """Grade several submissions of one exercise on every leg, as grade() grades each: where the host allows
    (grader.engine.batch.supported), one worker per leg family collects the checks once and grades each submission in
    a process of its own; elsewhere, or for a submission its batch did not report, one grading each."""
    from grader.engine import batch

    submissions = [Path(s).resolve() for s in submissions]
    specs = process_specs(exercise)
    base = {"grader": str(exercise.grader_file), "timeout": exercise.timeout, "cwd": os.getcwd()}
    jobs = [(family, {**base, "spec": spec, "submissions": [str(s) for s in submissions]})
            for family, spec in specs if batch.supported(family) and len(submissions) > 1]
    answers: list[dict[str, dict]] = [{} for _ in submissions]  # per submission: {spec: its process's answer}
    redo: set[int] = set()
    for (_, job), reply in zip(jobs, daemon.submit(jobs) if jobs else []):
        for i, answer in enumerate(reply.get("answers") or [reply] * len(submissions)):
            if "error" in answer or answer.get("unreported"):
                redo.add(i)  # graded again on its own, every leg family
            else:
                answers[i][job["spec"]] = answer
    grades = []
    for i, submission in enumerate(submissions):
        if i in redo:
            grades.append(_grade(exercise, submission))
            continue
        single = [(family, {**base, "spec": spec, "submission": str(submission)})
                  for family, spec in specs if spec not in answers[i]]
        for (_, job), answer in zip(single, daemon.submit(single) if single else []):
            answers[i][job["spec"]] = answer
        grade = Grade(exercise, submission)
        for _, spec in specs:  # in the order grade() adds them
            _add(grade, spec, answers[i][spec])
        grades.append(grade)
    return grades


def _add(result: Grade, spec: str, answer: dict) -> None:
    """Add one grading process's answer (its results, or why it could not run) to `result`."""
    if "error" in answer:
        answer = {"results": [{"check": "(grader process)", "leg": spec, "outcome": "failed",
                               "message": f"the grader could not run: {answer['error']}"}]}
    if answer.get("isolation"):
        result.isolation.append({"spec": spec, **answer["isolation"]})
    for r in answer["results"]:
        trace = tuple(tuple(f) for f in r.get("trace") or () if isinstance(f, list) and len(f) == 3)
        result.results.append(CheckResult(r["check"], r["leg"] or "-", r["outcome"],
                                          limits.explain(r["message"] or ""), trace, r.get("output") or ""))
