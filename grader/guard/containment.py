"""Every process a grading starts ends with it: the grading runs in a PID namespace of its own.

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
(`os.kill(os.getpid(), SIGSEGV)` must end a grading as a crash would). Where no PID namespace can be made
(no permission, not Linux), `fork_contained` is a plain fork and `CONTAINED` stays False in the child.
"""

from __future__ import annotations

import contextlib
import os
import signal

from grader.guard import namespaces

#: In a process forked by fork_contained: whether it runs in a PID namespace of its own.
CONTAINED = False
_MAX_FD = 1 << 16


def fork_contained(fork=os.fork, last: bool = False) -> tuple[int, int | None]:
    """Like `fork()` (the caller's fork function): 0 in the grading process; in the caller, the keeper's pid and
    a descriptor the keeper's report comes on (`outcome`), or the child's pid and None where no PID namespace
    could be made. The caller becomes a subreaper (the keeper is handed to it when the intermediate ends).
    `last`: the caller forks nothing else afterwards (a handler, which grades one job), so it unshares the PID
    namespace itself and forks the keeper directly, a fork fewer (a namespace is unshared once a process)."""
    global CONTAINED
    from grader.guard import off_switch

    if off_switch.turned_off():  # DEVCOURSE_ISOLATION=off: no confinement at all (debugging the grader)
        child = fork()
        if child == 0:
            CONTAINED = False
        return child, None
    _become_subreaper()
    r_report, w_report = os.pipe()
    if last:
        try:
            namespaces.new_namespaces(namespaces.CLONE_NEWPID)
        except OSError:
            pass
        else:
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
        if _in_the_middle(w_pid, w_report):  # returns only in the grading process
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
    os.close(r_report)  # no namespace here: a plain fork
    child = fork()
    if child == 0:
        CONTAINED = False
    return child, None


def _in_the_middle(w_pid: int, w_report: int) -> bool:
    """The intermediate: True in the grading process (its grandchild); the intermediate and the keeper never
    return from here."""
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            namespaces.new_namespaces(namespaces.CLONE_NEWPID)
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
    """In the namespace's first process: fork the grading process, which returns from here, and keep (`_keep`)."""
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        worker = os.fork()
    except BaseException:  # noqa: BLE001 - the judge hears of it as a failed start
        os._exit(70)
    if worker == 0:
        os.close(w_report)
        return
    _keep(worker, w_report)


def _keep(worker: int, report: int) -> None:
    """The keeper: reap every orphan of the namespace until the grading process ends, then count what is left
    (`_count_left`), kill it (each ends as a child of the keeper: an orphan of a namespace comes back to its first
    process), report and end. Never returns."""
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
        counted = _count_left()
        killed = 0
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)  # every process of the namespace but this one
            with contextlib.suppress(ChildProcessError):
                while True:
                    os.waitpid(-1, 0)
                    killed += 1
        os.write(report, f"{status} {killed if counted is None else counted}".encode())
    finally:
        os._exit(0)


def _count_left() -> int | None:
    """The keeper's live descendants, from /proc; None where it may not read /proc (a batch's answer keeper,
    inside its batch worker's Landlock domain): then the processes it reaps after killing them are counted, one
    too few where a dying process reaped its own child first."""
    try:
        me = int(os.readlink("/proc/self"))  # its pid in the host's /proc, not the namespace's 1
        os.listdir(f"/proc/{me}/task")
    except (OSError, ValueError):
        return None
    seen, todo = set(), [me]
    while todo:
        for child in _children(todo.pop()) - seen:
            seen.add(child)
            todo.append(child)
    return sum(_state(p) not in ("Z", "X", None) for p in seen)


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


def _become_subreaper() -> None:
    import ctypes

    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


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
