"""Many answers to one exercise graded by one worker: pytest starts and collects the checks once, then each answer
runs in a fork of its own (a class's answers, grader.classroom.answers).

A worker spends most of a small exercise's grading before any learner code runs: pytest's start, importing the
check module, collecting its checks, and the baseline the plugin takes of them (about 0.07 s of CPU of 0.1 to
0.3 s on the real legs; benchmarks/results/classroom_autograde.md). A *batch worker* does that once, then, for
each answer in turn, forks an *answer process* that grades that answer alone and ends. The batch worker itself
never runs learner code: it judges each answer process from what it can vouch for, exactly as a zygote judges a
worker (grader.engine.grading_process: the check list sent before learner code ran, one result per check, the token, the
exit code), stops what the answer's code left running, and sends the verdict on. What one answer cannot do to
another of its batch:

* change its memory: each runs in its own process, forked from the batch worker before any learner code, one
  after the other, in a PID namespace of its own under a keeper (grader.guard.containment): everything it started is
  killed, and counted against it, before the next one starts;
* read or write another's files: each confines itself into a Landlock domain of its own, nested in the batch
  worker's (grader.guard.sandbox), by which it reads only its own answer file and writes only a private folder of its
  own, removed after it; it runs as nobody;
* reach the batch worker: the batch worker's channel is closed in the answer process before learner code runs,
  the batch worker is not dumpable (its memory and descriptors cannot be opened through /proc by its
  children), and Landlock refuses tracing or signalling a process outside the answer's own domain;
* use up a limit of the next one: the process limit (grader.guard.integrity.guard_processes) is counted per answer
  process, and pytest's output capture is started afresh in each.

Where CUDA would start in the batch worker (the real legs on a machine with NVIDIA GPUs), an answer process could
not use it after the fork: such answers are graded one worker each, as before (`supported`).
"""

from __future__ import annotations

import contextlib
import gc
import os
import secrets

from grader.engine import judging, legs, limits, process_setup
from grader.guard import containment, sandbox

_exit = os._exit
_fork = getattr(os, "fork", None)


def supported(family: str) -> bool:
    """Whether a batch worker of this family may grade answers in forks: fork mode, and no CUDA in the family
    (the simulated family hides the GPUs)."""
    return process_setup.use_fork() and (family == "sim" or not process_setup._has_nvidia_gpus())


def set_not_dumpable() -> None:
    """Make this process's memory and descriptors unreadable through /proc to processes of its user that are not
    root (PR_SET_DUMPABLE 0): an answer process cannot read the batch's token or write to its channel."""
    import ctypes

    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE


class BatchLoop:
    """pytest plugin of a batch worker: after the one collection, grade each of `job["submissions"]` in an answer
    process of its own (instead of pytest's own test loop, which runs only in the answer processes)."""

    def __init__(self, job: dict, send, channel: int, family: str):
        self.job, self.send, self.channel, self.family = job, send, channel, family
        self.answering = False  # True in an answer process (pids do not tell: each is pid 2 of its namespace)

    def pytest_runtestloop(self, session):
        if self.answering or session.testsfailed:
            return None  # in an answer process: pytest's own loop; a check module that failed to import: say so
        self.send({"collected": [_check_and_leg(item.nodeid) for item in session.items]})
        judge_here = judging.Collector(set())  # a subreaper
        for index, submission in enumerate(self.job["submissions"]):
            self.send({"alive": index})
            graded = self._grade_one(session, judge_here, submission, index)
            self.send({"answer": index, "graded": graded})
        return True

    def _grade_one(self, session, judge_here, submission: str, index: int) -> dict:
        token, exit_code = secrets.token_hex(16), 64 + secrets.randbelow(60)
        rfd, wfd = os.pipe()
        ofd, owfd = os.pipe()
        private = sandbox.private_folder()  # inside the batch worker's own private folder
        gc.freeze()  # the answer process's collections skip what is here (and copy none of its pages)
        pid, report = containment.fork_contained(_fork)  # in a PID namespace of its own, under a keeper
        if pid == 0:
            try:
                os.close(rfd)
                os.close(ofd)
                os.close(self.channel)  # the batch's channel: nothing of this answer may reach it
                self.answering = True
                _answer_process(session, submission, private, wfd, owfd, token, exit_code, self.family,
                                self.job["grader"])
            finally:
                _exit(70)
        os.close(wfd)
        os.close(owfd)
        try:
            lines, output, status, stopped = judge_here._collect(
                pid, rfd, ofd, limits.wall_limit(float(self.job["timeout"])),
                on_record=lambda: self.send({"alive": index}))
        finally:
            os.close(rfd)
            os.close(ofd)
        status, contained = containment.outcome(report, status)
        leftovers = judge_here._stop_leftovers(pid) + contained
        sandbox.remove(private)
        return judging.judge(lines, token, exit_code, status, stopped, leftovers, output, self.job)


