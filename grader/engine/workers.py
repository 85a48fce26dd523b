"""Warm grading processes, so that a check takes a fraction of a second instead of a fresh Python each time.

One *zygote* per leg family waits on a Unix socket in the daemon's folder: `real.sock` (the CPU, every GPU,
MPS) and `sim.sock` (the simulated accelerator, installed in that zygote only, since its registration is
process-wide and for good). A zygote has imported torch, pytest and the grader but has never initialised a
GPU and never run learner code. For each job it starts a *worker* that grades one submission and ends:

* where `fork` is safe (Linux), the worker is a fork of the zygote, so CUDA is initialised after the fork.
  Each job has a *handler* (a fork of the zygote that starts the worker, watches it and answers), so that
  a zygote grades several jobs at once (a class graded in parallel, two checks started together; MAX_JOBS,
  beyond which a job waits in the zygote while pings are still answered). An idle
  zygote keeps one handler and its worker started ahead of the next job (ReadyHandler): on a GPU machine
  that worker makes CUDA's context on every GPU while the learner edits, instead of during the check, and
  is forked as soon as the last one is taken;
* elsewhere (macOS, or `DEVCOURSE_WORKERS=spawn`), a spare worker is kept started and warm, and replaced
  after each job; jobs are graded one at a time.

A zygote answers at once after its start, through a *stand-in* (a fork) while it imports what only some
learner code needs (WARM_UP_IMPORTS), then takes over. In fork mode one process imports torch for both
families, and WARM_UP_IMPORTS on a second core while the stand-ins answer the first checks (_serve_forked).

The worker runs pytest in-process and sends its records through a pipe of its own, each stamped with a
token the zygote made for this job. The zygote trusts only what it can check: the list of checks sent
before any learner code ran, one result per check of that list, the token, and an exit code it chose. It
enforces the time limits, stops every process the learner's code left behind, and answers with the results.

Run as `python -m grader.engine.workers serve --dir DIR` (grader.engine.daemon starts it; it ends after some idle minutes
or on request).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import selectors
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grader
from grader.engine import legs, limits, settings
from grader.guard import containment, namespaces, sandbox

# Taken before any learner code can replace them.
_exit = os._exit
_write = os.write
_os_fork = getattr(os, "fork", None)
_dumps = json.dumps


def _fork() -> int:
    """os.fork, with SIGTERM held back until fork's own after-fork hooks have run. A zygote ends on SIGTERM by
    raising SystemExit from its handler; raised inside such a hook (logging's lock release, in the parent) the
    exception is printed and dropped, and the zygote served on after its daemon had ended (seen on a loaded
    2-core machine: tests/test_daemon.py's stop during the warm-up, 2 runs in 60 beside a CPU burner). Released
    here, the signal is handled in our code."""
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        return _os_fork()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


FAMILIES = ("real", "sim")
IDLE_SECONDS = settings.idle_seconds(lenient=True)  # checked by grader.engine.daemon.ensure
GRACE_SECONDS = 5.0  # after a check's own limit on the clock (limits.wall_limit), before the worker is killed
OUTPUT_TAIL = 4000  # characters of a worker's own output kept, to explain a grader that could not run
# Built-in pytest plugins a grading run has no use for (no grader uses their fixtures or options); each costs
# time in every worker: unraisableexception a few full garbage collections, logging a handler around each
# phase of each check. Together about 20 ms of CPU per worker. capture stays (a learner's endless print
# fills a capped file, not the zygote's pipe), and warnings too (a check runs as it did when it was written).
UNUSED_PYTEST_PLUGINS = ("cacheprovider", "unraisableexception", "threadexception", "doctest", "junitxml",
                         "pastebin", "legacypath", "logging", "stepwise", "setuponly", "setupplan", "python_path",
                         "recwarn", "tmpdir", "monkeypatch", "randomly")
START_LIMIT = 120.0  # seconds for a worker to import the grader and collect its checks


def use_fork() -> bool:
    mode = os.environ.get("DEVCOURSE_WORKERS", "")
    if mode in ("fork", "spawn"):
        return mode == "fork"
    return _fork is not None and sys.platform.startswith("linux")


#: The grader's modules a worker runs (graders under checks/ are imported fresh by each worker, and the
#: front ends never run in one): a zygote older than any of them is stale.
WORKER_MODULES = ("__init__", "engine/__init__", "engine/plugin", "engine/expect", "engine/instruments", "engine/measurement",
                  "engine/submission", "engine/legs", "engine/limits", "engine/workers", "engine/lazy_dynamo",
                  "engine/batch", "engine/settings", "guard/__init__", "guard/integrity", "guard/sandbox",
                  "guard/off_switch", "guard/namespaces", "guard/containment", "guard/audit", "guard/learner_values",
                  "guard/policy", "guard/policy_rules", "guard/audit_hooks", "catalog/__init__", "catalog/course")


def code_digest() -> str:
    """Changes whenever the code a worker runs, the Python running it, or whether workers are isolated
    (DEVCOURSE_ISOLATION, read by the daemon's processes) changes."""
    import hashlib

    root = Path(grader.__file__).resolve().parent
    files = [root / f"{m}.py" for m in WORKER_MODULES] + sorted((root / "simulated").rglob("*.py"))
    stamp = [sys.executable, sys.version, f"isolation off={sandbox.turned_off()}"]
    stamp += [f"{f}:{f.stat().st_mtime_ns}" for f in files if f.exists()]
    return hashlib.sha256("\n".join(stamp).encode()).hexdigest()[:16]


# ----------------------------------------------------------------------------------------------------------
# The worker: grades one job and ends
# ----------------------------------------------------------------------------------------------------------
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


#: How this worker was confined (_confine), before any learner code ran; sent with its records.
_isolation: sandbox.Isolation | None = None


_private_dir = None  # where this worker may write, once confined or to be confined (after CUDA starts: _confine_soon)


def _confine(private_dir) -> None:
    """Confine this worker (grader.guard.sandbox), while it has one thread where it can: Landlock restricts the calling
    thread and what it starts later, so PyTorch's threads, started afterwards, are confined too."""
    global _isolation, _private_dir
    _isolation = sandbox.confine(private_dir)
    _private_dir = private_dir


def _confine_soon(private_dir, family: str, gpus_started: bool) -> None:
    """Confine now, or once CUDA has started where this worker will use NVIDIA GPUs: CUDA cannot start in a
    confined process (cudaGetDeviceCount fails with error 304 under Landlock on 2 x H100, torch 2.11, driver 580;
    tools/GPU_RUNS.md). Then CUDA's own threads stay unconfined; the learner's code runs on the main thread,
    which is confined, as is every thread and process it starts."""
    global _private_dir
    if family == "real" and _has_nvidia_gpus() and not gpus_started:
        _private_dir = private_dir  # _run confines right after _limit_host_memory has started CUDA
    else:
        _confine(private_dir)


def _confine_job(job: dict) -> None:
    """Restrict this confined worker's reading to what its job needs, and drop its privileges (a batch worker
    keeps them, to start each answer's PID namespace: its answer processes drop them; grader.engine.batch)."""
    global _isolation
    if _isolation is None or _private_dir is None:
        return
    batch = "submissions" in job
    readable = [*(job["submissions"] if batch else [job["submission"]]), job["grader"]]
    _isolation = sandbox.confine_job(_private_dir, readable, [os.path.dirname(job["grader"])], drop=not batch)


def _confine_if_deferred() -> None:
    """Confine a worker that _confine_soon left unconfined until CUDA had started; nothing for one confined."""
    if _isolation is None and _private_dir is not None:
        _confine(_private_dir)


def _start_worker(out_fd: int | None) -> None:
    """What a worker does before it knows its job."""
    try:
        os.setpgid(0, 0)  # one group: everything the learner's code starts can be stopped with it
    except OSError:
        pass
    if out_fd is not None:
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        os.close(out_fd)
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.OUTPUT_LIMIT, limits.OUTPUT_LIMIT))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead of killing us
    except (OSError, ValueError, ImportError, AttributeError):
        pass


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
        isolation = _isolation or sandbox.Isolation(False, "this grading process was not confined (a grader bug)")
        send({"isolation": isolation.how, "isolated": isolation.available})  # before "collected" (judge)
        rc = pytest.main(_pytest_args(job), plugins=[plugin, pytest_timeout, plugin.ChannelReporter(send)])
        send({"end": int(rc)})
    except BaseException as exc:  # noqa: BLE001 - whatever happened, the zygote must hear of it
        with contextlib.suppress(BaseException):
            send({"error": f"{type(exc).__name__}: {exc}"})
        _exit(70)
    _exit(exit_code)


def warms_gpus(family: str) -> bool:
    """Whether a ready worker of this family makes CUDA's contexts ahead of its job. Each holds device memory
    on every GPU while the daemon is idle: DEVCOURSE_WARM_GPUS=0 keeps them for the checks themselves (a hub
    whose GPUs many learners share)."""
    return family == "real" and os.environ.get("DEVCOURSE_WARM_GPUS", "1") != "0"


def _has_nvidia_gpus() -> bool:
    """Without asking CUDA, which must not start in a zygote (its forks could not use it)."""
    import glob

    return bool(glob.glob("/dev/nvidia[0-9]*"))


def _start_gpus() -> None:
    """Initialise CUDA and make each GPU's context, as a real-legs worker's first check would: 0.3 to 0.6 s
    on an H100 machine, which a ready worker spends before its job arrives (ReadyHandler). Makes no
    allocation, so memory counters start where they would."""
    import torch

    with contextlib.suppress(Exception):  # a broken GPU is reported by the check that uses it
        if torch.cuda.is_available():
            for index in range(torch.cuda.device_count()):
                torch.empty(0, device=f"cuda:{index}")


def fresh_draws() -> None:
    """Seed PyTorch's generators (every device's) and NumPy's afresh in this grading process. A fork inherits its
    parent's generators: without this, every worker of a zygote, and every answer of a batch, drew the same
    "fresh" inputs until the daemon restarted (Python's `random` reseeds itself after a fork; torch and NumPy
    do not), so a grader's draws did not change between gradings and tools/determinism.py saw nothing."""
    import torch

    torch.seed()
    with contextlib.suppress(ImportError):
        import numpy

        numpy.random.seed()


def _one_cpu_thread() -> None:
    """One thread for PyTorch's CPU operators. A check runs two workers at once (the real legs and the simulated
    device), and a daemon several checks: with a thread per core in each, OpenMP's threads spin waiting for
    each other's cores and a small training loop takes ten times as long. Results do not depend on it."""
    import torch

    torch.set_num_threads(1)


def _limit_host_memory(spec: str) -> None:
    """Cap the memory the learner's code may take on the host, so that a 10 GB tensor is an error it gets
    (with PyTorch's 'can't allocate memory') instead of the machine's. Where CUDA runs, its contexts are made
    first: the driver maps large private regions of its own when it starts, which the cap must not count
    (tools/host_cap_probe.py checked on H100s that nothing CUDA does later needs more; tools/GPU_RUNS.md)."""
    import resource

    import torch

    if not legs.is_simulated(spec) and torch.cuda.is_available():
        _start_gpus()  # done already in a ready worker
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status") as f:
            data = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmData:"))
        limit = data + limits.HOST_MEMORY
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


# ----------------------------------------------------------------------------------------------------------
# The zygote: each job in a new worker
# ----------------------------------------------------------------------------------------------------------
class Spare:
    """A worker started ahead of time (spawn mode), waiting on stdin for its one job."""

    def __init__(self, family: str):
        self.rfd, self.wfd = os.pipe()
        self.private = sandbox.private_folder()  # the worker's only writable folder; removed after its job
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "grader.engine.workers", "spare", "--family", family, "--fd", str(self.wfd),
             "--private", str(self.private)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            pass_fds=(self.wfd,), start_new_session=True, text=True,
        )
        os.close(self.wfd)
        self.out_fd = self.proc.stdout.fileno()

    def start(self, job: dict, token: str, exit_code: int) -> int:
        self.proc.stdin.write(json.dumps({"job": job, "token": token, "exit_code": exit_code}) + "\n")
        self.proc.stdin.close()
        return self.proc.pid


