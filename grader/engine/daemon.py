"""The client side of the warm grading processes (grader.engine.workers): find them, start them, talk to them.

One daemon per course folder. Its sockets live in a private folder (mode 0700) under $XDG_RUNTIME_DIR or the
temporary directory, named after a hash of the course folder; `DEVCOURSE_DAEMON_DIR` chooses another (the
project's tests use their own). The first check starts it; it ends after some idle minutes
(`DEVCOURSE_IDLE_SECONDS`, 15 min by default) or with `devcourse stop`. A daemon whose grader code has changed
since it started is replaced. This module imports no torch, so the learner's tool starts fast.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader import ROOT
from grader.engine import settings
from grader.engine.judging import _stat
from grader.engine.workers import FAMILIES, code_digest

START_TIMEOUT = 180.0  # a cold start imports torch twice on a busy machine at worst


class DaemonError(RuntimeError):
    """The grading processes could not be started or reached."""


def folder(root: Path = ROOT) -> Path:
    chosen = os.environ.get("DEVCOURSE_DAEMON_DIR")
    if chosen:
        return Path(chosen)
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()) / f"devcourse-{os.getuid()}"
    return base / hashlib.sha256(str(Path(root).resolve()).encode()).hexdigest()[:12]


def _talk(where: Path, family: str, request: dict, timeout: float | None = None) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(str(where / f"{family}.sock"))
        with s.makefile("rwb") as stream:
            stream.write((json.dumps(request) + "\n").encode())
            stream.flush()
            line = stream.readline()
    if not line:
        raise DaemonError(f"the {family} grading process ended without answering")
    return json.loads(line)


def _alive(where: Path, digest: str) -> bool:
    try:
        return all(_talk(where, fam, {"ping": True}, timeout=5).get("digest") == digest for fam in FAMILIES)
    except (OSError, ValueError, DaemonError):
        return False


STOP_TIMEOUT = 30.0  # seconds: a stand-in answers once prepared, which takes seconds on a loaded machine


def stop(where: Path | None = None) -> bool:
    """End the daemon of this course folder; False if none was running."""
    where = where or folder()
    stopped = False
    for fam in FAMILIES:
        with contextlib.suppress(OSError, ValueError, DaemonError):
            _talk(where, fam, {"stop": True}, timeout=STOP_TIMEOUT)
            stopped = True
    return stopped


def ensure(where: Path | None = None, wait: bool = True) -> Path:
    """The folder of a running, up-to-date daemon, started if need be. With wait=False, return as soon as one
    is starting (grader.launch starts it this way before the tool's own imports). A setting the grading
    processes would fail on is refused here, in the caller's words (grader.engine.settings)."""
    try:
        settings.check()
    except settings.SettingError as exc:
        raise DaemonError(str(exc)) from None
    where = where or folder()
    where.mkdir(parents=True, exist_ok=True, mode=0o700)
    digest = code_digest()
    if _alive(where, digest):
        return where
    import fcntl

    with open(where / "start.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two checks started at once start one daemon
        if _alive(where, digest):
            return where
        started = not _running(where, digest)
        if started:
            _start(where, digest)
        if not wait:
            return where
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if all((where / f"{fam}.sock").exists() for fam in FAMILIES) and _alive(where, digest):
                return where
            if not _running(where, digest):
                if started:  # the daemon this call started died: say why at once
                    break
                # The one another process started ended before it answered (stopped, or idle): start ours.
                _start(where, digest)
                started, deadline = True, time.monotonic() + START_TIMEOUT
            elif time.monotonic() > deadline:
                if started:
                    break
                # A daemon of this code that has not answered for the whole start limit is hung: replace it.
                _start(where, digest)
                started, deadline = True, time.monotonic() + START_TIMEOUT
            time.sleep(0.02)
    tail = (where / "daemon.log").read_text(errors="replace")[-2000:]
    raise DaemonError(f"the grading processes did not start (within {START_TIMEOUT:g} s):\n{tail}")


def _start(where: Path, digest: str) -> None:
    """Replace whatever daemon this folder has by a new one, and mark it as starting."""
    stop(where)
    for fam in FAMILIES:
        with contextlib.suppress(FileNotFoundError):
            (where / f"{fam}.sock").unlink()
    with open(where / "daemon.log", "ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "grader.engine.workers", "serve", "--dir", str(where)],
                                cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True, env={**os.environ, "PYTHONPATH": _pythonpath()})
    (where / "starting").write_text(f"{proc.pid} {digest}")


def _running(where: Path, digest: str) -> bool:
    """The daemon of this folder, of this code, still runs (its marker names a live process): starting, or busy.
    It is waited for, not replaced, however long it has run: on a loaded machine a busy daemon answers a ping late,
    and replacing it ends the gradings it holds."""
    marker = where / "starting"
    try:
        pid, started_digest = marker.read_text().split()
        os.kill(int(pid), 0)
    except (OSError, ValueError):
        return False
    return started_digest == digest and not _is_zombie(int(pid))


def _is_zombie(pid: int) -> bool:
    st = _stat(pid)
    return st is not None and st[0] == "Z"


def _pythonpath() -> str:
    return os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)


def submit(jobs: list[tuple[str, dict]]) -> list[dict]:
    """Run jobs [(family, job)] at once, one per family, and return their answers in order."""
    where = ensure()
    socks = []
    try:
        for family, job in jobs:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(str(where / f"{family}.sock"))
            s.sendall((json.dumps({"job": job}) + "\n").encode())
            socks.append((family, s))
        answers = []
        for family, s in socks:
            with s.makefile("rb") as stream:
                line = stream.readline()
            answers.append(json.loads(line) if line else {"error": f"the {family} grading process died"})
        return answers
    finally:
        for _, s in socks:
            s.close()
