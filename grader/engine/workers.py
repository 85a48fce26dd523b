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
import selectors
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grader
from grader.engine import legs, limits, settings
from grader.engine.grading_process import _work
from grader.engine.judging import _become_subreaper
from grader.engine.process_setup import _confine_soon, _exit, _fork, use_fork
from grader.engine.zygote import ReadyHandler, Zygote, _graded_reply, _handle, _reply
from grader.guard import containment, namespaces, sandbox



FAMILIES = ("real", "sim")
IDLE_SECONDS = settings.idle_seconds(lenient=True)  # checked by grader.engine.daemon.ensure



#: The grader's modules a worker runs (graders under checks/ are imported fresh by each worker, and the
#: front ends never run in one): a zygote older than any of them is stale.
WORKER_MODULES = ("__init__", "engine/__init__", "engine/plugin", "engine/expect", "engine/instruments",
                  "engine/measurement", "engine/submission", "engine/legs", "engine/limits", "engine/workers",
                  "engine/zygote", "engine/grading_process", "engine/process_setup", "engine/judging",
                  "engine/lazy_dynamo", "engine/batch", "engine/settings", "guard/__init__", "guard/integrity",
                  "guard/sandbox", "guard/off_switch", "guard/namespaces", "guard/containment", "guard/audit",
                  "guard/learner_values", "guard/policy", "guard/policy_rules", "guard/audit_hooks", "catalog/__init__",
                  "catalog/course")


def code_digest() -> str:
    """Changes whenever the code a worker runs, the Python running it, or how workers are isolated
    (DEVCOURSE_ISOLATION, DEVCOURSE_PID_NAMESPACE, read by the daemon's processes) changes."""
    import hashlib

    root = Path(grader.__file__).resolve().parent
    files = [root / f"{m}.py" for m in WORKER_MODULES] + sorted((root / "simulated").rglob("*.py"))
    stamp = [sys.executable, sys.version, f"isolation off={sandbox.turned_off()}",
             f"pid namespace={containment.pid_namespace_wanted()}"]
    stamp += [f"{f}:{f.stat().st_mtime_ns}" for f in files if f.exists()]
    return hashlib.sha256("\n".join(stamp).encode()).hexdigest()[:16]


# ----------------------------------------------------------------------------------------------------------
# The worker: grades one job and ends
# ----------------------------------------------------------------------------------------------------------





# ----------------------------------------------------------------------------------------------------------





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
            # A ready worker that makes CUDA's contexts (a fraction of a second) is started as soon as the last
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
                # which a broken pipe here must not end.
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
            zygote.spare.discard()


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


def _spare_main(family: str, fd: int, private: str, contained: bool = False) -> None:
    containment.CONTAINED = contained  # exec'ed by a grading process that fork_contained made (Spare)
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
    p.add_argument("--contained", action="store_true")
    args = p.parse_args(argv)
    if args.role == "serve":
        serve(args.dir)
    elif args.role == "zygote":
        _serve(args.family, args.dir, args.digest)
    else:
        _spare_main(args.family, args.fd, args.private, args.contained)


if __name__ == "__main__":
    main()