class ForkedWorker:
    """A fork of the zygote that starts (_start_worker), then waits for its job on a pipe. `warm_gpus`: it also
    starts CUDA on every GPU meanwhile, for a worker forked before its job is known (ReadyHandler)."""

    def __init__(self, zygote: "Zygote", warm_gpus: bool = False, private_fds=()):
        self.rfd, wfd = os.pipe()
        self.ofd, owfd = os.pipe()
        jr, self.jw = os.pipe()
        self.private = sandbox.private_folder()  # the worker's only writable folder; removed after its job
        # Its keeper's pid (grader.guard.containment), or the worker's own where no PID namespace can be made. Not for
        # a worker that will use NVIDIA GPUs: CUDA fails to start (error 304) in a PID namespace whose /proc is the
        # host's (seen on an H200, 2026-12-06); such a grading's report says the namespace is missing.
        if zygote.family == "real" and _has_nvidia_gpus():
            self.pid, self.report = _fork(), None
        else:
            self.pid, self.report = containment.fork_contained(_fork, last=True)  # a handler forks one worker
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


def _children_of(pid: int) -> set[int]:
    found = set()
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found |= {int(p) for p in f.read().split()}
    return found


class Zygote:
    def __init__(self, family: str, folder: Path, keep: set[int]):
        self.family = family
        self.folder = folder
        self.fork = use_fork()
        self.spare = Spare(family) if not self.fork else None
        self.known_children = keep  # our own children that are not workers (the other family's zygote)
        self.private_fds: list[int] = []  # the sockets a worker must not inherit
        self.ready: ReadyHandler | None = None  # fork mode: a handler started ahead of the next job
        self.client: int | None = None  # in a handler: its client's connection; a hang-up stops the check
        # Its ready worker makes CUDA's contexts, which takes long enough to start it before the zygote is idle.
        self.ready_at_once = warms_gpus(family) and _has_nvidia_gpus()
        if sys.platform.startswith("linux"):
            _become_subreaper()  # orphans of the learner's code come back to us, so they can be stopped

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
            rfd, ofd, private = spare.rfd, os.dup(spare.out_fd), spare.private
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

    def _collect(self, pid: int, rfd: int, ofd: int, timeout: float, on_record=None):
        """Read the worker's records (and the end of its output) until it ends; stop it when a check overruns
        or it never starts. `on_record`: called on each chunk of records (a batch worker's sign of life)."""
        sel = selectors.DefaultSelector()
        for fd in (rfd, ofd):
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ)
        if self.client is not None:  # readable only once the client hangs up (it sends nothing after its job)
            sel.register(self.client, selectors.EVENT_READ)
        buf, output, status, stopped = b"", b"", None, None
        last, started = time.monotonic(), False
        while status is None:
            for key, _ in sel.select(timeout=0.02):
                with contextlib.suppress(BlockingIOError):
                    chunk = os.read(key.fd, 1 << 16)
                    if key.fd == self.client:
                        if not chunk:  # nobody waits for this check any more (watch's q, Ctrl-C): stop it
                            sel.unregister(self.client)
                            stopped = "the check was stopped: nobody waits for its result"
                    elif key.fd == ofd:
                        output = (output + chunk)[-OUTPUT_TAIL:]
                    elif chunk:
                        buf += chunk
                        last = time.monotonic()
                        if on_record is not None:
                            on_record()
                        started = started or b'"collected"' in buf
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
                break
            limit = timeout + GRACE_SECONDS if started else START_LIMIT
            if time.monotonic() - last > limit or stopped:
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                _, status = os.waitpid(pid, 0)
                stopped = stopped or (f"the grader stopped your code after {limit:g} s without an answer (it "
                                      "ignored the time limit of its check)")
        with contextlib.suppress(BlockingIOError, OSError):
            while chunk := os.read(rfd, 1 << 16):
                buf += chunk
        with contextlib.suppress(BlockingIOError, OSError):
            while chunk := os.read(ofd, 1 << 16):
                output = (output + chunk)[-OUTPUT_TAIL:]
        sel.close()
        return buf.decode(errors="replace").splitlines(), output.decode(errors="replace"), status, stopped

    def _stop_leftovers(self, pid: int) -> int:
        """Stop whatever the worker's code left running (its process group, and orphans handed to us);
        how many there were."""
        mine = {self.spare.proc.pid} if self.spare else set()
        left = _live_in_group(pid) | (_live(_children_of(os.getpid())) - mine - self.known_children)
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        for child in left:
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        return len(left)


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    except OSError:
        return None


