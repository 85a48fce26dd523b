"""A submission runs confined by the operating system (grader.guard.sandbox): it cannot write outside a private
temporary folder, open a TCP connection, signal the grader's processes or ask the daemon to grade or stop.
Each attack is a real file graded through the real engine, written as an attacker with the source would; each
must fail with a message the learner understands, leave nothing behind, and the exercise's real solution,
graded right after, must still pass."""

import dataclasses
import os
import socket
import sys
import sysconfig
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from grader import ROOT
from grader.learner import report
from grader.engine import daemon, process_setup, runner, workers
from grader.guard import sandbox
from grader.catalog import course

EX = dataclasses.replace(course.get("masked_mean"), timeout=10)
# A correct body: only the attack can make a submission fail.
FIX = """
import os
import torch

def _right(x, lengths):
    T = x.shape[1]
    mask = (torch.arange(T, device=x.device)[None, :] < lengths[:, None]).to(x.dtype).unsqueeze(-1)
    return (x * mask).sum(1) / lengths[:, None].to(x.dtype)
"""
ISOLATED = sandbox.status()
needs_landlock = pytest.mark.skipif(not ISOLATED.available, reason=f"no isolation here: {ISOLATED.how}")
PRIVATE_FOLDER = "grading runs with write access only to a private temporary folder"
GPUS = process_setup._has_nvidia_gpus()


def attack(tmp_path, body: str, device="cpu"):
    """Grade a submission whose masked_mean first runs `body` (indented code), then answers right."""
    f = tmp_path / "attack.py"
    f.write_text(FIX + "\ndef masked_mean(x, lengths):\n" + textwrap.indent(textwrap.dedent(body), "    ")
                 + "    return _right(x, lengths)\n")
    return runner.grade(EX, f, device=device)


def messages(g) -> str:
    assert not g.passed, "the attack passed"
    return "\n".join(r.message for r in g.failures)


def the_solution_still_passes(device="cpu"):
    g = runner.grade(EX, EX.solution_file, device=device)
    assert g.passed, [r.message for r in g.failures]
    assert g.isolation and not g.unisolated, g.isolation
    # Confined with one thread; on a machine with NVIDIA GPUs the real legs are confined once CUDA has started
    # (CUDA cannot start confined: grader.engine.process_setup._confine_soon), which the line says.
    assert all(i["how"] == ISOLATED.how or (GPUS and i["how"].startswith(f"{ISOLATED.how} (") and
                                            "thread(s) started before were not confined" in i["how"])
               for i in g.isolation), g.isolation


