"""The operating system draws every boundary of a grading (issue 40): a submission reads only what grading needs
(grader.guard.sandbox's allow-list: not /proc, not solutions/, not a classmate's answer), reaches no network (UDP
included: a network namespace), runs unprivileged (metadata changes of course files fail), and whatever it starts
ends with its grading (grader.guard.containment: a PID namespace per grading), counted against that grading alone.
Each attack is a real file graded through the real engine, as a learner who has read the source would write it;
each must fail, and the exercise's solution graded right after must pass."""

import ctypes
import faulthandler
import hashlib
import os
import socket
import tempfile
import time
from pathlib import Path

import pytest

from grader.guard import containment, namespaces, sandbox
from grader.engine import daemon, runner
from tests.peer_listener import PeerListener
from tests.test_isolation import EX, ISOLATED, attack, messages, the_solution_still_passes

pytestmark = pytest.mark.skipif(not ISOLATED.available, reason=f"no full confinement here: {ISOLATED.how}")


@pytest.fixture
def classmate():
    """An answer of another learner, where the classroom keeps them (a folder under the temporary folder)."""
    folder = Path(tempfile.mkdtemp(prefix="devcourse-class-")) / "0123456789abcdef01234567"
    folder.mkdir()
    answer = folder / "masked_mean.py"
    answer.write_text(EX.solution_file.read_text())
    yield answer
    answer.unlink()
    folder.rmdir()
    folder.parent.rmdir()


def test_a_submission_reads_nothing_beyond_its_grading_and_changes_no_course_file(tmp_path, classmate):
    course_file = EX.exercise_file
    before = course_file.stat()
    other = sandbox.private_folder()  # another worker's, as its handler makes it
    (other / "theirs.txt").write_text("x")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.bind(("127.0.0.1", 0))
        port = udp.getsockname()[1]
        g = attack(tmp_path, f"""
            from torch.utils.collect_env import run  # Popen(shell=True): a shell runs
            tried = []
            def attempt(name, action):
                try:
                    action()
                    tried.append(name + ": done")
                except OSError as exc:
                    tried.append(name + ": " + type(exc).__name__)
            attempt("mem", lambda: open("/proc/self/mem", "rb").close())  # the channel's token is in there
            attempt("maps", lambda: open("/proc/self/maps").read())
            attempt("parent", lambda: open("/proc/1/cmdline").read())
            attempt("solution", lambda: open({str(EX.solution_file)!r}).read())
            attempt("classmate", lambda: open({str(classmate)!r}).read())
            attempt("other worker", lambda: open({str(other / "theirs.txt")!r}).read())
            attempt("temporary folder", lambda: os.listdir({tempfile.gettempdir()!r}))
            attempt("chmod", lambda: os.chmod({str(course_file)!r}, 0o777))
            attempt("utime", lambda: os.utime({str(course_file)!r}, (0, 0)))
            rc, out, err = run("bash -c 'echo stolen > /dev/udp/127.0.0.1/{port}' && echo sent")
            tried.append("udp: " + (out or "refused"))
            raise RuntimeError("; ".join(tried) + " ;")
        """)
        said = messages(g).split("RuntimeError: ")[-1].split(" ;")[0]
        sandbox.remove(other)
        assert said == ("mem: PermissionError; maps: PermissionError; parent: PermissionError; solution: "
                        "PermissionError; classmate: PermissionError; other worker: PermissionError; temporary "
                        "folder: PermissionError; chmod: PermissionError; utime: PermissionError; udp: refused"), \
            messages(g)
        udp.setblocking(False)
        with pytest.raises(BlockingIOError):
            udp.recv(100)  # no datagram ever came
    after = course_file.stat()
    assert (after.st_mode, after.st_mtime_ns) == (before.st_mode, before.st_mtime_ns)
    assert "records the grader did not send" not in messages(g)
    the_solution_still_passes()


def _warm_zygotes(where) -> dict:
    """The daemon's zygotes' pids, once each has taken over from its stand-in (a fresh daemon's change once)."""
    for _ in range(600):  # a hang guard, not a timing
        answers = {fam: daemon._talk(where, fam, {"ping": True}, timeout=30) for fam in ("real", "sim")}
        if all(a.get("warm") for a in answers.values()):
            return {fam: a["pid"] for fam, a in answers.items()}
        time.sleep(0.1)
    raise AssertionError("the daemon never warmed up")


class _Beacon(PeerListener):
    """A Unix socket the attack's processes connect to once each, so that the test can look for them afterwards."""

    def __init__(self, path: Path):
        self.pids: list[int] = []
        super().__init__(path, lambda conn, pid: (self.pids.append(pid), conn.sendall(b"x")))