def _live(pids) -> set[int]:
    return {p for p in pids if (st := _stat(p)) is not None and st[0] != "Z"}


def _live_in_group(pgid: int) -> set[int]:
    if not os.path.isdir("/proc"):
        return set()
    try:
        os.killpg(pgid, 0)  # no signal: whether the group has any process at all (the usual answer: none)
    except ProcessLookupError:
        return set()  # without reading every process's /proc entry, after every grading
    except OSError:
        pass
    members = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (st := _stat(int(entry))) is not None and st[0] != "Z" and int(st[2]) == pgid:
            members.add(int(entry))
    return members


def _become_subreaper() -> None:
    import ctypes  # the zygote's own code; learner code never runs in this process

    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


OUTCOMES = ("passed", "failed", "skipped")


def judge(lines, token, exit_code, status, stopped, leftovers, tail, job) -> dict:
    """The results of one job, from what the zygote itself can vouch for."""
    collected, results, seen, forged, end, error, stopped_why = None, [], set(), 0, None, None, None
    isolation = None
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            forged += 1
            continue
        if not isinstance(rec, dict) or rec.pop("token", None) != token:
            forged += 1
        elif collected is None:
            if isinstance(rec.get("collected"), list):
                collected = {tuple(c) for c in rec["collected"]}
            elif "isolation" in rec and isolation is None:  # sent by the worker before any learner code ran
                isolation = {"isolated": rec.get("isolated") is True, "how": str(rec["isolation"])}
            elif "error" in rec:  # pytest could not start, or the grader could not be collected: says why
                error = error or str(rec["error"])
            elif "end" in rec:  # pytest ended before listing the checks: its own output (the tail) says why
                pass
            else:
                forged += 1
        elif "end" in rec:
            end = rec["end"]
        elif "error" in rec:
            error = rec["error"]
        elif "stopped" in rec:
            stopped_why = str(rec["stopped"])
        else:
            key = (rec.get("check"), rec.get("leg"))
            if key not in collected or key in seen or rec.get("outcome") not in OUTCOMES:
                forged += 1
            else:
                seen.add(key)
                results.append({k: rec.get(k) for k in ("check", "leg", "outcome", "message", "seconds", "trace", "output")})
    spec = job["spec"]
    problems = []
    code = os.waitstatus_to_exitcode(status) if status is not None else None
    if forged:
        problems.append(f"the grading channel received {forged} record(s) the grader did not send: a submission "
                        "that writes its own results is not graded")
    if stopped:
        problems.append(stopped)
    elif collected is None:
        why = error or _last_lines(tail) or "it ended before listing its checks"
        problems.append(f"the grader could not run: {why}")
    elif stopped_why:
        pass  # said by the check that found it; the checks after it are failed below
    elif code is not None and code < 0:
        problems.append(f"the process running your code was killed by signal {-code} (a crash in native code, or "
                        "too much memory?)")
    elif end is None or code != exit_code:
        problems.append(f"your code ended the grading process after {len(seen)} of {len(collected)} checks "
                        "(does it call exit()?)")
    # Every listed check reports once, or it is a failure: whatever ended the run early (an exception that
    # stops pytest, a crash, a check that found planted code) passes nothing it did not run. Where the process
    # itself failed, the message that says what ended it (the last so far) names them; else each is a failed
    # check of its own.
    unreported = [key for key in sorted(collected or ()) if key not in seen]
    if unreported and problems:
        problems[-1] += f" ({len(unreported)} of {len(collected)} checks never reported a result)"
    elif unreported:
        why = ("the grading stopped at an earlier check, which says why" if stopped_why
               else "the grading run ended early (something your code did stopped pytest)")
        results += [{"check": check, "leg": leg, "outcome": "failed", "seconds": 0, "trace": [],
                     "message": f"this check never reported a result: {why}."} for check, leg in unreported]
    if leftovers:
        problems.append(f"your code left {leftovers} process(es) running after its checks; they were stopped. "
                        "Wait for (join) every process you start.")
    results += [{"check": "(grader process)", "leg": spec, "outcome": "failed", "message": p, "seconds": 0}
                for p in problems]
    return {"results": results, "isolation": isolation}


