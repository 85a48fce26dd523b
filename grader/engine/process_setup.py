"""What every grading process does before learner code runs, the lone worker's (grader.engine.grading_process) and
a batch's answer process (grader.engine.batch) alike: its own process group and output, its memory limit, one CPU
thread, fresh random draws, its confinement (grader.guard.sandbox), and whether GPUs are started ahead."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys

from grader.engine import legs, limits
from grader.guard import sandbox

# Taken before any learner code can replace them.
_exit = os._exit
_write = os.write
_os_fork = getattr(os, "fork", None)
_dumps = json.dumps


def _fork() -> int:
    """os.fork, with SIGTERM held back until fork's own after-fork hooks have run. A zygote ends on SIGTERM by
    raising SystemExit from its handler; raised inside such a hook (logging's lock release, in the parent) the
    exception is printed and dropped, and the zygote would serve on after its daemon had ended. Released here,
    the signal is handled in our code."""
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        return _os_fork()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def use_fork() -> bool:
    mode = os.environ.get("DEVCOURSE_WORKERS", "")
    if mode in ("fork", "spawn"):
        return mode == "fork"
    return _fork is not None and sys.platform.startswith("linux")


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
    confined process (cudaGetDeviceCount fails with error 304 under Landlock; tools/GPU_RUNS.md). Then CUDA's
    own threads stay unconfined; the learner's code runs on the main thread,
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


def warms_gpus(family: str) -> bool:
    """Whether a ready worker of this family makes CUDA's contexts ahead of its job. Each holds device memory
    on every GPU while the daemon is idle: DEVCOURSE_WARM_GPUS=0 keeps them for the checks themselves (a hub
    whose GPUs many learners share)."""
    return family == "real" and os.environ.get("DEVCOURSE_WARM_GPUS", "1") != "0"


def _has_nvidia_gpus() -> bool:
    from grader.guard import containment

    return containment.nvidia_gpus()


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
    parent's generators: without this, every worker of a zygote, and every answer of a batch, would draw the same
    "fresh" inputs until the daemon restarted (Python's `random` reseeds itself after a fork; torch and NumPy
    do not)."""
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
