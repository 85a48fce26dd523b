"""The pytest plugin behind the hidden graders (entry point `devcourse`).

Grading mode starts with `--submission FILE`: the `submission` fixture loads the learner's file (a `.py`
or a notebook), every test that takes `device` runs once per leg chosen with `--device`, and every test that
takes `devices` runs once per pair of devices of one kind (`sim:0`+`sim:1`, `cuda:0`+`cuda:1`). Failures are
reported in the learner's terms. After every check the plugin verifies that the learner's code left the
grader, pytest, torch and builtins as they were (grader.guard.integrity). The grading worker (grader.engine.workers)
registers a `ChannelReporter` to receive one record per check. Without `--submission` the plugin does
nothing, so it is safe in any pytest run."""

from __future__ import annotations

import gc
import os
import signal
import time
import traceback
from pathlib import Path
from types import MappingProxyType

import pytest

import grader
from grader.engine import expect, limits
from grader.guard import audit, integrity
from grader.guard import audit_hooks as guard
from grader.engine import legs as legs_mod
from grader.engine.expect import GradeFailure
from grader.engine.submission import Submission, SubmissionError, describe_exception, exception_text, learner_trace

_exit = os._exit  # taken before any learner code runs
skip_leg = expect.skip_leg  # held here too: a submission that rebinds expect's name changes nothing


def pytest_addoption(parser):
    group = parser.getgroup("devcourse", "device-course grading")
    group.addoption("--submission", help="the learner's file (.py or .ipynb) to grade")
    group.addoption(
        "--device",
        default="real",
        help="device legs: real (default: cpu and every accelerator), accelerators, cpu, cuda, cuda:N, mps, "
        "or sim (the simulated accelerator, alone in its process); comma-separated",
    )
    group.addoption("--cpu-timeout", type=float, default=None,
                    help="seconds of CPU time each check may take (pytest-timeout's --timeout then limits the clock)")


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
    if config.getoption("cpu_timeout", None):
        signal.signal(signal.SIGPROF, _cpu_alarm)  # before the baseline: the grader's own handler
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
        loaded = Submission(Path(path), display_name=request.config.getoption("submission"))
    except SubmissionError as exc:
        pytest.fail(str(exc), pytrace=False)
    from grader.engine import instruments

    instruments.attribute_to(loaded.filename)  # what the checks count is told at the learner's lines
    _submission_file[0] = loaded.filename
    return loaded


def _timed_out(excinfo) -> bool:
    # how pytest-timeout fails a test: pytest.fail("Timeout ..."), not an exception the learner could raise
    return type(excinfo.value) is pytest.fail.Exception and exception_text(excinfo.value).startswith("Timeout")


def _cpu_alarm(signum, frame):
    # Raised at the next line of the learner's code or the check's, not where the signal landed: inside the
    # simulator under the autograd engine that ended the worker ("terminate called without an active exception"),
    # in a finalizer it was dropped (grader.engine.deferred_stop).
    from grader.engine import deferred_stop

    message = f"Timeout: more than {_cpu_limit[0]:g} s of CPU time"
    deferred_stop.raise_at_next_line(lambda: pytest.fail.Exception(message, pytrace=False), _checked_code, frame,
                                     again=False)


def _checked_code(filename: str) -> bool:
    """The learner's file and the checks: the code a CPU-time limit may stop."""
    return filename == _submission_file[0] or os.path.realpath(filename).startswith(_CHECKS)


_submission_file = [None]  # the loaded submission's code's file name
_CHECKS = str(Path(grader.__file__).resolve().parent / "checks") + os.sep


_cpu_limit = [0.0]
_check_started = [0.0, 0.0]  # the clock and the process's CPU time when the check's phase began

#: Below this share of the clock spent computing, a check stopped by the clock was waiting, not looping: a
#: wait burns almost nothing, and a loop gets more than this of a core on any machine short of 20 processes
#: per core.
BUSY_SHARE = 0.05