def _last_lines(text: str, n: int = 5) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


# ----------------------------------------------------------------------------------------------------------
# Serving: one socket per family; JSON lines
# ----------------------------------------------------------------------------------------------------------
def _prepare(family: str) -> None:
    """What every worker of this family needs before its first job (and nothing that initialises a GPU)."""
    _prepare_common()
    _prepare_family(family)


def _prepare_common() -> None:
    """What the workers of both families need: in fork mode, one process does it for both."""
    import _pytest.config as _pytest_config
    import pytest  # noqa: F401
    import pytest_timeout  # noqa: F401

    _import_torch()
    from grader.engine import expect, instruments, plugin  # noqa: F401
    from grader.guard import integrity  # noqa: F401
    from grader.catalog import course  # noqa: F401

    instruments.warm_up()
    sandbox.status()  # imports the Landlock binding once, for every worker forked from here
    sandbox.readable_places()  # listed once, here: a worker's read layer would not let it list grader/ again
    # What pytest.main would import in every worker.
    _import_all([f"_pytest.{name}" for name in _pytest_config.default_plugins] + list(FIRST_JOB_IMPORTS))
    _freeze()


def _prepare_family(family: str) -> None:
    """What only this family's workers need: for the simulated family, 20 ms.

    The simulated family hides the machine's real GPUs: its legs then run the same way on a laptop and on a GPU
    server (code that looks for CUDA finds none, as on a laptop), and the autograd engine, which starts a thread
    per CUDA device at a process's first backward, starts none there, so its forks can run backward. Nothing
    done before (_prepare_common, WARM_UP_IMPORTS) asks CUDA for its GPUs, so the setting still counts."""
    if family != "sim":
        return
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    import torch

    from grader import simulated

    if simulated.is_supported():
        simulated.install()
        # Warm the simulator's caches with forward work (no backward: the autograd engine would start
        # device threads, and threads do not survive a fork).
        with torch.no_grad(), _dtensor_class_placeholder():
            a = torch.randn(8, 8, device="sim:0")
            (a @ a + a.mean()).relu().sum(dim=0).to("sim:1").cpu()
    _freeze()