def test_a_process_in_a_session_of_its_own_ends_with_its_grading_and_never_reaches_the_daemon(tmp_path):
    where = daemon.ensure()
    before = _warm_zygotes(where)
    beacon = _Beacon(tmp_path / "beacon.sock")
    g = attack(tmp_path, f"""
        import time
        from multiprocessing.connection import Client
        if not os.environ.get("STARTED"):  # once, though each check calls it
            os.environ["STARTED"] = "1"
            r, w = os.pipe()
            if os.fork() == 0:  # a child that stays alive, so its own child is no orphan when leftovers are swept
                os.setsid()
                if os.fork() == 0:
                    told = Client({str(tmp_path / "beacon.sock")!r})  # its pid, seen by the test
                    os.close(w)
                    for _ in range(600):  # then, once the grading is over, ask the daemon to stop
                        time.sleep(0.05)
                        try:
                            Client({str(where / "real.sock")!r}).send_bytes(b'{{"stop": true}}')
                        except OSError:
                            pass
                    os._exit(0)
                os.close(w)
                time.sleep(60)
                os._exit(0)
            os.close(w)
            os.read(r, 1)  # until the grandchild has told its pid
    """)
    assert any("left 2 process(es) running" in r.message for r in g.failures), messages(g)
    assert len(beacon.pids) == 1
    assert not os.path.exists(f"/proc/{beacon.pids[0]}")  # ended with the grading, before its result came back
    beacon.close()
    assert _warm_zygotes(where) == before
    the_solution_still_passes()


def test_a_keeper_reports_the_status_and_the_leftovers_of_its_grading_alone():
    pid, report = containment.fork_contained()
    if pid == 0:
        r, w = os.pipe()  # closed on exec: read to its end once both programs run
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv("/bin/sleep", ["sleep", "60"])  # a program exec'ed: still in the namespace
            os.execv("/bin/sleep", ["sleep", "60"])
        os.close(w)
        os.read(r, 1)
        faulthandler.disable()  # pytest's, which would print this child's stack
        os.kill(os.getpid(), 11)  # the grading process is not its namespace's pid 1: its own signal ends it
    _, status = os.waitpid(pid, 0)
    status, left = containment.outcome(report, status)
    assert (os.waitstatus_to_exitcode(status), left) == (-11, 2)


