"""Every process a grading starts ends with it: the grading runs in a PID namespace of its own, under a keeper.

`fork_contained()` is os.fork for a grading process (a worker, a classroom batch's answer process). The process that
calls it (the *judge*: a handler, a batch worker) unshares a PID namespace (grader.guard.namespaces), itself where it
forks nothing else afterwards (a handler), else in a short-lived intermediate (a batch worker, which forks one
answer after another: a process unshares a PID namespace once), and forks the namespace's first process, the
*keeper*; the keeper forks the grading process and ends once it ended:

    judge ── keeper (pid 1 of the namespace: no learner code) ── grading process ── whatever learner code starts

What learner code starts, double forks, new sessions and programs it execs included, stays in the namespace: an
orphan comes back to the keeper, never to a process outside. Once the grading process ended, the keeper counts
what is left (the leftovers of this grading alone), kills it, sends the grading process's wait status and that
count to the judge, and ends; had it not, the kernel kills what is left in a namespace whose first process
ended, before the judge's waitpid of the keeper returns. The judge stops a grading that overruns by killing the
keeper, which kills the namespace the same way.

The grading process is the namespace's second process, not its first: pid 1 ignores the signals it sends itself
(`os.kill(os.getpid(), SIGSEGV)` must end a grading as a crash would).

A grading process that will start CUDA (`uses_cuda`, on a machine with NVIDIA GPUs) also gets a network
namespace of its own: libcuda binds an abstract Unix socket named after the network namespace and the process's
pid (`@cuda-uvmfd-NETNS-PID`), every grading is pid 2 of its namespace, and gradings forked from one daemon share
its network namespace, so a second grading's CUDA found the name taken and failed to start (error 304, "OS call
failed", on an H200).

Where no PID namespace can be made (no permission, not Linux), or none is wanted (`pid_namespace=False`, or
DEVCOURSE_PID_NAMESPACE=off for a host where CUDA fails in one), the keeper is forked all the same, without a
namespace: it becomes a *child subreaper* (PR_SET_CHILD_SUBREAPER), so every orphan of the grading (a double fork,
a grandchild in a session of its own whose parent was killed) comes back to it, and once the grading process
ended it kills every process below it, round after round until none is left (`sweep`), and counts them.
`CONTAINED` stays False in such a grading process, and its report says "missing: own PID namespace".
"""

from __future__ import annotations

import contextlib
import functools
import glob
import os
import signal
import time

from grader.guard import namespaces

#: In a process forked by fork_contained: whether it runs in a PID namespace of its own.
CONTAINED = False
#: "off": every grading is forked without a PID namespace of its own (its keeper sweeps what it leaves).
PID_NAMESPACE_VARIABLE = "DEVCOURSE_PID_NAMESPACE"
_MAX_FD = 1 << 16
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


@functools.cache
def nvidia_gpus() -> bool:
    """Whether this machine has NVIDIA GPUs, without asking CUDA (which must not start in a zygote: its forks could
    not use it). Looked up once per process: the device files of a host do not come and go between gradings."""
    return bool(glob.glob("/dev/nvidia[0-9]*"))


def pid_namespace_wanted() -> bool:
    return os.environ.get(PID_NAMESPACE_VARIABLE, "").strip().lower() != "off"