def _freeze() -> None:
    import gc

    gc.freeze()  # what is here now is never collected: a worker's garbage collections stay short


@contextlib.contextmanager
def _dtensor_class_placeholder():
    """The first time PyTorch's C++ dispatch meets a tensor subclass, it looks up DTensor's class once for the
    process (to tell DTensors apart), importing torch.distributed.tensor and with it sympy: 0.8 s of the
    simulated family's start on two cores, before the first check can run. The simulator's tensors are
    never DTensors, so that one lookup is shown a class nothing is an instance of; the module is then
    removed again, so code that imports torch.distributed.tensor gets the real one. Where PyTorch no longer
    caches that lookup, this only costs the import later."""
    import types

    name = "torch.distributed.tensor"
    if name in sys.modules:
        yield
        return
    placeholder = types.ModuleType(name)
    placeholder.DTensor = type("NotADTensor", (), {})
    sys.modules[name] = placeholder
    try:
        yield
    finally:
        if sys.modules.get(name) is placeholder:
            del sys.modules[name]


#: Imported by every grading run (pytest's debugging and config plugins); cheap, so before the first job.
FIRST_JOB_IMPORTS = ("pdb", "faulthandler", "tomllib", "_pytest._argcomplete")
#: Imported on first use by some learner code. A zygote imports them while its stand-in answers (see
#: _serve_forked): only a check that needs one and comes in that time waits for it. Rarer first uses are left
#: to the check that needs them (a notebook submission imports nbformat; code that imports
#: torch.distributed.tensor, that module; code that compiles, torch._dynamo: see grader.engine.lazy_dynamo): a longer
#: warm-up would slow the checks made while it runs.
WARM_UP_IMPORTS = ("numpy.random", "multiprocessing.popen_fork", "multiprocessing.queues",
                   "multiprocessing.synchronize", "torch.utils.data._utils.pin_memory")


