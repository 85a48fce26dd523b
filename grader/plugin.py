"""The pytest plugin behind the hidden graders (entry point `devcourse`).

Grading mode starts with `--submission FILE`: the `submission` fixture loads the learner's file (a `.py`
or a notebook), and every test that takes `device` runs once per leg chosen with `--device`. Failures
are reported in the learner's terms, and `--grade-report` writes one JSON line per check for the runner.
Without `--submission` the plugin does nothing, so it is safe in any pytest run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader import legs as legs_mod
from grader.expect import GradeFailure
from grader.submission import Submission, SubmissionError, describe_exception


def pytest_addoption(parser):
    group = parser.getgroup("devcourse", "device-course grading")
    group.addoption("--submission", help="the learner's file (.py or .ipynb) to grade")
    group.addoption(
        "--device",
        default="real",
        help="device legs: real (default: cpu and every accelerator), accelerators, cpu, cuda, cuda:N, mps, "
        "or sim (the simulated accelerator, alone in its process); comma-separated",
    )
    group.addoption("--grade-report", help="append one JSON line per check to this file")


def _grading(config) -> bool:
    return bool(config.getoption("submission"))


def pytest_configure(config):
    if not _grading(config):
        return
    try:
        config._devcourse_legs = legs_mod.parse(config.getoption("device"))
    except legs_mod.LegError as exc:
        raise pytest.UsageError(str(exc)) from None
    if config.getoption("grade_report"):
        config.pluginmanager.register(GradeReporter(config.getoption("grade_report")), "devcourse-report")
    config._devcourse_simulated = None
    if config._devcourse_legs == [legs_mod.SIMULATED]:
        import torch

        from grader import simulated

        if simulated.is_supported():
            simulated.install()
        else:
            config._devcourse_simulated = f"the simulated accelerator needs torch >= 2.11 (this is {torch.__version__})"


def pytest_generate_tests(metafunc):
    config = metafunc.config
    if _grading(config) and "device" in metafunc.fixturenames:
        import torch

        if config._devcourse_simulated:
            legs = [pytest.param(None, id="sim:0", marks=pytest.mark.skip(reason=config._devcourse_simulated))]
            metafunc.parametrize("device", legs)
            return
        metafunc.parametrize("device", [torch.device(leg) for leg in config._devcourse_legs], ids=str)


@pytest.fixture
def submission(request) -> Submission:
    path = request.config.getoption("submission")
    if not path:
        pytest.skip("not grading: pass --submission FILE")
    try:
        return Submission(Path(path), display_name=request.config.getoption("submission"))
    except SubmissionError as exc:
        pytest.fail(str(exc), pytrace=False)


def _timed_out(excinfo) -> bool:
    return str(excinfo.value).startswith("Timeout")  # how pytest-timeout fails a test


def _learner_message(item, excinfo) -> str:
    exc = excinfo.value
    if isinstance(exc, (GradeFailure, SubmissionError)):
        return str(exc)
    text = str(exc)
    if _timed_out(excinfo):
        timeout = item.config.getoption("timeout", None)
        return (
            f"your code did not finish within {timeout:g} s: look for a loop that never ends or a wait that never "
            "returns."
        )
    if isinstance(exc, pytest.fail.Exception):
        return text
    path = item.config.getoption("submission")
    return describe_exception(exc, str(Path(path).resolve()))


def pytest_runtest_setup(item):
    # One endless loop is enough to know: the remaining checks fail at once instead of each timing out.
    if _grading(item.config) and getattr(item.config, "_devcourse_stuck", False):
        pytest.fail("not tried: an earlier check never finished.", pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if not _grading(item.config):
        return
    report = outcome.get_result()
    if call.excinfo is not None and report.failed:
        if _timed_out(call.excinfo):
            item.config._devcourse_stuck = True
        message = _learner_message(item, call.excinfo)
        report.longrepr = message  # no grader traceback: the learner sees what went wrong and why
        report.user_properties.append(("learner_message", message))


class GradeReporter:
    """Writes one JSON line per check as it finishes, so a crash mid-run keeps the results before it."""

    def __init__(self, path: str):
        self.path = path

    def _write(self, record: dict):
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def pytest_collection_finish(self, session):
        # The runner compares this with the checks reported, so a process that ends early is noticed.
        self._write({"collected": len(session.items)})

    def pytest_runtest_logreport(self, report):
        if report.when != "call" and not (report.failed or report.skipped):
            return
        check, _, leg = report.nodeid.split("::")[-1].partition("[")
        skip_reason = report.longrepr[2] if report.skipped and isinstance(report.longrepr, tuple) else ""
        skip_reason = skip_reason.removeprefix("Skipped: ")
        self._write({
            "check": check,
            "leg": leg.rstrip("]") or None,
            "outcome": report.outcome,
            "message": dict(report.user_properties).get("learner_message") or skip_reason,
            "seconds": round(report.duration, 3),
        })