def test_a_grading_process_may_not_talk_to_a_daemon():
    """The daemon's check (sandbox.from_a_grading_process), by what the kernel vouches for: a process in
    namespaces of its own is refused, one in the daemon's is not."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path = Path(tempfile.mkdtemp()) / "s.sock"
    server.bind(str(path))
    server.listen(2)
    for contained in (False, True):
        pid, report = containment.fork_contained() if contained else (os.fork(), None)
        if pid == 0:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(str(path))
                s.recv(1)
            os._exit(0)
        conn, _ = server.accept()
        with conn:
            assert sandbox.from_a_grading_process(conn) is contained
            conn.sendall(b"x")
        os.waitpid(pid, 0)
        containment.outcome(report, None)
    server.close()
    path.unlink()
    path.parent.rmdir()


def in_a_child(body) -> str:
    """What `body()` returns, run in a forked child (whose privileges and namespaces it may change for good)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(w, body().encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        said = f.read()
    os.waitpid(pid, 0)
    return said


def test_an_unprivileged_grading_process_cannot_change_a_file_it_does_not_own(tmp_path):
    target = tmp_path / "course.py"
    target.write_text("x = 1\n")
    os.chmod(tmp_path, 0o755)

    def child():
        how = namespaces.drop_privileges()
        try:
            os.chmod(target, 0o777)
            done = "changed"
        except PermissionError:
            done = "refused"
        return f"{how}: {done}; reads: {target.read_text().strip()}"

    said = in_a_child(child)
    if os.geteuid() == 0:
        assert said == "runs as nobody: refused; reads: x = 1"
    else:  # the learner's own machine: its own files stay its own
        assert said.startswith("runs without capabilities")


def test_in_a_class_an_answer_cannot_read_a_classmates_answer():
    """The classroom writes every answer into one folder (grader.classroom.answers); an answer given the exact path
    of a classmate's (graded in the same batch) cannot read it, and the classmate gets the grade of its own."""
    from grader.engine import batch
    from grader.catalog import course
    from grader.classroom import answers, source

    if not batch.supported("sim"):
        pytest.skip("no batches here (not fork mode)")
    mm = course.get("masked_mean")
    classmates = source.solution_code(mm)
    with answers.ClassGrades() as grades:
        digest = hashlib.sha256(f"masked_mean\0{classmates}".encode()).hexdigest()
        theirs = grades._folder / digest[:24] / "masked_mean.py"  # where ClassGrades writes it
        attack = f"""
import os
try:
    SAW = open({str(theirs)!r}).read()[:0] + "read it"
except OSError as exc:
    SAW = type(exc).__name__
""" + classmates + """

def masked_mean(x, lengths):
    raise RuntimeError("classmate: " + SAW + " ;")
"""
        attacker, classmate = (f.result() for f in grades.submit_all([("masked_mean", attack),
                                                                       ("masked_mean", classmates)]))
    assert not attacker.passed
    assert {r.message.split("classmate: ")[1].split(" ;")[0] for r in attacker.failures
            if "classmate: " in r.message} == {"PermissionError"}, [r.message for r in attacker.failures]
    assert classmate.passed and not classmate.unisolated, classmate.failures


def test_a_user_that_is_not_root_gets_its_namespaces_inside_a_user_namespace_of_its_own():
    """On a learner's own machine: new_namespaces falls back to a user namespace that maps only that user."""
    if os.geteuid() != 0:
        pytest.skip("becoming another user takes root")
    import encodings.idna  # noqa: F401 - which connect() imports: nobody may not read /root's Python

    outside = os.readlink("/proc/self/ns/net")

    def child():
        try:
            os.setresgid(namespaces.UNPRIVILEGED, namespaces.UNPRIVILEGED, namespaces.UNPRIVILEGED)
            os.setresuid(namespaces.UNPRIVILEGED, namespaces.UNPRIVILEGED, namespaces.UNPRIVILEGED)
            ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # dumpable again, as a process its user started is
            namespaces.new_namespaces(namespaces.CLONE_NEWNET)
            with open("/proc/self/uid_map") as f:
                mapped = " ".join(f.read().split())
            try:
                socket.create_connection(("127.0.0.1", 9), timeout=5)
                net = "connected"
            except OSError as exc:
                net = type(exc).__name__
            return f"{mapped}; {os.readlink('/proc/self/ns/net') != outside}; {net}"
        except OSError as exc:
            return f"failed: {exc}"

    said = in_a_child(child)
    assert said == "65534 65534 1; True; OSError", said


def test_a_contained_grading_sees_only_its_own_namespace_in_proc():
    # CUDA starts only where /proc is the namespace's own (tools/GPU_RUNS.md, 2026-12-06); it also hides every
    # process outside the grading. Run in a child: fork_contained makes its caller a subreaper.
    outside = os.getpid()

    def child():
        pid, report = containment.fork_contained(os.fork, last=True)
        if pid == 0:
            seen = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
            os._exit(0 if os.readlink("/proc/self") == str(os.getpid()) and outside not in seen
                     and seen == [1, os.getpid()] else 1)
        _, status = os.waitpid(pid, 0)
        worker_status, left = containment.outcome(report, status)
        return f"{os.waitstatus_to_exitcode(worker_status)} {left}"

    assert in_a_child(child) == "0 0"

# ------------------------------------------------------------------------------------------ without a PID namespace
def _leave_a_session_behind(w) -> None:
    """In a grading process: a child in a session of its own that stays alive (so its own child is no orphan when
    the grading ends), and that child, which execs a program; both pids written to `w`, then the grading ends."""
    r2, w2 = os.pipe()
    if os.fork() == 0:
        os.setsid()
        grandchild = os.fork()
        if grandchild == 0:
            os.execv("/bin/sleep", ["sleep", "60"])
        os.write(w, f"{os.getpid()} {grandchild}".encode())
        os.close(w)
        os.close(w2)
        os.execv("/bin/sleep", ["sleep", "60"])
    os.close(w)
    os.close(w2)
    os.read(r2, 1)  # until the child execs (its copy of w2 is closed then)
    os._exit(3)


def test_without_a_pid_namespace_the_keeper_still_ends_every_process_of_its_grading():
    r, w = os.pipe()
    pid, report = containment.fork_contained(pid_namespace=False)
    if pid == 0:
        os.close(r)
        assert not containment.CONTAINED
        _leave_a_session_behind(w)
    os.close(w)
    with os.fdopen(r) as f:
        left_behind = [int(p) for p in f.read().split()]
    _, status = os.waitpid(pid, 0)
    status, left = containment.outcome(report, status)
    assert (os.waitstatus_to_exitcode(status), left) == (3, 2)
    assert len(left_behind) == 2 and not [p for p in left_behind if containment._state(p) not in (None, "Z")]


def _two_gradings_at_once(body, uses_cuda: bool) -> list[str]:
    """What `body()` says in each of two contained gradings that live at the same time (the first still runs
    when the second starts, as a ready worker and a check's worker do)."""
    release_r, release_w = os.pipe()
    said, started = [], []
    for _ in range(2):
        r, w = os.pipe()
        pid, report = containment.fork_contained(uses_cuda=uses_cuda)
        if pid == 0:
            os.close(release_w)
            os.close(r)
            try:
                text = body()
            except Exception as exc:  # noqa: BLE001 - the test reports it
                text = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
            os.write(w, text.encode())
            os.close(w)
            os.read(release_r, 1)  # alive until both have said theirs
            os._exit(0)
        os.close(w)
        with os.fdopen(r) as f:
            said.append(f.read())
        started.append((pid, report))
    os.close(release_w)
    os.close(release_r)
    for pid, report in started:
        containment.outcome(report, os.waitpid(pid, 0)[1])
    return said


_HELD = []


def _bind_as_libcuda() -> str:
    held = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    _HELD.append(held)  # bound until this process ends
    held.bind(f"\0cuda-uvmfd-{os.stat('/proc/self/ns/net').st_ino}-{os.getpid()}")
    return "bound"


def test_a_grading_that_uses_cuda_gets_a_network_namespace_of_its_own(monkeypatch):
    """libcuda binds an abstract socket named after its network namespace and pid; every grading is pid 2 of its
    PID namespace, so two at once in one network namespace collide (CUDA's error 304). Bound here as libcuda
    does, by two gradings at once: in the network namespace they share, the second is refused; each in its own
    (uses_cuda on a machine with NVIDIA GPUs), both bind."""
    monkeypatch.setattr(containment, "nvidia_gpus", lambda: True)
    assert _two_gradings_at_once(_bind_as_libcuda, uses_cuda=False) == ["bound", "OSError: [Errno 98] Address "
                                                                         "already in use"]
    assert _two_gradings_at_once(_bind_as_libcuda, uses_cuda=True) == ["bound", "bound"]


@pytest.mark.skipif(not containment.nvidia_gpus(), reason="needs NVIDIA GPUs")
def test_two_gradings_that_use_cuda_at_once_both_start_it():
    """On a GPU machine: two contained gradings of the real family start CUDA at once, as a ready worker and a
    check's worker do. Sharing this process's network namespace (uses_cuda=False), the second one's CUDA is
    expected to fail with error 304: said in the message, not asserted."""
    import torch

    if torch.cuda.is_initialized():
        pytest.skip("CUDA started in this process already: its forks cannot use it")

    def start_cuda() -> str:
        torch.empty(1, device="cuda:0")
        return "started"

    shared = _two_gradings_at_once(start_cuda, uses_cuda=False)
    assert _two_gradings_at_once(start_cuda, uses_cuda=True) == ["started", "started"], \
        f"(sharing a network namespace: {shared})"


def test_a_grading_without_a_pid_namespace_leaves_nothing_to_the_next_and_says_what_it_missed(tmp_path, monkeypatch):
    """DEVCOURSE_PID_NAMESPACE=off (a host where CUDA would fail in one): through the real engine, a submission's
    grandchild in a session of its own, whose parent is still alive when the grading ends, ends with the grading;
    the report counts both and says the namespace is missing; the next grading passes."""
    where = tmp_path / "daemon"  # a daemon of its own: the suite's keeps its namespaces
    monkeypatch.setenv("DEVCOURSE_DAEMON_DIR", str(where))
    monkeypatch.setenv(containment.PID_NAMESPACE_VARIABLE, "off")
    beacon = _Beacon(tmp_path / "beacon.sock")
    try:
        g = attack(tmp_path, f"""
            import time
            from multiprocessing.connection import Client
            if not os.environ.get("STARTED"):
                os.environ["STARTED"] = "1"
                r, w = os.pipe()
                if os.fork() == 0:
                    os.setsid()
                    if os.fork() == 0:
                        Client({str(tmp_path / "beacon.sock")!r})
                        os.close(w)
                        time.sleep(60)
                        os._exit(0)
                    os.close(w)
                    time.sleep(60)
                    os._exit(0)
                os.close(w)
                os.read(r, 1)
        """)
        assert any("left 2 process(es) running" in r.message for r in g.failures), messages(g)
        assert len(beacon.pids) == 1 and containment._state(beacon.pids[0]) in (None, "Z")
        missing = f"missing: own PID namespace; {sandbox.describe(sandbox._abi(), contained=False)}"
        assert g.unisolated and all(how.startswith(missing) for how in g.unisolated), g.unisolated
        honest = runner.grade(EX, EX.solution_file, device="cpu")
        assert honest.passed and all(how.startswith(missing) for how in honest.unisolated), honest.failures
    finally:
        beacon.close()
        daemon.stop(where)
