"""The pytest plugin behind the hidden graders (entry point `devcourse`).

Grading mode starts with `--submission FILE`: the `submission` fixture loads the learner's file (a `.py`
or a notebook), every test that takes `device` runs once per leg chosen with `--device`, and every test that
takes `devices` runs once per pair of devices of one kind (`sim:0`+`sim:1`, `cuda:0`+`cuda:1`). Failures are
reported in the learner's terms. After every check the plugin verifies that the learner's code left the
grader, pytest, torch and builtins as they were (grader.integrity). The grading worker (grader.workers)
registers a `ChannelReporter` to receive one record per check. Without `--submission` the plugin does
nothing, so it is safe in any pytest run."""

from __future__ import annotations

import gc
import os
import traceback
from pathlib import Path

import pytest

from grader import integrity, limits
from grader import legs as legs_mod
from grader.expect import GradeFailure
from grader.submission import Submission, SubmissionError, describe_exception, learner_trace

_exit = os._exit  # taken before any learner code runs


def pytest_addoption(parser):
    group = parser.getgroup("devcourse", "device-course grading")
    group.addoption("--submission", help="the learner's file (.py or .ipynb) to grade")
    group.addoption(
        "--device",
        default="real",
        help="device legs: real (default: cpu and every accelerator), accelerators, cpu, cuda, cuda:N, mps, "
        "or sim (the simulated accelerator, alone in its process); comma-separated",
    )


def _limit_device_memory(legs: list[str]) -> None:
    """The same device memory on every card and on the simulator, whatever its size, set the same way (the
    simulator's `torch.sim` mirrors `torch.cuda` here), so a greedy submission fails alike everywhere."""
    import torch

    for leg in legs:
        device = torch.device(leg)
        if device.type == "cpu" or device.index is None:
            continue
        mod = torch.get_device_module(device)
        if hasattr(mod, "set_per_process_memory_fraction") and hasattr(mod, "get_device_properties"):
            total = mod.get_device_properties(device.index).total_memory
            mod.set_per_process_memory_fraction(min(1.0, limits.DEVICE_MEMORY / total), device.index)


def _grading(config) -> bool:
    return bool(config.getoption("submission"))


def pytest_configure(config):
    if not _grading(config):
        return
    config._devcourse_pid = os.getpid()
    try:
        config._devcourse_legs = legs_mod.parse(config.getoption("device"))
    except legs_mod.LegError as exc:
        raise pytest.UsageError(str(exc)) from None
    config._devcourse_simulated = None
    legs = config._devcourse_legs
    if legs and set(legs) <= set(legs_mod.SIMULATED_LEGS):
        import torch

        from grader import simulated

        if not simulated.is_supported():
            config._devcourse_simulated = f"the simulated accelerator needs torch >= 2.11 (this is {torch.__version__})"
            return
        simulated.install()
    _limit_device_memory(legs)


def _pairs(legs: list[str]) -> list[tuple[str, str]]:
    """Two devices of one kind, for checks about moving work between devices: the first two of each kind."""
    by_type: dict[str, list[str]] = {}
    for leg in legs:
        if ":" in leg:
            by_type.setdefault(leg.split(":")[0], []).append(leg)
    return [(found[0], found[1]) for found in by_type.values() if len(found) >= 2]


def pytest_generate_tests(metafunc):
    config = metafunc.config
    if not _grading(config):
        return
    import torch

    legs = config._devcourse_legs
    if "device" in metafunc.fixturenames:
        if config._devcourse_simulated:
            skipped = pytest.mark.skip(reason=config._devcourse_simulated)
            metafunc.parametrize("device", [pytest.param(None, id=leg, marks=skipped) for leg in legs])
        else:
            metafunc.parametrize("device", [torch.device(leg) for leg in legs], ids=str)
    if "devices" in metafunc.fixturenames:
        pairs = [] if config._devcourse_simulated else _pairs(legs)
        if pairs:
            metafunc.parametrize("devices", [tuple(map(torch.device, p)) for p in pairs],
                                 ids=["+".join(p) for p in pairs])
        else:
            why = config._devcourse_simulated or "needs two devices of one kind; these legs have none"
            metafunc.parametrize("devices", [pytest.param(None, id="pair", marks=pytest.mark.skip(reason=why))])


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


def pytest_collection_finish(session):
    # Taken once the grader is imported and before the learner's code is loaded.
    if _grading(session.config):
        from grader import instruments

        instruments.warm_up()
        integrity.baseline = integrity.Baseline()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    outcome = yield
    if not _grading(item.config):
        return
    if os.getpid() != item.config._devcourse_pid:
        # A process the learner's code forked is back in the grader's code (its fork returned into the check,
        # or failed there, as in a fork loop stopped at the limit): it must not grade on as a second copy.
        _exit(0)
    if integrity.baseline is None:
        return
    changed = integrity.baseline.changed()
    if changed:
        outcome.force_exception(GradeFailure(integrity.tamper_message(changed)))


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
        trace = learner_trace(call.excinfo.value, str(Path(item.config.getoption("submission")).resolve()))
        if trace:  # the learner's own frames, for the front ends to show under the message
            report.user_properties.append(("learner_trace", trace))
        _release_frames(call.excinfo.value)


def _release_frames(exc: BaseException | None) -> None:
    """Let go of the locals of a failed check's frames once its report is made. Otherwise the exception (kept
    by pytest until the next failure) keeps them alive to the end of the process, and with them what the
    learner's code started: a DataLoader iterator's worker processes would outlive the checks and be counted
    as left running, on some machines and not on others."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        traceback.clear_frames(exc.__traceback__)
        exc = exc.__cause__ or exc.__context__
    gc.collect()


class ChannelReporter:
    """Sends the check list, then one record per check as it finishes, through `send` (the grading worker's
    private channel): a crash mid-run keeps the results before it. The list is sent before any learner code
    has run, so the runner knows which results to expect and refuses any other."""

    def __init__(self, send):
        self.send = send

    def pytest_collection_finish(self, session):
        self.send({"collected": [_check_and_leg(item.nodeid) for item in session.items]})

    def pytest_runtest_logreport(self, report):
        if report.when != "call" and not (report.failed or report.skipped):
            return
        check, leg = _check_and_leg(report.nodeid)
        skip_reason = report.longrepr[2] if report.skipped and isinstance(report.longrepr, tuple) else ""
        self.send({
            "check": check,
            "leg": leg,
            "outcome": report.outcome,
            "message": dict(report.user_properties).get("learner_message") or skip_reason.removeprefix("Skipped: "),
            "trace": dict(report.user_properties).get("learner_trace") or [],
            "seconds": round(report.duration, 3),
            "output": limits.output_tail(report.capstdout + report.capstderr),  # the learner's prints
        })


def _check_and_leg(nodeid: str) -> tuple[str, str]:
    check, _, leg = nodeid.split("::")[-1].partition("[")
    return check, leg.rstrip("]") or "-"