def _warm_up() -> None:
    _import_all(WARM_UP_IMPORTS)
    _freeze()


def _import_all(names) -> None:
    import importlib

    for name in names:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def _prepared(prepare, *args) -> str | None:
    """Run a _prepare function; None when it worked, else why not (logged too)."""
    try:
        prepare(*args)
        return None
    except Exception as exc:  # noqa: BLE001 - the zygote still answers, saying why it cannot grade
        import traceback

        traceback.print_exc()
        return f"the grading processes could not start: {type(exc).__name__}: {exc}"


STOP_ALL = 3  # exit code of a zygote that was asked to stop the daemon


def _fork_zygote(family: str, folder: Path, server: socket.socket, digest: str, broken: str | None,
                 until: int | None = None, close=(), handover: int | None = None, prepare=None) -> int:
    """Fork a zygote of `family` that answers on `server` (until the pipe `until`, if given, is closed); its pid.
    The fork first closes `close` (what is not its own), prepares its family (or calls `prepare`, which returns
    why it could not and the pids of the children it made), then closes `handover` (see _serve_forked)."""
    # SIGTERM (see _serve_forked) waits until the fork is prepared. In fork's own after-fork hooks, and somewhere in
    # preparing the simulated family (torch calls the simulator's Python code from C++ there), the exception that
    # ends the process was dropped: a simulated zygote told to end while it prepared answered on, on a socket file
    # already removed, until idle (a stop in twenty to forty on two busy cores; tests/test_daemon.py). Unblocked,
    # not restored: a zygote forked while another prepares (the stand-in's first simulated one) inherits the block.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    pid = _fork()
    if pid:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        return pid
    code = 70
    try:
        for fd in close:
            os.close(fd)
        made: set[int] = set()
        if prepare is not None:
            failed, made = prepare()
            broken = broken or failed
        broken = broken or _prepared(_prepare_family, family)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # a SIGTERM that came meanwhile ends it here
        if handover is not None:
            os.close(handover)
        zygote = Zygote(family, folder, made)
        code = STOP_ALL if _answer(server, zygote, digest, broken, until) == "stop" else 0
    finally:
        _exit(code)


def _listen(folder: Path, family: str) -> tuple[socket.socket, Path, int]:
    path = folder / f"{family}.sock"
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(16)
    return server, path, path.stat().st_ino  # a newer daemon may take the path over: then it is not ours