def _stuck_message(config, cpu_limit_fired: bool) -> str:
    """What a check stopped by a time limit says: true whichever limit fired, and a loop that computes is told
    as such even when a busy machine let the clock's limit come first."""
    clock_limit = config.getoption("timeout", None)
    cpu_limit = config.getoption("cpu_timeout", None)
    if cpu_limit_fired:
        return (f"your code did not finish within {cpu_limit:g} s of CPU time: it kept computing. Look for a "
                "loop that never ends.")
    used = time.process_time() - _check_started[1]
    elapsed = time.monotonic() - _check_started[0]
    if used >= BUSY_SHARE * elapsed:
        busy = (f", short of its {cpu_limit:g} s because other work kept the machine busy" if cpu_limit else "")
        return (f"your code did not finish within {clock_limit:g} s on the clock, and it was computing: "
                f"{used:.1f} s of CPU time{busy}. Look for a loop that never ends.")
    return (f"your code did not finish within {clock_limit:g} s on the clock and used almost no CPU time "
            f"({used:.1f} s): it was waiting. Look for a wait that never returns (a lock, a queue, a process that "
            "never ends).")


_TIMERS = hasattr(signal, "setitimer")  # not on Windows


def _arm_cpu_limit(config) -> None:
    """Each check may spend --cpu-timeout seconds of CPU time (grader.engine.limits says why CPU and not the clock)."""
    _check_started[:] = time.monotonic(), time.process_time()
    seconds = config.getoption("cpu_timeout", None)
    if seconds and _TIMERS:
        _cpu_limit[0] = seconds
        signal.setitimer(signal.ITIMER_PROF, seconds)


def _learner_message(item, excinfo) -> str:
    exc = excinfo.value
    if isinstance(exc, (GradeFailure, SubmissionError)):
        return str(exc)
    text = exception_text(exc)
    if _timed_out(excinfo):
        return _stuck_message(item.config, "CPU time" in text)
    if type(exc) is pytest.fail.Exception:
        return text
    path = item.config.getoption("submission")
    return describe_exception(exc, str(Path(path).resolve()))


def pytest_runtest_setup(item):
    # One endless loop is enough to know: the remaining checks fail at once instead of each timing out.
    if _grading(item.config) and getattr(item.config, "_devcourse_stuck", False):
        pytest.fail("not tried: an earlier check never finished.", pytrace=False)
    if _grading(item.config):
        guard.take_refusals()  # a check that failed in its setup (loading the file) reports its own
        _arm_cpu_limit(item.config)
        callspec = getattr(item, "callspec", None)
        expect.LEG[0] = callspec.params.get("device") if callspec is not None else None  # for running()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item):
    if _grading(item.config):
        _disarm_cpu_limit()  # a setup that failed left it armed
        expect.LEG[0] = None


def pytest_collection_finish(session):
    # Taken once the grader is imported and before the learner's code is loaded.
    if _grading(session.config):
        from grader.engine import instruments

        instruments.warm_up()
        for item in session.items:
            _skip_pytest_failure_repr(item)
        audit.guard_threads()
        guard.install()
        audit.interpreter = audit.Interpreter()
        integrity.baseline = integrity.Baseline(check_modules={item.module for item in session.items})
        integrity.baseline.hold_grader_state()
        _hold(changed=integrity.baseline.sealed(), interpreter=audit.interpreter)


#: What the plugin's own hooks use to judge a check, held in their default arguments (below, _hold): pluggy keeps
#: the hook functions themselves, learner code may neither read nor replace a function's defaults (grader.guard.audit_hooks),
#: and a read-only view of a dict is not a global that a submission could set to None or wrap.
_UNSET = MappingProxyType({})


def _hold(*, _learner=None, **state) -> None:
    """Hold `state` (the baseline's compare, the interpreter's snapshot, the channel's send) for the plugin's
    hooks. Only before learner code runs: afterwards this is refused."""
    if _learner is None:  # the first call, in a grading process before any learner code: held from now on
        _learner = guard.private("learner_asks")
        _hold.__kwdefaults__ = {"_learner": _learner}
    if _learner():
        raise guard.Refused("the grader does not run this: changing what the grader holds")
    held = {**pytest_runtest_call.__defaults__[0], **state}
    for hook in (pytest_runtest_call, pytest_runtest_makereport):
        hook.__defaults__ = (MappingProxyType(held),)


