"""Linux namespaces and credentials for grading processes, through libc (Python 3.11 has no os.unshare).

* `new_namespaces(flags)`: unshare the given namespaces; where this process may not (a user that is not root),
  inside a new user namespace of its own that maps only its own user (so it gains no right outside it).
* `drop_privileges()`: make this process unprivileged before learner code runs. Run by root (a grading host), it
  becomes `nobody` and keeps one capability, reading any file (CAP_DAC_READ_SEARCH), so that the Python
  environment under a root-only folder (/root/.pyenv) stays readable: what it may read is bounded by Landlock's
  allow-list (grader.guard.sandbox), and it owns no file of the course, so changing a file's mode, owner or times fails.
  Run by anyone else, it drops every capability (those a user namespace of its own gave it).
"""

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
UNPRIVILEGED = 65534  # nobody, nogroup
CAP_DAC_READ_SEARCH = 2
_CAP_VERSION_3 = 0x20080522
_PR_SET_KEEPCAPS = 8


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


def unshare(flags: int) -> None:
    if hasattr(os, "unshare"):
        os.unshare(flags)
    else:
        _check(_libc().unshare(flags))


def new_namespaces(flags: int) -> None:
    """Unshare `flags`; where that needs a privilege this process lacks, in a new user namespace that maps its own
    user and group to themselves. A user namespace needs a process with one thread. Raises OSError."""
    try:
        unshare(flags)
        return
    except PermissionError:
        pass
    uid, gid = os.geteuid(), os.getegid()
    unshare(CLONE_NEWUSER | flags)
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _set_capabilities(mask: int) -> None:
    """Effective and permitted capabilities of this thread: exactly `mask` (bits below 32), none inheritable."""
    data = (_CapData * 2)(_CapData(mask, mask, 0), _CapData(0, 0, 0))
    _check(_libc().capset(ctypes.byref(_CapHeader(_CAP_VERSION_3, 0)), data))


def drop_privileges() -> str:
    """Make this process unprivileged (see the module's docstring); one line saying how, for the report. Call it
    from the main thread, after every folder it writes to is its own. Raises OSError."""
    if os.geteuid() == 0:
        libc = _libc()
        try:
            _check(libc.prctl(_PR_SET_KEEPCAPS, 1, 0, 0, 0))
            os.setgroups([])
            os.setresgid(UNPRIVILEGED, UNPRIVILEGED, UNPRIVILEGED)
            os.setresuid(UNPRIVILEGED, UNPRIVILEGED, UNPRIVILEGED)
        except OSError:  # root of a user namespace that maps only itself: nobody is not there to become
            pass
        else:
            _set_capabilities(1 << CAP_DAC_READ_SEARCH)
            _check(libc.prctl(_PR_SET_KEEPCAPS, 0, 0, 0, 0))
            return "runs as nobody"
    _set_capabilities(0)
    return "runs without capabilities" if os.geteuid() else "runs as root without capabilities"


_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000


def own_proc() -> None:
    """In the first process of a new PID namespace: a mount namespace of its own, with a /proc that shows this PID
    namespace. CUDA does not start under the host's /proc seen from a new PID namespace (cudaGetDeviceCount:
    error 304; tools/GPU_RUNS.md, 2026-12-06), and a grading then sees no process outside its own namespace.
    Raises OSError (inside a Landlock domain, which forbids mounting: a batch's answers)."""
    libc = _libc()
    unshare(CLONE_NEWNS)
    _check(libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None))  # nothing mounted here reaches the host
    _check(libc.mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None))


KINDS = ("pid", "user", "net")
#: The namespaces of the daemon's clients: the daemon's own before it left the host's network (`leave_network`).
CLIENTS: dict[str, str] = {}


def _own() -> dict[str, str]:
    return {kind: os.readlink(f"/proc/self/ns/{kind}") for kind in KINDS}


def leave_network() -> None:
    """For a daemon, at its start (one thread): record its clients' namespaces, then enter a network namespace of
    its own, which every grading process forked from it shares. It has no interface up, so no grading reaches
    any network, another grading or the host by it; one for the daemon costs what one per grading would (about
    12 ms, and the kernel's teardown) once. Where it cannot, each grading makes its own (grader.guard.sandbox)."""
    CLIENTS.update(_own())
    try:
        new_namespaces(CLONE_NEWNET)
    except OSError:
        pass


def network_cut() -> bool:
    """Whether this process is in a network namespace with nothing but a loopback that is down."""
    import fcntl
    import socket
    import struct

    try:
        if [name for _, name in socket.if_nameindex()] != ["lo"]:
            return False
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            flags = struct.unpack("16sH", fcntl.ioctl(s, 0x8913, struct.pack("16sH14x", b"lo", 0))[:18])[1]
        return not flags & 1  # SIOCGIFFLAGS, IFF_UP
    except OSError:
        return False


def same_namespaces(pid: int) -> bool:
    """Whether process `pid` is in the PID, user and network namespaces of the daemon's clients (this process's own
    where the daemon did not leave them); False if it cannot be told."""
    try:
        return {kind: os.readlink(f"/proc/{pid}/ns/{kind}") for kind in KINDS} == (CLIENTS or _own())
    except OSError:
        return False