def fork_contained(fork=os.fork, last: bool = False, uses_cuda: bool = False,
                   pid_namespace: bool = True) -> tuple[int, int | None]:
    """Like `fork()` (the caller's fork function): 0 in the grading process; in the caller, the keeper's pid and
    a descriptor the keeper's report comes on (`outcome`). The caller becomes a subreaper (the keeper is handed to
    it when the intermediate ends).
    `last`: the caller forks nothing else afterwards (a handler, which grades one job), so it unshares the
    namespaces itself and forks the keeper directly, a fork fewer (a namespace is unshared once a process).
    `uses_cuda`: the grading process will start CUDA; on a machine with NVIDIA GPUs it gets a network namespace of
    its own too (the module's docstring says why).
    `pid_namespace`: False forks the keeper without a PID namespace (see the module's docstring)."""
    global CONTAINED
    from grader.guard import off_switch

    if off_switch.turned_off():  # DEVCOURSE_ISOLATION=off: no confinement at all (debugging the grader)
        child = fork()
        if child == 0:
            CONTAINED = False
        return child, None
    _become_subreaper()
    flags = namespaces.CLONE_NEWPID | (namespaces.CLONE_NEWNET if uses_cuda and nvidia_gpus() else 0)
    if not (pid_namespace and pid_namespace_wanted()):
        return _fork_sweeping_keeper(fork)
    r_report, w_report = os.pipe()
    if last:
        try:
            namespaces.new_namespaces(flags)
        except OSError:
            os.close(r_report)
            os.close(w_report)
            return _fork_sweeping_keeper(fork)
        keeper = fork()
        if keeper == 0:
            os.close(r_report)
            _become_keeper(w_report)  # returns only in the grading process
            CONTAINED = True
            return 0, None
        os.close(w_report)
        return keeper, r_report
    r_pid, w_pid = os.pipe()
    middle = fork()
    if middle == 0:
        os.close(r_pid)
        os.close(r_report)
        if _in_the_middle(w_pid, w_report, flags):  # returns only in the grading process
            CONTAINED = True
            return 0, None
        os._exit(0)
    os.close(w_pid)
    os.close(w_report)
    with os.fdopen(r_pid, "rb") as f:
        told = f.read()
    with contextlib.suppress(ChildProcessError):
        os.waitpid(middle, 0)
    if told.isdigit():
        return int(told), r_report
    os.close(r_report)  # no namespace here
    return _fork_sweeping_keeper(fork)


def _fork_sweeping_keeper(fork) -> tuple[int, int | None]:
    """fork_contained without a PID namespace: a keeper that is a subreaper and sweeps (the module's docstring)."""
    global CONTAINED
    r_report, w_report = os.pipe()
    keeper = fork()
    if keeper == 0:
        os.close(r_report)
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            _become_subreaper()
            worker = os.fork()
        except BaseException:  # noqa: BLE001 - the judge hears of it as a failed start
            os._exit(70)
        if worker == 0:
            os.close(w_report)
            # A keeper killed by its judge (an overrun) takes its grading process along, until that process changes
            # its user (the kernel then forgets the request): the judge's own sweep, below the keeper, takes it then.
            _end_with_parent()
            CONTAINED = False
            return 0, None
        _keep(worker, w_report, own_namespace=False)
    os.close(w_report)
    return keeper, r_report


def _in_the_middle(w_pid: int, w_report: int, flags: int) -> bool:
    """The intermediate: True in the grading process (its grandchild); the intermediate and the keeper never
    return from here."""
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            namespaces.new_namespaces(flags)
            keeper = os.fork()
        except OSError:
            keeper = None
        if keeper != 0:
            os.write(w_pid, b"-" if keeper is None else str(keeper).encode())
            os._exit(0)
        os.close(w_pid)  # the keeper, pid 1 of the new namespace
    except BaseException:  # noqa: BLE001 - the judge hears of it as a failed start
        os._exit(70)
    _become_keeper(w_report)
    return True


def _become_keeper(w_report: int) -> None:
    """In the namespace's first process: mount the namespace's own /proc where it may, fork the grading process,
    which returns from here, and keep (`_keep`)."""
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        with contextlib.suppress(OSError):
            namespaces.own_proc()
        worker = os.fork()
    except BaseException:  # noqa: BLE001 - the judge hears of it as a failed start
        os._exit(70)
    if worker == 0:
        os.close(w_report)
        return
    _keep(worker, w_report)