def _answer(server: socket.socket, zygote: "Zygote", digest: str, broken: str | None,
            until: int | None = None) -> str:
    """Answer requests until idle ("idle"), told to stop ("stop"), or `until` (a pipe) is closed ("handed").
    Each job is graded by a handler process of its own (up to MAX_JOBS at once), which answers it; a job that
    comes while MAX_JOBS run waits for one to end, and pings and stops are answered meanwhile (a busy daemon is
    not a dead one: grader.engine.daemon.ensure would wait for it, then replace it). With `broken` (why this family's
    grader could not be prepared), every job is answered with that reason. Returns once the jobs taken, waiting
    ones included, are answered."""
    sel = selectors.DefaultSelector()
    sel.register(server, selectors.EVENT_READ)
    if until is not None:
        sel.register(until, selectors.EVENT_READ)
    handlers: set[int] = set()
    waiting: list[tuple[socket.socket, dict]] = []  # oldest first

    def ours() -> list[int]:  # what no process forked from here may keep: the server and other clients' sockets
        return [server.fileno(), *(c.fileno() for c, _ in waiting), *([until] if until is not None else [])]

    def dispatch(conn: socket.socket, job: dict) -> None:
        zygote.private_fds = [*ours(), conn.fileno()]
        with conn, conn.makefile("wb") as stream:
            ready, zygote.ready = zygote.ready, None
            pid = ready.take(conn, job) if ready else None
            handlers.add(pid if pid is not None else _handle(zygote, stream, job, conn.fileno()))

    def dispatch_waiting(block: bool) -> None:
        while waiting:
            _reap(handlers)
            if len(handlers) < MAX_JOBS:
                dispatch(*waiting.pop(0))
            elif not block:
                return
            else:
                time.sleep(0.01)

    ended = None
    try:
        while ended is None:
            _reap(handlers)
            dispatch_waiting(block=False)
            # A ready worker that makes CUDA's contexts (0.3 to 0.5 s on 2 x H100) is started as soon as the last
            # one is taken, so that a check sent right after another finds it ready; elsewhere once idle.
            if zygote.fork and not broken and zygote.ready is None and (
                    not handlers or (zygote.ready_at_once and len(handlers) < MAX_JOBS)):
                zygote.private_fds = ours()
                zygote.ready = ReadyHandler(zygote)
            ready = [key.fileobj for key, _ in sel.select(timeout=0.02 if handlers else IDLE_SECONDS)]
            if not ready:
                if until is None and not handlers:  # (jobs wait only while handlers run)
                    ended = "idle"
                continue
            if until in ready:
                ended = "handed"
                continue
            conn, _ = server.accept()
            if sandbox.from_a_grading_process(conn):  # learner code asking to grade or to stop (grader.guard.sandbox)
                conn.close()
                continue
            kept = False
            try:
                with conn.makefile("rwb") as stream:
                    request = json.loads(stream.readline() or b"{}")
                    if request.get("stop"):
                        ended = "stop"  # even where its client hung up (a stand-in still preparing answers late)
                        _reply(stream, {"stopped": True})
                    elif request.get("ping"):
                        # warm: answered by the zygote itself, its warm-up done (not by its stand-in)
                        _reply(stream, {"digest": digest, "pid": os.getpid(), "warm": until is None})
                    elif broken:
                        _reply(stream, {"error": broken})
                    elif not zygote.fork:  # spawn mode: one job at a time, each in a warm spare
                        _reply(stream, _graded_reply(zygote, request["job"]))
                    elif len(handlers) < MAX_JOBS:
                        dispatch(conn, request["job"])
                    else:
                        waiting.append((conn, request["job"]))
                        kept = True
            except ConnectionError:
                # The client hung up first (a ping that timed out on a loaded machine): it is gone, not the zygote,
                # which a broken pipe here once ended (twelve graders started at once on 2 x H100).
                pass
            finally:
                if not kept:
                    conn.close()
        dispatch_waiting(block=True)  # taken: graded before this returns (its client may hang up meanwhile)
        return ended
    finally:
        sel.close()
        for conn, _ in waiting:  # only where this ends by an exception (SIGTERM): their clients hear it at once
            conn.close()
        if zygote.ready is not None:
            zygote.ready.discard()
            zygote.ready = None
        for pid in handlers:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


# Jobs a zygote grades at once (each family's): one per core, at least two; DEVCOURSE_MAX_JOBS sets it (a shared hub:
# grader.engine.settings).
MAX_JOBS = settings.max_jobs(lenient=True)


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


def _reap(handlers: set[int]) -> None:
    """Collect ended handlers (and orphans handed to us) without waiting."""
    with contextlib.suppress(ChildProcessError):
        while (pid := os.waitpid(-1, os.WNOHANG)[0]):
            handlers.discard(pid)


def _serve(family: str, folder: Path, digest: str, keep: frozenset[int] = frozenset()) -> None:
    """Spawn mode: prepare this family, then answer on its socket until idle or told to stop."""
    broken = _prepared(_prepare, family)
    # Ended by the other family's zygote (SIGTERM): still remove our socket on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server, path, mine = _listen(folder, family)
    zygote = Zygote(family, folder, set(keep))
    try:
        _answer(server, zygote, digest, broken)
    finally:
        _unlink_if_ours(path, mine)
        if zygote.spare:
            zygote.spare.proc.kill()
            sandbox.remove(zygote.spare.private)