# ------------------------------------------------------------------------------------------------ confine()
def _in_a_confined_child(private: Path, action, kernel_only=False) -> str:
    """Fork, confine the child into `private`, run `action` there; what it returned or raised, as text.
    kernel_only: Landlock's rules alone, without the audit hook that explains refusals."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            if kernel_only:
                sandbox._restrict(private)
            else:
                assert sandbox.confine(private).available
            try:
                out = f"{action()}"
            except OSError as exc:
                out = f"refused: errno {exc.errno}"
            os.write(w, out.encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        out = f.read()
    os.waitpid(pid, 0)
    return out


@pytest.fixture
def private():
    folder = sandbox.private_folder()
    yield folder
    sandbox.remove(folder)
    assert not folder.exists()


@needs_landlock
def test_confine_blocks_writes_outside_the_private_folder_in_a_forked_child(tmp_path, private):
    outside = tmp_path / "outside.txt"
    assert _in_a_confined_child(private, lambda: outside.write_text("x")) == "refused: errno None"  # explained
    assert _in_a_confined_child(private, lambda: outside.write_text("x"), kernel_only=True) == "refused: errno 13"
    assert not outside.exists()
    assert _in_a_confined_child(private, lambda: (private / "mine.txt").write_text("ok")) == "2"
    assert _in_a_confined_child(private, tempfile.gettempdir) == str(private)
    assert _in_a_confined_child(private, lambda: open("/dev/null", "w").write("x")) == "1"
    if os.path.isdir("/dev/shm"):  # DataLoader workers share tensors there; semaphores live there
        assert _in_a_confined_child(private, lambda: tempfile.TemporaryFile(dir="/dev/shm").write(b"x")) == "1"
    # A pipe of its own reopened by name, as open("/dev/stdout", "w") does in a worker, whose output is a pipe.
    assert _in_a_confined_child(private, lambda: open(f"/proc/self/fd/{os.pipe()[1]}", "w").write("x")) == "1"
    assert _in_a_confined_child(private, lambda: _in_a_grandchild(outside), kernel_only=True) == "13"  # inherited
    assert not outside.exists()


@needs_landlock
def test_confine_says_when_threads_started_before_it_stay_unconfined(private):
    def with_a_thread():
        import threading

        stop = threading.Event()
        threading.Thread(target=stop.wait).start()
        try:
            return sandbox.confine(private).how
        finally:
            stop.set()

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(w, with_a_thread().encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        how = f.read()
    os.waitpid(pid, 0)
    assert how == f"{sandbox.describe(sandbox._abi(), whole=False)} (1 thread(s) started before were not confined)"


def _in_a_grandchild(path: Path) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            path.write_text("x")
            os._exit(0)
        except OSError as exc:
            os._exit(exc.errno)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


@needs_landlock
def test_the_kernel_refuses_signals_tracing_and_tcp_outside_the_domain(private):
    parent = os.getpid()
    if "no signals" in ISOLATED.how:  # ABI 6
        assert _in_a_confined_child(private, lambda: os.kill(parent, 0), kernel_only=True) == "refused: errno 1"
    assert _in_a_confined_child(private, lambda: open(f"/proc/{parent}/mem", "rb"), kernel_only=True) == \
        "refused: errno 13"
    if "no TCP" in ISOLATED.how:  # ABI 4
        with socket.create_server(("127.0.0.1", 0)) as server:
            port = server.getsockname()[1]
            connect = lambda: socket.create_connection(("127.0.0.1", port), timeout=5)  # noqa: E731
            assert _in_a_confined_child(private, connect, kernel_only=True) == "refused: errno 13"
    # Its own children it may signal.
    assert _in_a_confined_child(private, lambda: _signal_a_child()) == "-9"


def _signal_a_child() -> int:
    pid = os.fork()
    if pid == 0:
        while True:
            pass
    os.kill(pid, 9)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


# ------------------------------------------------------------------------------------------------ attacks
@needs_landlock
def test_a_conftest_written_into_the_checks_is_refused(tmp_path):
    target = ROOT / "grader" / "checks" / "conftest.py"
    g = attack(tmp_path, f"""
        with open({str(target)!r}, "w") as f:
            f.write("def pytest_runtest_makereport(item, call):\\n    call.excinfo = None\\n")
    """)
    assert f"your code tried to write {target}" in messages(g) and PRIVATE_FOLDER in messages(g)
    assert not target.exists()
    the_solution_still_passes()


@needs_landlock
def test_a_module_written_into_site_packages_is_refused(tmp_path):
    site = Path(sysconfig.get_paths()["purelib"])
    target = site / "devcourse_isolation_probe.py"
    g = attack(tmp_path, """
        import sys  # the source policy refuses sysconfig; the path can be built all the same
        folder = os.path.join(sys.prefix, "lib", f"python{sys.version_info.major}.{sys.version_info.minor}",
                              "site-packages")
        with open(os.path.join(folder, "devcourse_isolation_probe.py"), "w") as f:
            f.write("PWNED = True\\n")
    """)
    assert f"your code tried to write {target}" in messages(g), messages(g)
    assert not target.exists()
    the_solution_still_passes()


@needs_landlock
def test_a_file_written_into_the_course_folder_is_refused(tmp_path):
    target = ROOT / "exercises" / "03_mismatch" / "masked_mean.py"
    before = target.read_bytes()
    g = attack(tmp_path, f"""
        with open({str(target)!r}, "a") as f:  # the exercise file every learner's reset restores from git
            f.write("\\n# changed by a submission\\n")
    """)
    assert f"your code tried to write {target}" in messages(g) and PRIVATE_FOLDER in messages(g)
    assert target.read_bytes() == before
    the_solution_still_passes()


@needs_landlock
def test_going_around_the_explanation_is_still_refused_by_the_kernel(tmp_path):
    # An attacker who knows of the explaining audit hook truncates through os.truncate and links a check into
    # its own folder to write it there: no "open" event, so the kernel's refusal is what the learner sees.
    check = EX.grader_file
    before = check.read_bytes()
    g = attack(tmp_path, f"""
        import tempfile
        try:
            os.truncate({str(check)!r}, 0)
        finally:
            os.link({str(check)!r}, os.path.join(tempfile.gettempdir(), "check.py"))
    """)
    assert "Permission denied" in messages(g) or "Operation not permitted" in messages(g) or \
        "cross-device" in messages(g), messages(g)
    assert check.read_bytes() == before
    the_solution_still_passes()


@needs_landlock
def test_another_workers_private_folder_cannot_be_written(tmp_path):
    # Each check grades the real legs and the simulated device at once, and each family keeps a worker started
    # ahead of the next job: other workers' private folders exist beside this one while it runs. Their names
    # cannot be listed (the temporary folder is not readable): the attack is given one.
    other = sandbox.private_folder()
    try:
        g = attack(tmp_path, f"""
            with open({str(other / "planted.py")!r}, "w") as f:
                f.write("x = 1\\n")
        """, device=None)
        assert "your code tried to write" in messages(g) and PRIVATE_FOLDER in messages(g), messages(g)
        assert not (other / "planted.py").exists()
    finally:
        sandbox.remove(other)
    the_solution_still_passes()


@needs_landlock
@pytest.mark.skipif("ABI 1:" in ISOLATED.how or "network not restricted" in ISOLATED.how, reason="Landlock ABI < 4")
def test_a_tcp_connection_to_a_local_server_is_refused(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        g = attack(tmp_path, f"""
            from multiprocessing.connection import Client  # the source policy refuses socket, not this
            Client(("127.0.0.1", {port})).send_bytes(b"grade me")
        """)
        assert "grading runs without network access" in messages(g), messages(g)
        server.setblocking(False)
        with pytest.raises(BlockingIOError):
            server.accept()  # nothing ever connected
    the_solution_still_passes()


@needs_landlock
@pytest.mark.skipif("abstract sockets" not in ISOLATED.how,
                    reason=f"Landlock ABI < 6 scopes no abstract Unix sockets ({ISOLATED.how})")
def test_a_listener_on_an_abstract_unix_socket_outside_cannot_be_reached(tmp_path):
    # An abstract socket has no file for Landlock's file rules to refuse: the worker's scope refuses it, and behind
    # that the grading's network namespace, whose abstract names are not the host's (the connection is refused).
    name = f"devcourse-test-{os.getpid()}-{tmp_path.name}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind("\0" + name)
        server.listen()
        g = attack(tmp_path, f"""
            from multiprocessing.connection import Client  # the source policy refuses socket, not this
            Client("\\0" + {name!r}).send_bytes(b"grade me")
            raise RuntimeError("connected to a listener outside")
        """)
        text = messages(g)
        assert "connected to a listener outside" not in text, text
        assert "PermissionError" in text or "ConnectionRefusedError" in text, text
        server.setblocking(False)
        with pytest.raises(BlockingIOError):
            server.accept()  # nothing ever connected
    assert all("abstract sockets outside it" in i["how"] for i in g.isolation), g.isolation
    the_solution_still_passes()


@needs_landlock
def test_signalling_the_zygote_is_refused(tmp_path):
    where = daemon.ensure()
    zygote = daemon._talk(where, "real", {"ping": True}, timeout=30)["pid"]
    g = attack(tmp_path, f"""
        try:
            os.kill({zygote}, 15)  # its pid, known somehow: not in the grading's PID namespace
        except ProcessLookupError:
            pass
        os.kill(os.getppid(), 15)  # the process above it, its keeper
    """)
    assert "may not signal the grader's processes" in messages(g), messages(g)
    assert daemon._talk(where, "real", {"ping": True}, timeout=30)["pid"] == zygote
    the_solution_still_passes()


def _zygotes(where: Path) -> dict:
    """The pid of each family's zygote, once warm: a fresh daemon answers through stand-ins first."""
    pids = {}
    for family in ("real", "sim"):
        deadline = time.monotonic() + 120
        while not (ping := daemon._talk(where, family, {"ping": True}, timeout=30))["warm"]:
            assert time.monotonic() < deadline, f"the {family} zygote never warmed up"
            time.sleep(0.05)
        pids[family] = ping["pid"]
    return pids


