"""The zygote of a leg family: grades each job in a new worker, forked from it (or a spare one started ahead,
where fork is unsafe), and judges what the worker sent (grader.engine.judging)."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
from pathlib import Path

from grader.engine import limits
from grader.engine.grading_process import _run, _work
from grader.engine.judging import START_LIMIT, Collector, _become_subreaper, judge
from grader.engine.process_setup import (
    _confine_soon, _exit, _fork, _has_nvidia_gpus, _start_gpus, _start_worker, use_fork, warms_gpus,
)
from grader.guard import containment, sandbox

class Spare:
    """A worker started ahead of time (spawn mode), waiting on stdin for its one job: a new Python, exec'ed by a
    fork that fork_contained made, so that it runs in a PID namespace of its own under a keeper, as a forked
    worker does (grader.guard.containment; `--contained` tells it so)."""

    def __init__(self, family: str):
        self.rfd, wfd = os.pipe()
        job_r, self.job_w = os.pipe()
        self.out_fd, out_w = os.pipe()
        self.private = sandbox.private_folder()  # the worker's only writable folder; removed after its job
        argv = [sys.executable, "-m", "grader.engine.workers", "spare", "--family", family, "--fd", str(wfd),
                "--private", str(self.private)]
        if sys.platform.startswith("linux"):
            self.pid, self.report = containment.fork_contained(_fork, uses_cuda=family == "real")
        else:  # macOS: no namespaces, and a fork that execs at once
            self.pid, self.report = _fork(), None
        if self.pid == 0:
            try:
                with contextlib.suppress(OSError):
                    os.setsid()  # no signal of the learner's terminal reaches it
                os.dup2(job_r, 0)
                os.dup2(out_w, 1)
                os.dup2(out_w, 2)
                os.set_inheritable(wfd, True)
                os.execv(sys.executable, argv + (["--contained"] if containment.CONTAINED else []))
            finally:
                _exit(70)
        for fd in (wfd, job_r, out_w):
            os.close(fd)

    def start(self, job: dict, token: str, exit_code: int) -> int:
        """Hand the job over; the pid to wait for (the keeper's)."""
        with os.fdopen(self.job_w, "w") as f:
            f.write(json.dumps({"job": job, "token": token, "exit_code": exit_code}) + "\n")
        return self.pid

    def discard(self) -> None:
        """The zygote is ending: stop the spare (killing its keeper ends its namespace) and remove its folder."""
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        for fd in (self.rfd, self.job_w, self.out_fd, *([self.report] if self.report is not None else [])):
            with contextlib.suppress(OSError):
                os.close(fd)
        sandbox.remove(self.private)


class ForkedWorker:
    """A fork of the zygote that starts (_start_worker), then waits for its job on a pipe. `warm_gpus`: it also
    starts CUDA on every GPU meanwhile, for a worker forked before its job is known (ReadyHandler)."""

    def __init__(self, zygote: "Zygote", warm_gpus: bool = False, private_fds=()):
        self.rfd, wfd = os.pipe()
        self.ofd, owfd = os.pipe()
        jr, self.jw = os.pipe()
        self.private = sandbox.private_folder()  # the worker's only writable folder; removed after its job
        # Its keeper's pid and report (grader.guard.containment); a handler forks one worker. One of the real family
        # on a machine with NVIDIA GPUs starts CUDA, which needs a network namespace of its own (containment says why).
        self.pid, self.report = containment.fork_contained(_fork, last=True, uses_cuda=zygote.family == "real")
        if self.pid == 0:
            try:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                if zygote.family == "sim":  # a fork on purpose: this worker may use the simulator its parent set up
                    from grader.simulated import reset_after_fork

                    reset_after_fork()
                # else the learner's code could answer the client itself
                for fd in (self.rfd, self.ofd, self.jw, *zygote.private_fds, *private_fds):
                    with contextlib.suppress(OSError):
                        os.close(fd)
                _start_worker(owfd)
                if warm_gpus:
                    _start_gpus()
                _confine_soon(self.private, zygote.family, gpus_started=warm_gpus)
                with os.fdopen(jr, "rb") as f:
                    request = json.loads(f.read() or b"{}")
                if not request:
                    _exit(0)  # no job came: the daemon is ending
                _run(request["job"], wfd, request["token"], request["exit_code"])
            finally:
                _exit(70)
        os.close(wfd)
        os.close(owfd)
        os.close(jr)

    def start(self, job: dict, token: str, exit_code: int) -> int:
        with os.fdopen(self.jw, "wb") as f:
            f.write(json.dumps({"job": job, "token": token, "exit_code": exit_code}).encode())
        return self.pid

    def cancel(self) -> None:
        for fd in (self.jw, self.rfd, self.ofd, *([self.report] if self.report is not None else [])):
            os.close(fd)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        sandbox.remove(self.private)


class ReadyHandler:
    """A handler forked before its job, with its worker forked and started too (the simulator reset; CUDA's
    context made on every GPU, 0.3 to 0.6 s on an H100 machine). The zygote keeps one while it is idle and hands
    the next job's connection to it (SCM_RIGHTS over a socket pair): that check starts grading at once."""

    def __init__(self, zygote: "Zygote"):
        self.chan, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.pid = _fork()
        if self.pid == 0:
            self.chan.close()
            code = 70
            try:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                _become_subreaper()  # the orphans of its worker's code come back to the handler, which stops them
                code = self._serve_one(zygote, theirs)
            finally:
                _exit(code)
        theirs.close()

    @staticmethod
    def _serve_one(zygote: "Zygote", chan: socket.socket) -> int:
        worker = ForkedWorker(zygote, warm_gpus=warms_gpus(zygote.family), private_fds=(chan.fileno(),))
        try:
            data, fds, _, _ = socket.recv_fds(chan, 1 << 20, 1)
        except OSError:
            data, fds = b"", []
        if not fds:  # the zygote is ending
            worker.cancel()
            return 0
        with socket.socket(fileno=fds[0]) as conn, conn.makefile("wb") as stream:
            zygote.client = conn.fileno()
            _reply(stream, _graded_reply(zygote, json.loads(data), worker))
        return 0

    def take(self, conn: socket.socket, job: dict) -> int | None:
        """Hand over the job and its client's connection; the handler's pid, or None if it is gone."""
        try:
            socket.send_fds(self.chan, [json.dumps(job).encode()], [conn.fileno()])
        except OSError:
            return None
        finally:
            self.chan.close()
        return self.pid

    def discard(self) -> None:
        self.chan.close()
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


class Zygote(Collector):
    def __init__(self, family: str, folder: Path, keep: set[int]):
        super().__init__(keep)
        self.family = family
        self.folder = folder
        self.fork = use_fork()
        self.spare = Spare(family) if not self.fork else None
        self.private_fds: list[int] = []  # the sockets a worker must not inherit
        self.ready: ReadyHandler | None = None  # fork mode: a handler started ahead of the next job
        # Its ready worker makes CUDA's contexts, which takes long enough to start it before the zygote is idle.
        self.ready_at_once = warms_gpus(family) and _has_nvidia_gpus()

    def run_job(self, job: dict, worker: "ForkedWorker | None" = None) -> dict:
        """Grade `job` in a new worker (or in `worker`, forked and started ahead of it) and judge the result."""
        token, exit_code = secrets.token_hex(16), 64 + secrets.randbelow(60)
        report = None
        if self.fork:
            worker = worker or ForkedWorker(self)
            rfd, ofd, pid, private = worker.rfd, worker.ofd, worker.start(job, token, exit_code), worker.private
            report = worker.report
        else:
            spare, self.spare = self.spare, Spare(self.family)
            rfd, ofd, private, report = spare.rfd, spare.out_fd, spare.private, spare.report
            pid = spare.start(job, token, exit_code)
        try:
            lines, output, status, stopped = self._collect(pid, rfd, ofd, self.silence_limit(job))
        finally:
            os.close(rfd)
            os.close(ofd)
        status, contained = containment.outcome(report, status)  # the worker's own, from its keeper
        leftovers = self._stop_leftovers(pid) + contained
        sandbox.remove(private)  # once nothing of the worker runs
        if "submissions" in job:
            from grader.engine import batch

            return batch.judge_batch(lines, token, stopped, leftovers, output, job)
        return judge(lines, token, exit_code, status, stopped, leftovers, output, job)

    @staticmethod
    def silence_limit(job: dict) -> float:
        """How long a started worker may stay silent: its check's limit on the clock. A batch worker (grader.engine.batch)
        reports after each record of its answer processes; between two answers, an answer process may take
        START_LIMIT to start."""
        return limits.wall_limit(float(job["timeout"])) + (START_LIMIT if "submissions" in job else 0)


def _handle(zygote: "Zygote", stream, job: dict, client: int | None = None) -> int:
    """Fork a handler that grades `job` (in a worker of its own), answers on `stream` and ends; its pid.
    `client`: the connection's descriptor, whose hang-up stops the check."""
    pid = _fork()
    if pid:
        return pid
    code = 70
    zygote.client = client
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _become_subreaper()  # the orphans of its worker's code come back to the handler, which stops them
        _reply(stream, _graded_reply(zygote, job))
        code = 0
    finally:
        _exit(code)


def _graded_reply(zygote: "Zygote", job: dict, worker: ForkedWorker | None = None) -> dict:
    try:
        return zygote.run_job(job, worker)
    except Exception as exc:  # noqa: BLE001 - answer, then keep serving
        return {"error": f"{type(exc).__name__}: {exc}"}


def _reply(stream, reply: dict) -> None:
    stream.write((json.dumps(reply) + "\n").encode())
    stream.flush()