def _keep(worker: int, report: int, own_namespace: bool = True) -> None:
    """The keeper: reap every orphan until the grading process ends, then count what is left, kill it, report and
    end. In a namespace of its own, every process of the namespace is left over (an orphan of a namespace comes
    back to its first process; `kill(-1)` reaches them all); without one, every process below the keeper, which is
    a subreaper (`sweep`). Never returns."""
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.closerange(3, report)
        os.closerange(report + 1, _MAX_FD)
        while True:
            pid, status = os.waitpid(-1, 0)
            if pid == worker:
                break
        with contextlib.suppress(ChildProcessError):  # orphans that ended already are no leftovers
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        if own_namespace:
            counted = _count_left()
            killed = 0
            with contextlib.suppress(ProcessLookupError):
                os.kill(-1, signal.SIGKILL)  # every process of the namespace but this one
                with contextlib.suppress(ChildProcessError):
                    while True:
                        os.waitpid(-1, 0)
                        killed += 1
            left = killed if counted is None else counted
        else:
            left = sweep(worker_group=worker)
        os.write(report, f"{status} {left}".encode())
    finally:
        os._exit(0)


def sweep(spare=frozenset(), worker_group: int | None = None) -> int:
    """Kill every live process below this one (a subreaper, so orphans come back here and none leaves the tree)
    but those in `spare` and below them, round after round until a round finds none (a process that forks while
    its tree is killed leaves its child to the next round); how many were killed. Where this process may not read
    /proc (a batch's answer keeper, inside its batch worker's Landlock domain), the grading process's group
    (`worker_group`) and what comes back here instead, counted as reaped."""
    me = os.getpid()
    killed: set[int] = set()
    if not _readable_proc(me):
        with contextlib.suppress(OSError):
            if worker_group is not None:
                os.killpg(worker_group, signal.SIGKILL)
        reaped = 0
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                reaped += 1
        return reaped
    for _ in range(1000):  # a hang guard: each round kills what the last one could not reach yet
        found = _live_below(me, spare)
        if not found:
            break
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        killed |= found
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        time.sleep(0.001)  # the killed hand their children over to us
    return len(killed)


def _readable_proc(me: int) -> bool:
    try:
        os.listdir(f"/proc/{me}/task")
        return True
    except OSError:
        return False


def _live_below(root: int, spare=frozenset()) -> set[int]:
    seen, todo = set(), [root]
    while todo:
        for child in _children(todo.pop()) - seen - set(spare):
            seen.add(child)
            todo.append(child)
    return {p for p in seen if _state(p) not in ("Z", "X", None)}


def _count_left() -> int | None:
    """The keeper's live descendants, from /proc; None where it may not read /proc (a batch's answer keeper,
    inside its batch worker's Landlock domain): then the processes it reaps after killing them are counted, one
    too few where a dying process reaped its own child first."""
    try:
        me = int(os.readlink("/proc/self"))  # 1 in the namespace's own /proc (own_proc), else its host pid
    except (OSError, ValueError):
        return None
    if not _readable_proc(me):
        return None
    return len(_live_below(me))


def _children(pid: int) -> set[int]:
    found = set()
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as f:
                found |= {int(p) for p in f.read().split()}
    return found


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def outcome(report: int | None, status: int | None) -> tuple[int | None, int]:
    """(the grading process's wait status, how many processes it left running) from the keeper's report, once the
    keeper ended (its wait status is `status`). No report (the keeper was killed: the grading was stopped):
    `status` and 0, everything in the namespace having ended with the keeper. Closes `report`."""
    if report is None:
        return status, 0
    try:
        os.set_blocking(report, True)
        text = os.read(report, 64).decode()
    except OSError:
        text = ""
    finally:
        os.close(report)
    with contextlib.suppress(ValueError):
        worker_status, left = (int(x) for x in text.split())
        return worker_status, left
    return status, 0


def _prctl(option: int, value: int) -> None:
    import ctypes

    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _become_subreaper() -> None:
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def _end_with_parent() -> None:
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def probe() -> str | None:
    """Why no grading could run in a PID namespace of its own here, or None where it can (tried in a fork)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            namespaces.new_namespaces(namespaces.CLONE_NEWPID | namespaces.CLONE_NEWNET)
            os.write(w, b"ok")
        except OSError as exc:
            os.write(w, (exc.strerror or str(exc)).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        said = f.read().decode()
    os.waitpid(pid, 0)
    return None if said == "ok" else f"no namespaces ({said})"