@needs_landlock
def test_asking_the_daemon_to_stop_is_refused(tmp_path):
    where = daemon.ensure()
    before = _zygotes(where)
    g = attack(tmp_path, f"""
        from multiprocessing.connection import Client  # the source policy refuses socket, not this
        daemon = Client({str(where / "real.sock")!r})  # where the kernel refuses it, PermissionError
        try:
            os.write(daemon.fileno(), b'{{"stop": true}}\\n')  # the daemon's own protocol: a line of JSON
            answer = os.read(daemon.fileno(), 1000)
        except OSError:  # hung up on before the line was read
            answer = b""
        raise RuntimeError("the daemon answered " + repr(answer))
    """)
    # Refused by the kernel (the socket's folder is outside what a grading may reach), or, where the kernel lets
    # it connect, hung up on by the daemon without a word (tests/test_confinement.py checks that layer alone).
    assert "the daemon answered b''" in messages(g) or "PermissionError" in messages(g), messages(g)
    assert _zygotes(where) == before  # still the same processes: not stopped
    the_solution_still_passes()


# ------------------------------------------------------------------------------------------------ without isolation
def test_a_grade_made_without_isolation_says_so_in_one_line(tmp_path, monkeypatch):
    where = tmp_path / "daemon"  # a daemon of its own: the suite's stays isolated
    monkeypatch.setenv("DEVCOURSE_DAEMON_DIR", str(where))
    monkeypatch.setenv(sandbox.OFF_VARIABLE, "off")
    try:
        g = runner.grade(EX, EX.solution_file, device="cpu")
    finally:
        daemon.stop(where)
    assert g.passed and g.unisolated == [f"isolation was turned off ({sandbox.OFF_VARIABLE}=off)"]
    text = report.render_text(lambda console: report.print_grade(console, g))
    lines = [ln for ln in text.splitlines() if "without isolation" in ln]
    assert lines == [f"graded without isolation: isolation was turned off ({sandbox.OFF_VARIABLE}=off)"], text
    assert report.grade_json(g)["isolated"] is False