def _unlink_if_ours(path: Path, inode: int) -> None:
    with contextlib.suppress(OSError):
        if path.stat().st_ino == inode:
            path.unlink()


def _serve_forked(folder: Path, digest: str) -> None:
    """Fork mode. This process imports torch, then forks the real family's *stand-in*, which imports pytest and
    the grader, forks the simulated family's first zygote (which installs the simulator, 20 ms) and answers the
    first checks; meanwhile this process imports the same and WARM_UP_IMPORTS, which only some learner code
    needs but which take a second, on the other core. It then takes the real socket back from the stand-in
    and forks a second simulated zygote, which inherits the warm-up; the first hands its socket over once the
    second is prepared (closing `handover`, the last writer of its `until` pipe). A stop request
    (grader.engine.daemon.stop asks the real family first) that reached the stand-in ends everything."""
    broken = _prepared(_import_torch)
    _become_subreaper()  # the first simulated zygote, the stand-in's child, comes back to us when the stand-in ends
    # Ended by SIGTERM: still remove the sockets on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    (real, real_path, real_ino), (sim, sim_path, sim_ino) = (_listen(folder, fam) for fam in FAMILIES)
    sims: list[int] = []
    try:
        if broken:
            sims.append(_fork_zygote("sim", folder, sim, digest, broken, close=[real.fileno()]))
            sim.close()
        else:
            real_r, real_w = os.pipe()  # closed: the stand-in hands the real socket back
            sim_r, handover = os.pipe()  # closed here and by the second simulated zygote: the first hands over

            def prepare_both() -> tuple[str | None, set[int]]:  # in the stand-in
                failed = _prepared(_prepare_common)
                first_sim = _fork_zygote("sim", folder, sim, digest, failed, sim_r, close=[real.fileno(), real_r])
                sim.close()
                os.close(sim_r)
                return failed, {first_sim}

            standin = _fork_zygote("real", folder, real, digest, None, real_r, close=[real_w, handover],
                                   prepare=prepare_both)
            os.close(real_r)
            os.close(sim_r)
            broken = _prepared(_prepare_common)
            _warm_up()
            os.close(real_w)
            _, status = os.waitpid(standin, 0)  # it ends once its jobs in progress are answered
            if os.waitstatus_to_exitcode(status) == STOP_ALL:
                return
            sims.append(_fork_zygote("sim", folder, sim, digest, broken, close=[real.fileno()], handover=handover))
            os.close(handover)
            sim.close()
        _answer(real, Zygote("real", folder, set(sims)), digest, broken)
    finally:
        _unlink_if_ours(real_path, real_ino)
        _unlink_if_ours(sim_path, sim_ino)
        for pid in sims:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)


def _import_torch() -> None:
    import torch  # noqa: F401

    from grader.engine import lazy_dynamo

    lazy_dynamo.install()  # an optimizer would import torch._dynamo, 1.5 s, in every first check that trains


def serve(folder: Path) -> None:
    digest = code_digest()
    folder.mkdir(parents=True, exist_ok=True)
    if use_fork():
        namespaces.leave_network()  # one network namespace, with none up, for every grading forked from here
        _serve_forked(folder, digest)
    else:
        sim = subprocess.Popen([sys.executable, "-m", "grader.engine.workers", "zygote", "--family", "sim",
                                "--dir", str(folder), "--digest", digest])
        try:
            _serve("real", folder, digest, keep=frozenset({sim.pid}))
        finally:
            sim.terminate()


def _spare_main(family: str, fd: int, private: str) -> None:
    _confine_soon(private, family, gpus_started=False)  # first, while this new process has one thread
    _prepare(family)
    _warm_up()  # a spare is started ahead of its job, so its warm-up costs no one a wait
    request = json.loads(sys.stdin.readline() or "{}")
    if not request:
        _exit(0)
    _work(request["job"], fd, request["token"], request["exit_code"], None)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m grader.engine.workers")
    p.add_argument("role", choices=("serve", "zygote", "spare"))
    p.add_argument("--dir", type=Path)
    p.add_argument("--family", choices=FAMILIES)
    p.add_argument("--fd", type=int)
    p.add_argument("--digest")
    p.add_argument("--private")
    args = p.parse_args(argv)
    if args.role == "serve":
        serve(args.dir)
    elif args.role == "zygote":
        _serve(args.family, args.dir, args.digest)
    else:
        _spare_main(args.family, args.fd, args.private)


if __name__ == "__main__":
    main()
