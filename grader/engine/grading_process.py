"""One grading process (a worker): runs the hidden checks of one job with pytest, sending each result through
its channel, and ends."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from grader.engine import legs, limits, process_setup
from grader.engine.process_setup import (
    _confine_if_deferred, _confine_job, _dumps, _exit, _limit_host_memory, _one_cpu_thread, _start_worker, _write,
    fresh_draws,
)
from grader.guard import sandbox

# Built-in pytest plugins a grading run has no use for (no grader uses their fixtures or options); each costs
# time in every worker: unraisableexception a few full garbage collections, logging a handler around each
# phase of each check. Together about 20 ms of CPU per worker. capture stays (a learner's endless print
# fills a capped file, not the zygote's pipe), and warnings too (a check runs as it did when it was written).
UNUSED_PYTEST_PLUGINS = ("cacheprovider", "unraisableexception", "threadexception", "doctest", "junitxml",
                         "pastebin", "legacypath", "logging", "stepwise", "setuponly", "setupplan", "python_path",
                         "recwarn", "tmpdir", "monkeypatch", "randomly")


def _pytest_args(job: dict) -> list[str]:
    return [
        job["grader"], *(f"-pno:{name}" for name in UNUSED_PYTEST_PLUGINS), "--assert=plain", "-c", os.devnull,
        "--rootdir",
        str(Path(job["grader"]).parent), "--confcutdir", str(Path(job["grader"]).parent),  # lists only that folder
        f"--timeout={limits.wall_limit(job['timeout'])}",
        f"--cpu-timeout={job['timeout']}", "--submission", job["submission"],
        "--device", job["spec"], "-q", "--no-header", "-o", "addopts=",
    ]


def _work(job: dict, wfd: int, token: str, exit_code: int, out_fd: int | None) -> None:
    """Body of a worker process. Never returns. Its output goes to `out_fd` (a pipe the zygote drains)."""
    _start_worker(out_fd)
    _run(job, wfd, token, exit_code)


def _run(job: dict, wfd: int, token: str, exit_code: int) -> None:
    """Grade `job` in this worker, sending its records through `wfd`. Never returns."""
    os.chdir(job["cwd"])
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the plugins a grader needs are passed explicitly

    from grader.guard import audit_hooks as guard

    # The token, the descriptor and what tells learner code on the stack in defaults, which learner code can
    # neither read nor replace (grader.guard.audit_hooks); called with learner code on the stack (a submission that found
    # this function through the objects it can reach), it refuses.
    def send(record: dict, _token=token, _wfd=wfd, _dumps=_dumps, _write=_write,
             _learner=guard.private("learner_asks"), _refused=guard.refused_sending) -> None:
        if _learner():
            _refused()
        data = (_dumps({**record, "token": _token}) + "\n").encode()
        while data:
            data = data[_write(_wfd, data):]

    try:
        import pytest
        import pytest_timeout

        from grader.engine import plugin
        from grader.guard import integrity

        if "submissions" not in job:  # a batch worker runs no learner code: each answer process counts its own
            integrity.guard_processes()
        _limit_host_memory(job["spec"])
        _confine_if_deferred()  # CUDA has started
        _one_cpu_thread()
        _confine_job(job)
        fresh_draws()
        if "submissions" in job:  # many answers of one exercise, one collection (grader.engine.batch)
            from grader.engine import batch

            batch.set_not_dumpable()
            family = "sim" if legs.is_simulated(job["spec"]) else "real"
            loop = batch.BatchLoop(job, send, wfd, family)
            rc = pytest.main(_pytest_args({**job, "submission": job["submissions"][0]}),
                             plugins=[plugin, pytest_timeout, loop])
            send({"end": int(rc)})
            _exit(exit_code)
        isolation = process_setup._isolation or sandbox.Isolation(False, "this grading process was not confined (a grader bug)")
        send({"isolation": isolation.how, "isolated": isolation.available})  # before "collected" (judge)
        rc = pytest.main(_pytest_args(job), plugins=[plugin, pytest_timeout, plugin.ChannelReporter(send)])
        send({"end": int(rc)})
    except BaseException as exc:  # noqa: BLE001 - whatever happened, the zygote must hear of it
        with contextlib.suppress(BaseException):
            send({"error": f"{type(exc).__name__}: {exc}"})
        _exit(70)
    _exit(exit_code)