_REPLACED = "(pytest's report of this failure is replaced by the grader's message: grader.engine.plugin)"


def _skip_pytest_failure_repr(item) -> None:
    """pytest's own report of a failure (which pytest_runtest_makereport below always replaces by the learner's
    message) parses and walks the whole source file of every frame of the traceback, torch's included, and calls
    repr() on the arguments of each frame: about 15 ms of CPU per failed check, a quarter of the CPU of part 1's
    checks on a mix of right and wrong answers. A grading does without it."""
    item.repr_failure = lambda excinfo, *args, **kwargs: _REPLACED
    item._repr_failure_py = lambda excinfo, *args, **kwargs: _REPLACED


#: Exceptions that would end pytest's whole run (KeyboardInterrupt, pytest.exit's Exit) when learner code raises
#: them: each fails its own check instead, and the judge fails the checks that never reported.
_ENDS_THE_RUN = (KeyboardInterrupt, pytest.exit.Exception)


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_make_collect_report(collector):
    """Import the check module with pytest's capture off (inside capture's own wrapper, hence trylast): what it
    writes goes to the worker's output, whose end the zygote keeps, so a worker that dies while importing it
    (a native crash, os._exit) still tells why. Captured, it would die with pytest's temporary file."""
    capman = collector.config.pluginmanager.getplugin("capturemanager")
    if capman is None or not (_grading(collector.config) and isinstance(collector, pytest.File)):
        yield
        return
    with capman.global_and_fixture_disabled():
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item, _held=_UNSET):
    skip_leg.__kwdefaults__["_granted"].clear()
    _check_started[:] = time.monotonic(), time.process_time()  # a stop in the call: the call's own CPU time
    outcome = yield
    if not _grading(item.config):
        return
    _stop_the_timeout_alarm()
    if os.getpid() != item.config._devcourse_pid:
        # A process the learner's code forked is back in the grader's code (its fork returned into the check,
        # or failed there, as in a fork loop stopped at the limit): it must not grade on as a second copy.
        _exit(0)
    interpreter = _held.get("interpreter")
    left = interpreter.changes() if interpreter is not None else []
    if left:
        audit.tainted = audit.message(left)
        outcome.force_exception(GradeFailure(audit.tainted))
        return
    refused = guard.take_refusals()
    if refused:
        outcome.force_exception(GradeFailure(guard.message(refused)))
        return
    exc = outcome.excinfo[1] if outcome.excinfo is not None else None
    if isinstance(exc, _ENDS_THE_RUN):
        outcome.force_exception(GradeFailure(
            f"your code raised {type(exc).__name__}, which would stop the whole grading run: a fix never raises it "
            "(was it meant to end a loop?)."))
    elif exc is not None and exception_text(exc).startswith("(a message"):
        # pytest's own report would call str() on it and end the run with an internal error
        outcome.force_exception(GradeFailure(describe_exception(exc, str(Path(item.config.getoption("submission"))
                                                                          .resolve()))))
    changed = _held["changed"]() if "changed" in _held else []
    if changed:
        outcome.force_exception(GradeFailure(integrity.tamper_message(changed)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call, _held=_UNSET):
    outcome = yield
    if not _grading(item.config):
        return
    report = outcome.get_result()
    excinfo = call.excinfo
    if report.skipped and not _skip_granted(item, call):
        report.outcome = "failed"
        report.longrepr = ("something your code raised skipped this check (pytest's Skipped, unittest.SkipTest or "
                           "xfail): a check is skipped only by the grader, so this counts as failed.")
        report.user_properties.append(("learner_message", report.longrepr))
        excinfo = None
    if excinfo is not None and report.failed:
        if _timed_out(call.excinfo):
            item.config._devcourse_stuck = True
        message = _learner_message(item, call.excinfo)
        report.longrepr = message  # no grader traceback: the learner sees what went wrong and why
        report.user_properties.append(("learner_message", message))
        trace = learner_trace(call.excinfo.value, str(Path(item.config.getoption("submission")).resolve()))
        if trace:  # the learner's own frames, for the front ends to show under the message
            report.user_properties.append(("learner_trace", trace))
    # The outcome is sent now, before anything else runs: below, releasing the frames collects garbage, which
    # runs finalizers (a learner object's __del__).
    send = _held.get("send")
    if send is not None and (report.when == "call" or report.failed or report.skipped):
        send(_record(report))
    if audit.tainted:
        send and send({"stopped": audit.tainted})
        _exit(0)  # nothing planted may run on: the judge fails the checks that never reported
    if excinfo is not None and report.failed:
        _release_frames(excinfo.value)


def _stop_the_timeout_alarm() -> None:
    """The learner's part of the check is over: pytest-timeout's alarm (SIGALRM) must not go off in the grader's
    own hooks, where its exception would end pytest's whole run instead of failing the check. The zygote still
    stops a worker that overruns (grader.engine.workers)."""
    if _TIMERS:
        signal.setitimer(signal.ITIMER_REAL, 0)
    _disarm_cpu_limit()


def _disarm_cpu_limit() -> None:
    if _TIMERS:
        signal.setitimer(signal.ITIMER_PROF, 0)
    from grader.engine import deferred_stop

    deferred_stop.cancel()  # an alarm that went off while the check's own code ran no more lines


def _skip_granted(item, call) -> bool:
    """A skip counts when the grader raised it: a skip mark (set at collection, before learner code) on a check
    skipped in its setup, or skip_leg() in the call."""
    if call.when == "setup":
        return item.get_closest_marker("skip") is not None
    granted = skip_leg.__kwdefaults__["_granted"]
    return call.excinfo is not None and any(call.excinfo.value is exc for exc in granted)


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
    """Sends the check list, then one record per check as soon as its outcome is decided (by the plugin's
    pytest_runtest_makereport), through `send` (the grading worker's private channel): a crash mid-run keeps the
    results before it. The list is sent before any learner code has run, so the runner knows which results to
    expect and refuses any other."""

    def __init__(self, send):
        self.send = send
        self.broken: list[str] = []  # check modules that could not be collected, each with its error

    def pytest_configure(self, config):
        _hold(send=self.send)

    def pytest_collectreport(self, report):
        if report.failed:  # the grader's own module failed to import: no check of it can run
            self.broken.append(f"{Path(report.nodeid).name} could not be loaded: "
                               f"{last_error_line(str(report.longrepr))}")

    def pytest_collection_finish(self, session):
        if self.broken:  # instead of the list: pytest stops before any check (a collection error)
            self.send({"error": f"the check module {'; '.join(self.broken)}. That is a fault of the grader, not "
                                "of your code: please report it."})
            return
        self.send({"collected": [_check_and_leg(item.nodeid) for item in session.items]})


def last_error_line(text: str) -> str:
    """The line of a collection error's report that names the exception (pytest marks it 'E'), else its last."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    marked = [line[1:].strip() for line in lines if line.startswith("E ")]
    return (marked or lines or ["(no error text)"])[-1]


def _record(report) -> dict:
    check, leg = _check_and_leg(report.nodeid)
    skip_reason = report.longrepr[2] if report.skipped and isinstance(report.longrepr, tuple) else ""
    return {
        "check": check,
        "leg": leg,
        "outcome": report.outcome,
        "message": dict(report.user_properties).get("learner_message") or skip_reason.removeprefix("Skipped: "),
        "trace": dict(report.user_properties).get("learner_trace") or [],
        "seconds": round(report.duration, 3),
        "output": limits.output_tail(report.capstdout + report.capstderr),  # the learner's prints
    }


def _check_and_leg(nodeid: str) -> tuple[str, str]:
    check, _, leg = nodeid.split("::")[-1].partition("[")
    return check, leg.rstrip("]") or "-"
