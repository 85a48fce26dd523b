"""A warm pytest for mutation testing: import torch and the other third-party modules once, then fork a fresh
pytest for each run, so that a mutant costs its tests, not ten seconds of imports.

    python tools/mutation/forkserver.py serve SOCKET          # once (tools/mutation/run.sh starts it)
    python tools/mutation/forkserver.py run SOCKET -- ARGS    # cosmic-ray's test-command: pytest ARGS in cwd

Nothing of the project (grader, book/_ext, tests) is imported by the server: each forked run imports it from
disk, from its own working directory, so it sees the mutant cosmic-ray wrote there. Each run gets a fresh
DEVCOURSE_DAEMON_DIR (warm grading workers of its own, stopped when the run ends) and a hard time limit.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

# Third-party modules the project imports; anything missing is skipped.
PRELOAD = ["torch", "torch.utils._python_dispatch", "torch.utils._pytree", "torch.testing", "torch.nn",
           "torch.optim", "torch.utils.data", "torch.autograd", "torch.fx", "torch.amp", "numpy", "pytest",
           "_pytest", "pytest_timeout", "tomllib", "rich", "nbformat", "jupytext", "yaml", "psutil"]
LIMIT = float(os.environ.get("FORKSERVER_LIMIT", "300"))


def _preload() -> None:
    sys.dont_write_bytecode = True  # a mutant can have its original's size and second: never trust a .pyc
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    extra = os.environ.get("FORKSERVER_PRELOAD_FILE")
    names = PRELOAD + (open(extra).read().split() if extra and os.path.exists(extra) else [])
    for name in names:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - optional
            pass


def _stop_daemons(where: str) -> None:
    for name in os.listdir(where) if os.path.isdir(where) else ():
        if name.endswith(".sock"):
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                    s.settimeout(5)
                    s.connect(os.path.join(where, name))
                    s.sendall(b'{"stop": true}\n')
                    s.recv(100)
            except OSError:
                pass
    shutil.rmtree(where, ignore_errors=True)


def _handle(conn: socket.socket, scratch: str) -> None:
    request = json.loads(conn.makefile("rb").readline())
    daemon_dir = tempfile.mkdtemp(prefix="daemon-", dir=scratch)
    out = os.path.join(daemon_dir + ".out")
    pid = os.fork()
    if pid == 0:  # the run: a fresh pytest in the requested folder
        os.setpgid(0, 0)
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.chdir(request["cwd"])
        os.environ.update(request.get("env", {}))
        os.environ["DEVCOURSE_DAEMON_DIR"] = daemon_dir
        os.environ.setdefault("DEVCOURSE_IDLE_SECONDS", "120")
        sys.path[0:0] = [request["cwd"]]
        sys.argv = ["pytest", *request["args"]]
        rc = 3
        try:
            import pytest
            rc = int(pytest.main(request["args"]))
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(rc)
    deadline = time.monotonic() + float(request.get("limit", LIMIT))
    rc = None
    while rc is None:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            rc = os.waitstatus_to_exitcode(status)
        elif time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            rc = 124
        else:
            time.sleep(0.05)
    _stop_daemons(daemon_dir)
    text = open(out, errors="replace").read()[-20000:]
    if rc == 124:
        text += f"\nforkserver: TIMEOUT after {request.get('limit', LIMIT)} s\n"
    os.unlink(out)
    conn.sendall((json.dumps({"rc": rc, "out": text}) + "\n").encode())


def serve(path: str) -> None:
    scratch = tempfile.mkdtemp(prefix="forkserver-", dir=os.path.dirname(os.path.abspath(path)))
    _preload()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # handlers are reaped by the kernel
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(8)
    print(f"forkserver ready on {path} (pid {os.getpid()})", flush=True)
    while True:
        conn, _ = server.accept()
        if os.fork() == 0:
            server.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            try:
                _handle(conn, scratch)
            finally:
                os._exit(0)
        conn.close()


def run(path: str, args: list[str]) -> int:
    env = {k: v for k, v in os.environ.items() if k.startswith(("DEVCOURSE_", "PYTEST_"))}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        for _ in range(600):  # the server may still be importing torch
            try:
                s.connect(path)
                break
            except OSError:
                time.sleep(0.5)
        else:
            print("forkserver: no answer (cannot connect)")  # report.py and recheck.py treat this as not run
            return 2
        s.sendall((json.dumps({"cwd": os.getcwd(), "args": args, "env": env}) + "\n").encode())
        line = s.makefile("rb").readline()
    if not line:
        print("forkserver: no answer")
        return 2
    answer = json.loads(line)
    sys.stdout.write(answer["out"])
    return answer["rc"]


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    elif sys.argv[1] == "run":
        rest = sys.argv[3:]
        sys.exit(run(sys.argv[2], rest[1:] if rest[:1] == ["--"] else rest))