@needs_landlock
def test_an_isolated_grade_says_nothing_about_it(tmp_path):
    g = runner.grade(EX, EX.solution_file, device="cpu")
    assert g.passed and g.isolation and not g.unisolated
    assert "isolation" not in report.render_text(lambda console: report.print_grade(console, g))
    assert report.grade_json(g)["isolated"] is True


def test_status_is_one_line():
    assert "\n" not in ISOLATED.how and ISOLATED.how
    if not sys.platform.startswith("linux"):
        assert not ISOLATED.available


@needs_landlock
def test_the_private_folder_is_the_temporary_folder_and_is_removed_after_the_grading(tmp_path):
    g = attack(tmp_path, """
        import tempfile
        with open(os.path.join(tempfile.gettempdir(), "scratch.txt"), "w") as f:  # allowed: its own folder
            f.write("x")
        raise RuntimeError("private folder: " + tempfile.gettempdir() + " ;")
    """)
    folder = Path(messages(g).split("private folder: ")[1].split(" ;")[0])
    assert folder.name.startswith(sandbox.PRIVATE_PREFIX) and folder.parent == Path(tempfile.gettempdir())
    assert not folder.exists()


@needs_landlock
def test_spawned_workers_are_confined_too(tmp_path, monkeypatch):
    # Where fork is unsafe (macOS; DEVCOURSE_WORKERS=spawn), each job runs in a spare started ahead of it.
    monkeypatch.setenv("DEVCOURSE_DAEMON_DIR", str(tmp_path / "daemon"))
    monkeypatch.setenv("DEVCOURSE_WORKERS", "spawn")
    target = ROOT / "grader" / "checks" / "conftest.py"
    try:
        g = attack(tmp_path, f"""
            with open({str(target)!r}, "w") as f:
                f.write("")
        """)
        assert f"your code tried to write {target}" in messages(g)
        assert not target.exists()
        # A spare is exec'ed by a grading process forked under a keeper: a PID namespace of its own too.
        g = runner.grade(EX, EX.solution_file, device="cpu")
        # (on a GPU machine the real family's line ends with the note that CUDA's threads started first)
        assert g.passed and not g.unisolated and all(i["how"].startswith(ISOLATED.how) for i in g.isolation), g.isolation
    finally:
        daemon.stop(tmp_path / "daemon")


@needs_landlock
def test_a_host_without_namespaces_is_not_fully_isolated_and_says_what_is_missing(monkeypatch):
    from grader.guard import containment
    from grader.classroom import isolation

    monkeypatch.setattr(containment, "probe", lambda: "no namespaces (Operation not permitted)")
    found = sandbox.status.__wrapped__()  # not the cached answer of this host
    assert not found.available and "\n" not in found.how
    assert found.how.startswith("missing: own PID namespace, network namespace (no namespaces (Operation not "
                                "permitted)); Landlock ABI"), found.how
    assert found.how in isolation.refusal(found) and "--unisolated" in isolation.refusal(found)
