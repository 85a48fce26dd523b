"""Confine a grading by the operating system, so that a submission cannot reach beyond its own grading.

Two steps, both irreversible, for the calling process and everything it starts later:

* `confine(private_dir)`, right after the grading process is forked, while it has one thread: a network namespace
  with nothing up (no TCP, no UDP, no abstract Unix socket of the host: the daemon's, grader.guard.namespaces.
  leave_network, or else one of its own), and Linux's Landlock security module through `landlockpy`: it may
  write only inside `private_dir` (which becomes its temporary and cache folder), /dev/null, /dev/shm (DataLoader
  workers share tensors and semaphores there) and the NVIDIA device files; where the kernel's Landlock ABI allows
  it, it also may not use a device's ioctls outside the GPU's (ABI 5), signal a process or reach an abstract Unix
  socket outside its own domain (ABI 6), or connect to a Unix socket file outside its folder (ABI 9). Tracing
  (ptrace, /proc/PID/mem) of processes outside the domain is refused by Landlock at every ABI.
* `confine_job(private_dir, readable)`, once its job is known and before learner code runs: a second Landlock
  layer by which it reads only what grading needs (`readable_places`: the interpreter and its environment,
  system libraries, the grader's code; plus the submission, the one check, its private folder): not /proc, not
  solutions/, not another grading's files. Then, run by root, it becomes `nobody` (grader.guard.namespaces), so that
  changing the mode or times of a course file fails.

Each grading also runs in a PID namespace of its own (grader.guard.containment), made by the process that forks it.
Landlock acts on the calling thread and the threads and processes it starts afterwards (ABI 8's TSYNC, which
would take the other threads along, is not on most kernels yet): a worker confines itself right after it is
forked, before CUDA or PyTorch start theirs (grader.engine.zygote.ForkedWorker).

`status()` says, in one line, what confinement a grading gets on this machine, or what is missing (macOS, an old
kernel, a container that forbids Landlock or namespaces, DEVCOURSE_ISOLATION=off).
`from_a_grading_process(conn)` tells the daemon's zygotes to refuse requests from a grading process.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import os
import platform
import shutil
import socket
import struct
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.guard.off_switch import OFF_VARIABLE, turned_off  # noqa: F401 (callers ask sandbox.turned_off())

PRIVATE_PREFIX = "devcourse-worker-"
#: Variables that tell the libraries learner code may use where to write: all point into the private folder.
WRITABLE_PLACES = ("TMPDIR", "TEMP", "TMP", "XDG_CACHE_HOME", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR",
                   "CUDA_CACHE_PATH", "TORCH_EXTENSIONS_DIR", "MPLCONFIGDIR")
#: What a GPU needs besides reading: its device files (opened read-write, driven by ioctl) and, on some hosts,
#: the sockets of NVIDIA's persistence and multi-process daemons.
GPU_DEVICES = ("/dev/nvidia*", "/dev/nvidia-caps/*")
GPU_SOCKET_FOLDERS = ("/run/nvidia-persistenced", "/var/run/nvidia-persistenced", "/tmp/nvidia-mps")


@dataclass(frozen=True)
class Isolation:
    available: bool
    how: str  # one line: what the grading process may do, or why it is not isolated


@functools.cache
def status() -> Isolation:
    """What `confine` does on this machine (cheap after the first call)."""
    if turned_off():
        return Isolation(False, f"isolation was turned off ({OFF_VARIABLE}=off)")
    if not sys.platform.startswith("linux"):
        name = "macOS" if sys.platform == "darwin" else platform.system() or sys.platform
        return Isolation(False, f"{name}: no isolation (Landlock, which the grader uses, is Linux's)")
    try:
        import landlockpy
    except ImportError:
        return Isolation(False, "the landlockpy package is missing (pip install landlockpy)")
    try:
        abi = landlockpy.abi_version()
    except OSError as exc:
        abi, why = 0, f": {exc.strerror}"
    else:
        why = ""
    if abi < 1:
        return Isolation(False, f"Landlock is not available on this kernel (Linux {platform.release()}{why}; it "
                                "needs 5.13 or later with landlock among its security modules, and a container "
                                "that allows it)")
    from grader.guard import containment

    missing = containment.probe()
    if missing:
        return Isolation(False, f"missing: own PID namespace, network namespace ({missing}); {describe(abi)}")
    return Isolation(True, describe(abi))


def describe(abi: int, privilege: str | None = None, whole: bool = True, contained: bool = True) -> str:
    """What a grading process confined at this Landlock ABI may not do, in one line: after `confine_job` (whole),
    or after `confine` alone (the doctor's script)."""
    limits = ["reads and writes by allow-list (no /proc, no other grading's files)" if whole
              else "writes only to a private folder"]
    if abi < 3:
        limits.append("(truncating other files is not stopped below ABI 3)")
    limits.append("no signals, tracing or abstract sockets outside it" if abi >= 6
                  else "no tracing outside it (signals are not restricted below ABI 6)")
    limits.append("no network (a network namespace)")
    if whole:
        limits += ["a PID namespace of its own"] if contained else []
        limits.append(privilege or ("runs as nobody" if os.geteuid() == 0 else "runs without capabilities"))
    return f"Landlock ABI {abi}: " + ", ".join(limits)


def private_folder() -> Path:
    """A new folder for one worker (mode 0700, under the system's temporary folder): made by the process that
    starts the worker, removed by it (`remove`) after the worker ended."""
    return Path(tempfile.mkdtemp(prefix=PRIVATE_PREFIX))


def remove(folder: Path | str | None) -> None:
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


def confine(private_dir: Path | str) -> Isolation:
    """Irreversibly restrict this process and all its future children (see the module's docstring) and make
    `private_dir` where libraries write: no network (a network namespace of its own), writes only there. Call it
    while the process has one thread; `confine_job` then restricts reading, before learner code runs. Never
    raises: where it cannot confine, the returned Isolation says why and grading goes on unconfined."""
    private_dir = Path(private_dir)
    _write_into(private_dir)
    state = status()
    if not state.available and not state.how.startswith("missing:"):
        return state
    others = _threads() - 1
    missing = []
    from grader.guard import namespaces

    try:
        if not namespaces.network_cut():  # the daemon's own (namespaces.leave_network), or one of its own
            namespaces.new_namespaces(namespaces.CLONE_NEWNET)  # before Landlock: it may write /proc/self/uid_map
    except OSError as exc:
        missing.append(f"network namespace ({exc.strerror})")
    try:
        _restrict(private_dir)
    except Exception as exc:  # noqa: BLE001 - the grade goes on, and its report says it was not isolated
        return Isolation(False, f"Landlock could not confine the grading process: {type(exc).__name__}: {exc}")
    _state["explainer"] = _Explainer(private_dir)
    sys.addaudithook(_state["explainer"])
    # Threads started before (a caller's mistake, or CUDA's: grader.engine.process_setup._confine_soon) stay unconfined: said
    # where the isolation is described.
    _state.update(missing=missing, note=f" ({others} thread(s) started before were not confined)" if others else "")
    return _with_missing(describe(_abi(), whole=False) + _state["note"], missing)


def _with_missing(how: str, missing: list[str]) -> Isolation:
    """What is missing first: the report's one line (grader.learner.report) says it."""
    return Isolation(not missing, f"missing: {', '.join(missing)}; {how}" if missing else how)


_state: dict = {"missing": [], "note": ""}  # what confine() could not do in this process, for confine_job's line


def confine_job(private_dir: Path | str, readable, listable=(), drop: bool = True) -> Isolation:
    """Before learner code runs, in a process `confine` confined: from now on it (and all it starts) reads only
    what grading needs (`readable_places`, and the files and folders of `readable`: the submission, the check)
    and, with `drop`, runs unprivileged (grader.guard.namespaces.drop_privileges; its private folder made its own
    first). A batch worker, which starts its answers' PID namespaces and runs no learner code, keeps its
    privileges (drop=False); each answer process drops them. Never raises; the Isolation says what is missing."""
    from grader.guard import containment, namespaces

    state = status()
    if not state.available and not state.how.startswith("missing:"):
        return state
    missing = list(_state["missing"])
    if not containment.CONTAINED:
        missing.append("own PID namespace")
    try:
        _restrict_reading([*readable_places(), *readable, private_dir], listable)
    except Exception as exc:  # noqa: BLE001
        missing.append(f"read allow-list ({type(exc).__name__}: {exc})")
    else:
        if "explainer" in _state:
            from grader import ROOT

            explainer = _state["explainer"]
            explainer.readable = {f(os.fspath(p)) for p in readable for f in (os.path.abspath, os.path.realpath)}
            explainer.unreadable = ("/proc/", os.path.join(os.path.realpath(ROOT), "solutions") + os.sep,
                                    os.path.join(os.path.abspath(ROOT), "solutions") + os.sep)
    privilege = None
    if drop:
        try:
            if os.geteuid() == 0:
                _give_to(private_dir, namespaces.UNPRIVILEGED)
            privilege = namespaces.drop_privileges()
        except OSError as exc:
            missing.append(f"dropping privileges ({exc.strerror or exc})")
    return _with_missing(describe(_abi(), privilege, contained=containment.CONTAINED) + _state["note"], missing)


def _abi() -> int:
    import landlockpy

    return landlockpy.abi_version()


def _give_to(folder, uid: int) -> None:
    """Make `folder` and what is in it (written by the grader before the drop: CUDA's cache) belong to `uid`."""
    for root, dirs, files in os.walk(folder):
        for name in (root, *(os.path.join(root, n) for n in dirs + files)):
            os.chown(name, uid, uid, follow_symlinks=False)


#: Files of /etc that the Python environment and the libraries it loads read; not /etc itself (a root process
#: reading as nobody with CAP_DAC_READ_SEARCH could read /etc/shadow).
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "passwd", "group",
             "nsswitch.conf", "host.conf", "hosts", "gai.conf", "mime.types", "os-release")