def _answer_process(session, submission: str, private, wfd: int, out_fd: int, token: str, exit_code: int,
                    family: str, check: str) -> None:
    """Body of an answer process: start afresh what is per answer, then pytest's own test loop. Never returns."""
    from grader.engine import plugin
    from grader.guard import integrity

    config = session.config
    capture = config.pluginmanager.getplugin("capturemanager")
    capture.stop_global_capturing()  # its files are the batch worker's: this answer's output goes to its own
    process_setup._start_worker(out_fd)
    capture.start_global_capturing()
    capture.suspend_global_capture()  # as between two checks
    sandbox.confine(private)  # a Landlock domain of its own, inside the batch worker's
    isolation = sandbox.confine_job(private, [submission, check], [os.path.dirname(check)])  # and as nobody
    integrity.guard_processes()  # its own count, and the batch worker may not be signalled
    if legs.is_simulated(config.getoption("device")):
        from grader.simulated import reset_after_fork

        reset_after_fork()
    process_setup.fresh_draws()  # each answer draws its own inputs, not the batch worker's

    from grader.guard import audit_hooks as guard

    # As the lone worker's send (grader.engine.grading_process._run): what it needs in defaults, refused to learner code
    def send(record: dict, _token=token, _wfd=wfd, _dumps=process_setup._dumps, _write=process_setup._write,
             _learner=guard.private("learner_asks"), _refused=guard.refused_sending) -> None:
        if _learner():
            _refused()
        data = (_dumps({**record, "token": _token}) + "\n").encode()
        while data:
            data = data[_write(_wfd, data):]

    try:
        config.option.submission = submission
        config._devcourse_pid = os.getpid()
        plugin._hold(send=send)
        send({"isolation": isolation.how, "isolated": isolation.available})
        send({"collected": [_check_and_leg(item.nodeid) for item in session.items]})
        config.hook.pytest_runtestloop(session=session)
        send({"end": 0})
    except BaseException as exc:  # noqa: BLE001 - whatever happened, the batch worker must hear of it
        with contextlib.suppress(BaseException):
            send({"error": f"{type(exc).__name__}: {exc}"})
        _exit(70)
    _exit(exit_code)


def _check_and_leg(nodeid: str):
    from grader.engine.plugin import _check_and_leg as split

    return split(nodeid)


def judge_batch(lines, token: str, stopped, leftovers: int, tail: str, job: dict) -> dict:
    """The answers of a batch job, from its batch worker's records (stamped with its token). An answer it never
    reported (the batch worker died or was stopped) comes back with `unreported`, to be graded on its own."""
    import json

    graded: dict[int, dict] = {}
    count = len(job["submissions"])
    for line in lines:
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            rec = json.loads(line)
            if rec.pop("token", None) == token and "answer" in rec:
                index = rec["answer"]
                if isinstance(index, int) and 0 <= index < count and index not in graded:
                    graded[index] = rec["graded"]
    why = stopped or (f"the batch worker ended after {len(graded)} of {count} answers: "
                      f"{tail.strip().splitlines()[-1] if tail.strip() else 'no output'}")
    missing = {"unreported": why, "isolation": None, "results": [
        {"check": "(grader process)", "leg": job["spec"], "outcome": "failed", "seconds": 0,
         "message": f"the grader could not run: {why}"}]}
    return {"answers": [graded.get(i, missing) for i in range(count)], "leftovers": leftovers}