SYSTEM_PLACES = ("/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/sys/devices/system/cpu", "/dev/urandom",
                 "/dev/random")
#: What CUDA reads after it started, on a machine with NVIDIA GPUs (tools/GPU_RUNS.md checks it).
GPU_READ_PLACES = ("/proc/driver/nvidia", "/sys/bus/pci", "/sys/devices", "/sys/module/nvidia")


@functools.cache  # computed before the first layer: a nested one (a batch's answer) may not list grader/ again
def readable_places() -> tuple[str, ...]:
    """What every grading process may read: the interpreter and its environment (not the course folder, which
    holds solutions/, though an environment may live in it), system libraries, the grader's code except its
    checks (`confine_job` adds the one being run)."""
    from grader import ROOT

    root = os.path.realpath(ROOT)
    prefix = os.path.realpath(sys.prefix)
    places = [*SYSTEM_PLACES, *(f"/etc/{name}" for name in ETC_FILES)]
    if glob.glob(GPU_DEVICES[0]):
        places += GPU_READ_PLACES
    for entry in {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix, *sys.path}:
        real = os.path.realpath(entry) if entry else ""
        if not real or (root + os.sep).startswith(real.rstrip(os.sep) + os.sep):
            continue  # "" (the working folder), the course folder or a folder above it
        if real.startswith(root + os.sep) and not real.startswith(prefix + os.sep) and real != prefix:
            continue  # a folder of the course (exercises/, solutions/) on the path
        places.append(real)
    grader = os.path.join(root, "grader")
    places += [e.path for e in os.scandir(grader) if e.name != "checks"]
    return tuple(places)


def _restrict_reading(paths, listable=()) -> None:
    """A Landlock layer on top of confine's: reading (files, folders, executing) only in `paths`; listing (not
    reading) the folders `listable` (the import system lists a check's folder to import it)."""
    from landlockpy import AccessFS, AccessNet, Ruleset, Scope

    read = AccessFS.READ_FILE | AccessFS.READ_DIR | AccessFS.EXECUTE
    file_read = AccessFS.READ_FILE | AccessFS.EXECUTE
    devices = {"/dev/null", "/dev/zero", "/dev/full", "/dev/shm"} | {p for g in GPU_DEVICES for p in glob.glob(g)}
    with Ruleset(handled_fs=read, handled_net=AccessNet.NONE, scoped=Scope.NONE) as rules:
        for path in [*map(os.fspath, paths), *devices]:
            with contextlib.suppress(OSError):  # not on this machine
                rules.allow_path(path, read if os.path.isdir(path) else file_read)
        for path in listable:
            with contextlib.suppress(OSError):
                rules.allow_path(path, AccessFS.READ_DIR)
        rules.restrict()


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _write_into(private_dir: Path) -> None:
    for name in WRITABLE_PLACES:
        os.environ[name] = str(private_dir)
    tempfile.tempdir = str(private_dir)  # tempfile keeps the folder it found first


def _restrict(private_dir: Path) -> None:
    from landlockpy import AccessFS, Ruleset, Scope, fs_for_abi, abi_version

    every = fs_for_abi(abi_version())  # each right this kernel can refuse is refused unless granted below
    read = AccessFS.READ_FILE | AccessFS.READ_DIR | AccessFS.EXECUTE
    file_rights = AccessFS.READ_FILE | AccessFS.WRITE_FILE | AccessFS.TRUNCATE
    device = AccessFS.READ_FILE | AccessFS.WRITE_FILE | AccessFS.IOCTL_DEV
    with Ruleset(scoped=Scope.SIGNAL | Scope.ABSTRACT_UNIX_SOCKET) as rules:  # network: all handled, none granted
        rules.allow_path("/", read)
        rules.allow_path(private_dir, every)
        for path in ("/dev/null", "/dev/zero", "/dev/full"):
            with contextlib.suppress(FileNotFoundError):
                rules.allow_path(path, file_rights)
        with contextlib.suppress(FileNotFoundError):  # shared memory of DataLoader workers, semaphores
            rules.allow_path("/dev/shm", every & ~AccessFS.EXECUTE)
        for path in sorted({p for pattern in GPU_DEVICES for p in glob.glob(pattern)}):
            if not os.path.isdir(path):
                with contextlib.suppress(OSError):
                    rules.allow_path(path, device)
        for path in GPU_SOCKET_FOLDERS:
            if os.path.isdir(path):
                rules.allow_path(path, AccessFS.RESOLVE_UNIX)
        rules.restrict()  # and no_new_privs: no setuid program regains what this took


def from_a_grading_process(conn: socket.socket) -> bool:
    """Whether the peer of a Unix socket connection is a grading process or runs under one: learner code asking a
    daemon to grade or to stop. Told by what the kernel vouches for: the peer's pid and user (SO_PEERCRED) and
    its namespaces. Every grading process runs in a PID and a network namespace of its own (grader.guard.containment),
    as nobody where the daemon is root; a client in other namespaces than the daemon's, or of another user, is
    refused. Where gradings cannot have namespaces of their own, the peer's ancestors are looked at too (their
    command lines in /proc, which learner code cannot change). False where none of this can be told (macOS)."""
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (OSError, AttributeError):
        return False
    from grader.guard import namespaces

    pid, uid, _ = struct.unpack("3i", creds)
    if pid <= 0 or uid != os.geteuid() or not namespaces.same_namespaces(pid):
        return True
    return _under_a_grading_process(pid)


def _under_a_grading_process(pid: int) -> bool:
    seen = set()
    while pid > 1 and pid not in seen:
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"grader.engine.workers" in f.read().split(b"\0"):  # python -m grader.engine.workers ...
                    return True
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class _Explainer:
    """An audit hook that turns what Landlock would refuse with a bare "Permission denied" into an error that
    says why, before the kernel is asked: a write outside the private folder, a read of /proc or solutions/ (once
    confine_job restricted reading), a TCP connection, a signal to a process the code did not start. Only the message: the kernel's refusal is what protects, and it still
    refuses whatever goes around Python's audit events (native code)."""

    def __init__(self, private_dir: Path):
        self.private = os.path.realpath(private_dir)
        self.me = os.getpid()
        self.unreadable: tuple[str, ...] = ()  # set by confine_job: where reading is refused, explained,
        self.readable: set[str] = set()  # but for the files of its job

    def __call__(self, event: str, args: tuple) -> None:
        if event == "open":
            path, mode, flags = args
            if not isinstance(path, (str, bytes, os.PathLike)):
                return
            writes = (flags or 0) & WRITE_FLAGS or any(c in (mode or "") for c in "wax+")
            if writes and not self._may_write(path):
                raise PermissionError(f"your code tried to write {os.fsdecode(path)}: grading runs with write "
                                      "access only to a private temporary folder (tempfile.gettempdir(), "
                                      "$TMPDIR)")
            where = os.path.abspath(os.fsdecode(path))  # the message only: a link around it meets the kernel
            if (self.unreadable and where.startswith(self.unreadable) and "/fd/" not in where  # not /dev/stdout
                    and where not in self.readable):  # a course solution graded as the submission
                raise PermissionError(f"your code tried to open {os.fsdecode(path)}: grading reads only the Python "
                                      "environment, the grader, your file and its private temporary folder "
                                      "(not /proc, not the course's solutions)")
        elif event in ("socket.connect", "socket.bind") and args[0].family in (socket.AF_INET, socket.AF_INET6):
            raise PermissionError(f"your code tried to {event.split('.')[1]} a network socket ({args[1]}): "
                                  "grading runs without network access")
        elif event == "os.kill" and args[0] > 0 and not self._started_by_me(args[0]):
            raise PermissionError(f"your code may not signal the grader's processes (it signalled process "
                                  f"{args[0]}, which it did not start): it may signal only its own")

    def _may_write(self, path) -> bool:
        real = os.path.realpath(os.fsdecode(path))
        if real.startswith(("/proc/", "/dev/")):  # /dev/stdout (a pipe), a GPU's files: the kernel decides
            return True
        return real == self.private or real.startswith(self.private + os.sep)

    def _started_by_me(self, pid: int) -> bool:
        seen = set()
        while pid > 1 and pid not in seen:
            if pid == self.me or pid == os.getpid():
                return True
            seen.add(pid)
            try:
                with open(f"/proc/{pid}/stat") as f:
                    pid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                return True  # gone, or not ours to tell: the kernel decides
        return False
