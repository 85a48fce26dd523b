"""In-process tests of the grading processes' decisions (grader.engine.limits, grader.engine.daemon, grader.engine.workers), for the
mutation report (tools/mutation/modules.tsv; issue 31): each test runs in well under a second, with no daemon of
its own. The same decisions are met through the real command in tests/test_front_end_decisions.py,
test_daemon.py and test_grading_robustness.py; these tests pin the values behind them."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from grader import ROOT
from grader.guard import containment
from grader.engine import daemon, grading_process, judging, limits, process_setup, workers, zygote

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _alive(pids) -> set[int]:
    return {p for p in pids if containment._state(p) not in (None, "Z", "X")}


def _live_children(pid: int) -> set[int]:
    return _alive(containment._children(pid))


# ------------------------------------------------------------------------------------------------ limits
def test_the_limits_are_the_documented_ones():
    """README.md and grader/INTEGRITY.md promise these numbers to learners and instructors."""
    assert (limits.DEVICE_MEMORY, limits.HOST_MEMORY, limits.OUTPUT_LIMIT) == (4 << 30, 6 << 30, 64 << 20)
    readme = (ROOT / "README.md").read_text()
    assert "print up to 64 MiB and use 6 GiB of host memory and 4 GiB per accelerator" in readme
    assert "`3 × timeout + 30` s on the clock" in readme
    assert limits.describe_memory() == "4 GiB on each accelerator, 6 GiB on the host"
    assert limits.wall_limit(10) == 60 and limits.wall_limit(0.5) == 31.5


def test_output_tail_keeps_the_end_and_says_what_it_left_out():
    assert limits.OUTPUT_SENT == 8000
    exact = "x" * 8000
    assert limits.output_tail(exact) == exact  # at the limit: whole, no note
    text = "a" * 10 + "b" * 7995 + "END"
    tail = limits.output_tail(text)
    assert tail == "[... 8 earlier characters not shown]\n" + ("a" * 2 + "b" * 7995 + "END")


def test_explain_names_the_limit_a_message_ran_into():
    too_large = limits.explain("OSError: [Errno 27] File too large")
    assert too_large.startswith("OSError: [Errno 27] File too large\nThat is the output limit of grading")
    assert "may reach 64 MiB per file" in too_large
    assert "That is the output limit" in limits.explain("File too large")  # either wording
    assert "That is the output limit" in limits.explain("[Errno 27] something")
    memory = limits.explain("MemoryError: out of host memory")
    assert memory.endswith("That is the memory limit of grading (4 GiB on each accelerator, 6 GiB on the host): "
                           "your code asked for more than a check may use. Is a tensor far bigger than the "
                           "exercise needs?")
    said = "MemoryError: over the memory limit of grading"
    assert limits.explain(said) == said  # already explained: not twice
    assert limits.explain("ValueError: bad shape") == "ValueError: bad shape"


# ------------------------------------------------------------------------------------------------ the daemon
@pytest.fixture
def where():
    """A short folder (a Unix socket's path has at most 107 bytes) for a stand-in daemon's sockets."""
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="dcu-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


class FakeDaemon:
    """Both families' sockets in `where`, answered by a thread as the zygotes answer: a ping with the digest,
    a stop (then the socket goes), a job with `answers[family]` (None: hang up without a line). Records what
    each request was."""

    def __init__(self, where: Path, digest: str, answers=None, digests=None):
        self.where, self.requests, self.stopped = where, [], set()
        self.answers = answers or {}
        self.digests = digests or {}
        self.servers = {}
        for fam in workers.FAMILIES:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(str(where / f"{fam}.sock"))
            s.listen(8)
            s.settimeout(0.05)
            self.servers[fam] = s
        self.digest, self.running = digest, True
        self.unanswered_pings = 0  # the next pings hung up on without an answer: a daemon too busy to answer
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while self.running:
            for fam, s in list(self.servers.items()):
                try:
                    conn, _ = s.accept()
                except (TimeoutError, OSError):
                    continue
                conn.settimeout(10)  # a client that never sends its line (a broken one) does not hang the test
                with conn, conn.makefile("rwb") as stream:
                    try:
                        raw = stream.readline()
                        request = json.loads(raw)
                    except (OSError, ValueError):
                        continue
                    self.requests.append((fam, raw))
                    if request.get("ping") and self.unanswered_pings:
                        self.unanswered_pings -= 1
                        reply = None
                    elif request.get("ping"):
                        reply = {"digest": self.digests.get(fam, self.digest), "pid": os.getpid()}
                    elif request.get("stop"):  # gone before it answers, as a stopped zygote's socket is
                        reply = {"stopped": True}
                        self.stopped.add(fam)
                        s.close()
                        (self.where / f"{fam}.sock").unlink()
                        del self.servers[fam]
                    else:
                        reply = self.answers.get(fam)
                    if reply is not None:
                        with contextlib.suppress(OSError):
                            stream.write((json.dumps(reply) + "\n").encode())
                            stream.flush()

    def close(self):
        self.running = False
        self.thread.join(30)
        for fam, s in self.servers.items():
            s.close()
            (self.where / f"{fam}.sock").unlink(missing_ok=True)


@pytest.fixture(autouse=True)
def short_start_limit(monkeypatch):
    """A start that cannot succeed fails after 20 s instead of 180 (plenty for the stand-in daemons here)."""
    monkeypatch.setattr(daemon, "START_TIMEOUT", 20.0)


@pytest.fixture
def fake(where):
    made = []

    def start(**kw):
        made.append(FakeDaemon(where, **kw))
        return made[-1]

    yield start
    for f in made:
        f.close()


def test_the_daemon_folder_is_chosen_or_named_after_the_course_folder(monkeypatch, tmp_path):
    import hashlib

    monkeypatch.setenv("DEVCOURSE_DAEMON_DIR", str(tmp_path / "chosen"))
    assert daemon.folder() == tmp_path / "chosen"
    monkeypatch.delenv("DEVCOURSE_DAEMON_DIR")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    digest = hashlib.sha256(str(tmp_path.resolve()).encode()).hexdigest()
    assert daemon.folder(tmp_path) == tmp_path / "run" / f"devcourse-{os.getuid()}" / digest[:12]
    assert daemon.folder() == tmp_path / "run" / f"devcourse-{os.getuid()}" / hashlib.sha256(
        str(ROOT.resolve()).encode()).hexdigest()[:12]
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    import tempfile

    assert daemon.folder(tmp_path).parent == Path(tempfile.gettempdir()) / f"devcourse-{os.getuid()}"


def test_talk_sends_one_json_line_and_reads_one(where, fake):
    f = fake(digest="d1", answers={"sim": {"results": [1]}})
    assert daemon._talk(where, "sim", {"job": {"x": 1}}) == {"results": [1]}
    assert f.requests == [("sim", b'{"job": {"x": 1}}\n')]
    f.answers["real"] = None  # hangs up without a line
    with pytest.raises(daemon.DaemonError, match="the real grading process ended without answering"):
        daemon._talk(where, "real", {"job": {}})


def test_a_daemon_is_alive_when_both_families_answer_with_this_code(where, fake):
    assert not daemon._alive(where, "d1")  # no sockets
    f = fake(digest="d1")
    assert daemon._alive(where, "d1")
    assert {fam for fam, _ in f.requests} == set(workers.FAMILIES)
    assert all(json.loads(raw) == {"ping": True} for _, raw in f.requests)
    assert not daemon._alive(where, "d2")  # older (or newer) grader code
    f.digests["sim"] = "old"
    assert not daemon._alive(where, "d1")  # one family of other code is enough
    f.digests.pop("sim")
    f.answers["real"] = None
    (where / "sim.sock").unlink()  # a family gone (a zygote killed)
    assert not daemon._alive(where, "d1")


def test_alive_gives_a_hung_daemon_five_seconds(where, monkeypatch):
    seen = []

    def talk(where_, fam, request, timeout=None):
        seen.append(timeout)
        raise TimeoutError("timed out")  # an OSError

    monkeypatch.setattr(daemon, "_talk", talk)
    assert not daemon._alive(where, "d")
    assert seen == [5]
    for exc in (ValueError("not JSON"), daemon.DaemonError("hung up")):
        monkeypatch.setattr(daemon, "_talk", lambda *a, exc=exc, **k: (_ for _ in ()).throw(exc))
        assert not daemon._alive(where, "d")


def test_stop_asks_every_family_and_says_whether_one_ran(where, fake, monkeypatch):
    assert daemon.stop(where) is False
    f = fake(digest="d")
    assert daemon.stop(where) is True
    assert f.stopped == set(workers.FAMILIES)
    assert daemon.STOP_TIMEOUT == 30.0
    monkeypatch.setenv("DEVCOURSE_DAEMON_DIR", str(where))
    g = fake(digest="d")  # the default folder
    assert daemon.stop() is True and g.stopped == set(workers.FAMILIES)
    seen = []
    monkeypatch.setattr(daemon, "_talk", lambda w, fam, req, timeout=None: seen.append((fam, req, timeout)) or {})
    assert daemon.stop(where) is True
    assert seen == [(fam, {"stop": True}, 30.0) for fam in workers.FAMILIES]


def test_ensure_returns_a_live_daemon_without_starting_one(where, fake, monkeypatch):
    target = where / "sub" / "daemon"
    target.mkdir(parents=True)
    f = FakeDaemon(target, digest=workers.code_digest())
    try:
        monkeypatch.setattr(daemon, "_start", lambda *a: pytest.fail("started a second daemon"))
        assert daemon.ensure(target) == target
        monkeypatch.setenv("DEVCOURSE_DAEMON_DIR", str(target))
        assert daemon.ensure() == target
    finally:
        f.close()


def test_ensure_waits_for_a_busy_daemon_of_this_code_however_long_it_has_run(where, fake, monkeypatch):
    # On a loaded machine a daemon busy grading answers pings late: replacing it would end the gradings it holds
    # (a class graded on a Dask cluster lost some). Its marker names a live process of this code, started long ago.
    digest = workers.code_digest()
    (where / "starting").write_text(f"{os.getpid()} {digest}")  # this process stands for the daemon
    an_hour_ago = time.time() - 3600
    os.utime(where / "starting", (an_hour_ago, an_hour_ago))
    f = fake(digest=digest)
    f.unanswered_pings = 5
    monkeypatch.setattr(daemon, "_start", lambda *a: pytest.fail("replaced a live daemon of this code"))
    assert daemon.ensure(where) == where
    assert f.unanswered_pings == 0 and f.stopped == set()


def test_ensure_replaces_a_daemon_that_stays_silent_for_the_whole_start_limit(where, fake, monkeypatch):
    digest = workers.code_digest()
    (where / "starting").write_text(f"{os.getpid()} {digest}")
    f = fake(digest=digest)
    f.unanswered_pings = 10**6  # hung
    monkeypatch.setattr(daemon, "START_TIMEOUT", 0.0)  # the limit is long past at the first look
    started = []

    def start(w, d):
        started.append(d)
        f.unanswered_pings = 0  # the new daemon answers

    monkeypatch.setattr(daemon, "_start", start)
    assert daemon.ensure(where) == where and started == [digest]


def test_ensure_makes_a_private_folder_and_starts_a_daemon_that_answers(where, monkeypatch):
    target = where / "new" / "daemon"
    started = []

    def start(w, digest):
        started.append((w, digest))
        (w / "starting").write_text(f"{os.getpid()} {digest}")  # this process stands for the daemon
        threading.Timer(0.3, lambda: made.append(FakeDaemon(w, digest=digest))).start()

    made: list[FakeDaemon] = []
    monkeypatch.setattr(daemon, "_start", start)
    try:
        assert daemon.ensure(target) == target
    finally:
        for f in made:
            f.close()
    assert started == [(target, workers.code_digest())]
    assert target.stat().st_mode & 0o777 == 0o700
    assert (target / "start.lock").exists()


def test_ensure_waits_until_the_daemon_answers_with_this_code(where, monkeypatch):
    """A daemon whose sockets are there but that does not answer with this code yet (still starting, or of older
    code) is not returned: ensure waits until it does."""
    digest = workers.code_digest()
    made = []

    def start(w, d):
        (w / "starting").write_text(f"{os.getpid()} {d}")
        made.append(FakeDaemon(w, digest="not yet"))
        threading.Timer(0.5, lambda: made[0].digests.update(dict.fromkeys(workers.FAMILIES, d))).start()

    monkeypatch.setattr(daemon, "_start", start)
    try:
        assert daemon.ensure(where) == where
        assert daemon._alive(where, digest)
    finally:
        for f in made:
            f.close()


def test_ensure_without_waiting_returns_once_started(where, monkeypatch):
    started = []
    monkeypatch.setattr(daemon, "_start", lambda w, d: started.append(w))
    assert daemon.ensure(where, wait=False) == where and started == [where]
    # One is starting (its marker names a live process of this code): no second start.
    (where / "starting").write_text(f"{os.getpid()} {workers.code_digest()}")
    assert daemon.ensure(where, wait=False) == where and started == [where]


def test_ensure_reports_a_daemon_that_died_while_starting(where, monkeypatch):
    def start(w, digest):  # the daemon dies at once: no marker of a live process
        (w / "daemon.log").write_text("x" * 3000 + "ImportError: the reason it died\n")

    asked = []
    running = daemon._running
    monkeypatch.setattr(daemon, "_start", start)
    monkeypatch.setattr(daemon, "_running", lambda *a: asked.append(1) or running(*a))
    with pytest.raises(daemon.DaemonError) as err:
        daemon.ensure(where)
    assert len(asked) == 2  # before the start, then once: it is not asked again until the start limit
    text = str(err.value)
    assert text.startswith("the grading processes did not start (within 20 s):\n")
    assert text.endswith("ImportError: the reason it died\n")
    assert len(text.split(":\n", 1)[1]) == 2000  # the log's end


def test_ensure_starts_its_own_when_the_one_it_waited_for_ends(where, monkeypatch):
    """Another process's daemon was starting (its marker), then ended without answering: start ours."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    digest = workers.code_digest()
    (where / "starting").write_text(f"{sleeper.pid} {digest}")
    started, made = [], []

    def start(w, d):
        started.append(w)
        (w / "starting").write_text(f"{os.getpid()} {d}")
        made.append(FakeDaemon(w, digest=d))

    monkeypatch.setattr(daemon, "_start", start)
    threading.Timer(0.3, sleeper.kill).start()
    try:
        assert daemon.ensure(where) == where
    finally:
        sleeper.wait()
        for f in made:
            f.close()
    assert started == [where]


def test_start_replaces_the_daemon_and_marks_it_starting(where, fake, monkeypatch):
    f = fake(digest="old")
    launched = []

    class Proc:
        pid = 4242

    def popen(args, **kw):
        launched.append((args, kw))
        return Proc()

    monkeypatch.setattr(daemon.subprocess, "Popen", popen)
    monkeypatch.setenv("PYTHONPATH", "/somewhere/else")
    daemon._start(where, "d9")
    assert f.stopped == set(workers.FAMILIES)  # the old one was asked to stop
    assert not any((where / f"{fam}.sock").exists() for fam in workers.FAMILIES)
    (args, kw), = launched
    assert args == [sys.executable, "-m", "grader.engine.workers", "serve", "--dir", str(where)]
    assert kw["cwd"] == ROOT and kw["start_new_session"] is True and kw["stdin"] == subprocess.DEVNULL
    assert kw["env"]["PYTHONPATH"] == os.pathsep.join([str(ROOT), "/somewhere/else"])
    assert kw["stdout"] is kw["stderr"] and kw["stdout"].name == str(where / "daemon.log")
    assert (where / "starting").read_text() == "4242 d9"
    monkeypatch.delenv("PYTHONPATH")
    assert daemon._pythonpath() == str(ROOT)
    for fam in workers.FAMILIES:  # sockets of a daemon that died: nobody answers on them
        stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stale.bind(str(where / f"{fam}.sock"))
        stale.close()
    daemon._start(where, "d10")
    assert not any((where / f"{fam}.sock").exists() for fam in workers.FAMILIES)


@linux
def test_running_means_a_live_process_of_this_code_however_long_ago_it_started(where, monkeypatch):
    monkeypatch.undo()  # the real start limit
    assert daemon.START_TIMEOUT == 180.0  # a cold start imports torch twice on a busy machine at worst
    marker = where / "starting"
    assert not daemon._running(where, "d")  # no marker
    # It would end on SIGHUP (whatever this test inherited, nohup included): asking must send no signal.
    sleeper = subprocess.Popen([sys.executable, "-c", "import signal, time; "
                                "signal.signal(signal.SIGHUP, signal.SIG_DFL); print('ready', flush=True); "
                                "time.sleep(60)"], stdout=subprocess.PIPE)
    assert sleeper.stdout.readline() == b"ready\n"
    try:
        marker.write_text(f"{sleeper.pid} d")
        assert daemon._running(where, "d")
        assert not daemon._running(where, "other")
        old = time.time() - daemon.START_TIMEOUT - 5
        os.utime(marker, (old, old))
        assert daemon._running(where, "d")  # started long ago: busy, not dead
        with pytest.raises(subprocess.TimeoutExpired):  # still running a second later: no signal reached it
            sleeper.wait(timeout=1)
        marker.write_text("garbage")
        assert not daemon._running(where, "d")
    finally:
        sleeper.kill()
        sleeper.stdout.close()
    os.waitid(os.P_PID, sleeper.pid, os.WEXITED | os.WNOWAIT)  # until it has ended, leaving it unreaped
    assert daemon._is_zombie(sleeper.pid)  # ended, not yet waited for
    marker.write_text(f"{sleeper.pid} d")
    assert not daemon._running(where, "d")
    sleeper.wait()
    assert not daemon._is_zombie(sleeper.pid) and not daemon._running(where, "d")  # gone
    assert not daemon._is_zombie(os.getpid())


def test_submit_sends_each_job_to_its_family_and_answers_in_order(where, fake, monkeypatch):
    f = fake(digest="d", answers={"real": {"results": ["r"]}, "sim": {"results": ["s"]}})
    monkeypatch.setattr(daemon, "ensure", lambda: where)
    assert daemon.submit([("sim", {"n": 1}), ("real", {"n": 2})]) == [{"results": ["s"]}, {"results": ["r"]}]
    assert sorted(f.requests) == [("real", b'{"job": {"n": 2}}\n'), ("sim", b'{"job": {"n": 1}}\n')]
    f.answers["sim"] = None  # its process died: no line
    assert daemon.submit([("real", {}), ("sim", {})]) == [{"results": ["r"]},
                                                         {"error": "the sim grading process died"}]
    assert daemon.submit([]) == []


# ------------------------------------------------------------------------------------------------ workers: judge
TOKEN = "t" * 32


def rec(**fields) -> str:
    return json.dumps({**fields, "token": TOKEN})


def status_of(code: int) -> int:
    """A wait status for an exit code (or, negative, a signal), as os.waitpid returns it."""
    return -code if code < 0 else code << 8


COLLECTED = rec(collected=[["test_a", "cpu"], ["test_b", "cpu"]])


def judged(lines, code=70, exit_code=70, stopped=None, leftovers=0, tail="", spec="cpu"):
    return judging.judge(lines, TOKEN, exit_code, status_of(code) if code is not None else None, stopped,
                         leftovers, tail, {"spec": spec})


def outcome(check="test_a", leg="cpu", result="passed", **extra):
    return rec(check=check, leg=leg, outcome=result, message="", seconds=0.5, trace=[], output="", **extra)


def test_judge_keeps_one_result_per_listed_check():
    answer = judged([rec(isolation="Landlock ABI 4", isolated=True), COLLECTED, outcome(),
                     outcome("test_b", result="failed"), rec(end=1)])
    assert answer["isolation"] == {"isolated": True, "how": "Landlock ABI 4"}
    assert answer["results"] == [
        {"check": "test_a", "leg": "cpu", "outcome": "passed", "message": "", "seconds": 0.5, "trace": [],
         "output": ""},
        {"check": "test_b", "leg": "cpu", "outcome": "failed", "message": "", "seconds": 0.5, "trace": [],
         "output": ""}]


def test_judge_refuses_records_the_grader_did_not_send():
    forged = [COLLECTED, outcome(), "not json", json.dumps({"check": "test_b", "leg": "cpu", "outcome": "passed"}),
              json.dumps(["a list"]), outcome("test_c"), outcome("test_a"), outcome("test_b", result="won"),
              outcome("test_b"), rec(end=0)]
    answer = judged(forged)
    assert [r["check"] for r in answer["results"]] == ["test_a", "test_b", "(grader process)"]
    assert answer["results"][-1] == {
        "check": "(grader process)", "leg": "cpu", "outcome": "failed", "seconds": 0,
        "message": "the grading channel received 6 record(s) the grader did not send: a submission that writes "
                   "its own results is not graded"}
    before = judged([rec(hello=1), COLLECTED, outcome(), outcome("test_b"), rec(end=0)])  # before the list
    assert "received 1 record(s)" in before["results"][-1]["message"]
    assert judged([COLLECTED, outcome(), outcome("test_b"), rec(end=0)])["results"][-1]["check"] == "test_b"


def test_judge_takes_the_isolation_once_and_only_before_the_list():
    answer = judged([rec(isolation="first", isolated="yes"), rec(isolation="second", isolated=True), COLLECTED,
                     outcome(), outcome("test_b"), rec(end=0)])
    assert answer["isolation"] == {"isolated": False, "how": "first"}  # only `True` counts as isolated
    assert "received 1 record(s)" in answer["results"][-1]["message"]
    assert judged([COLLECTED, outcome(), outcome("test_b"), rec(end=0)])["isolation"] is None


def test_judge_says_why_the_grader_could_not_run():
    said = judged([rec(error="the check module x.py could not be loaded: E"), rec(end=2)])
    assert said["results"] == [{"check": "(grader process)", "leg": "cpu", "outcome": "failed", "seconds": 0,
                                "message": "the grader could not run: the check module x.py could not be loaded: E"}]
    first = judged([rec(error="first"), rec(error="second")])
    assert first["results"][0]["message"] == "the grader could not run: first"
    tail = "\n".join(f"line {i}" for i in range(9)) + "\n\n"
    from_output = judged([rec(end=4)], tail=tail)  # pytest refused to start: its output says why
    assert from_output["results"][0]["message"] == "the grader could not run: line 4\nline 5\nline 6\nline 7\nline 8"
    assert judged([], code=-9)["results"][0]["message"] == (
        "the grader could not run: it ended before listing its checks")
    assert judging._last_lines("a\nb\nc", 2) == "b\nc"


def test_judge_names_what_ended_the_run_early():
    killed = judged([COLLECTED, outcome()], code=-11)
    assert killed["results"][-1]["message"] == (
        "the process running your code was killed by signal 11 (a crash in native code, or too much memory?) (1 "
        "of 2 checks never reported a result)")
    assert len(killed["results"]) == 2  # the unreported check is named by the process's one message
    exited = judged([COLLECTED, outcome()], code=0)
    assert exited["results"][-1]["message"] == (
        "your code ended the grading process after 1 of 2 checks (does it call exit()?) (1 of 2 checks never "
        "reported a result)")
    no_end = judged([COLLECTED, outcome(), outcome("test_b")], code=70)  # its exit code, but no end record
    assert no_end["results"][-1]["message"].startswith("your code ended the grading process after 2 of 2 checks")
    wrong_code = judged([COLLECTED, outcome(), outcome("test_b"), rec(end=0)], code=71)
    assert wrong_code["results"][-1]["check"] == "(grader process)"
    assert judged([COLLECTED, outcome(), outcome("test_b"), rec(end=0)], code=None)["results"][-1]["check"] == (
        "(grader process)")
    stopped = judged([COLLECTED, outcome()], code=-9, stopped="the check was stopped: nobody waits")
    assert stopped["results"][-1]["message"] == ("the check was stopped: nobody waits (1 of 2 checks never "
                                                 "reported a result)")
    stopped_early = judged([], code=-9, stopped="stopped before the list")
    assert [r["message"] for r in stopped_early["results"]] == ["stopped before the list"]


def test_judge_fails_each_check_that_never_reported():
    ended = judged([COLLECTED, rec(end=2)], code=70)  # pytest ended early, the process itself did not fail
    assert [(r["check"], r["outcome"], r["message"]) for r in ended["results"]] == [
        (c, "failed", "this check never reported a result: the grading run ended early (something your code did "
                      "stopped pytest).") for c in ("test_a", "test_b")]
    assert ended["results"][0]["seconds"] == 0 and ended["results"][0]["trace"] == []
    planted = judged([COLLECTED, outcome(result="failed"), rec(stopped="planted code")], code=0)
    assert [(r["check"], r["message"]) for r in planted["results"]][1:] == [
        ("test_b", "this check never reported a result: the grading stopped at an earlier check, which says why.")]
    # Forged records and an early exit: the count of checks never reported goes with what ended the run
    both = judged([COLLECTED, outcome(), json.dumps({"check": "test_b", "leg": "cpu", "outcome": "passed"})], code=0)
    assert [r["message"] for r in both["results"][1:]] == [
        "the grading channel received 1 record(s) the grader did not send: a submission that writes its own "
        "results is not graded",
        "your code ended the grading process after 1 of 2 checks (does it call exit()?) (1 of 2 checks never "
        "reported a result)"]


def test_judge_counts_the_processes_left_running():
    answer = judged([COLLECTED, outcome(), outcome("test_b"), rec(end=0)], leftovers=2, spec="sim")
    assert answer["results"][-1] == {
        "check": "(grader process)", "leg": "sim", "outcome": "failed", "seconds": 0,
        "message": "your code left 2 process(es) running after its checks; they were stopped. Wait for (join) "
                   "every process you start."}


# ------------------------------------------------------------------------------------------------ workers: the rest
def test_the_worker_mode_and_its_settings(monkeypatch):
    monkeypatch.setenv("DEVCOURSE_WORKERS", "spawn")
    assert process_setup.use_fork() is False
    monkeypatch.setenv("DEVCOURSE_WORKERS", "fork")
    assert process_setup.use_fork() is True
    monkeypatch.setenv("DEVCOURSE_WORKERS", "")
    assert process_setup.use_fork() is sys.platform.startswith("linux")
    monkeypatch.setattr(process_setup, "_fork", None)
    assert process_setup.use_fork() is False
    assert (judging.GRACE_SECONDS, judging.OUTPUT_TAIL, judging.START_LIMIT, workers.STOP_ALL) == (5.0, 4000, 120.0, 3)
    assert workers.MAX_JOBS == max(2, os.cpu_count() or 2)
    assert set_at_import("IDLE_SECONDS") == "900.0"  # 15 minutes


def set_at_import(name: str, told: dict[str, str] | None = None, cores: int | None = None) -> str:
    """grader.engine.workers.NAME as a fresh process sets it at import, told only `told` of the DEVCOURSE_ settings
    (and seeing `cores` cores, if given); else what that process wrote to stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEVCOURSE_")}
    seen = f"import os; os.cpu_count = lambda: {cores}\n" if cores else ""
    script = f"{seen}from grader.engine import workers; print(workers.{name})"
    out = subprocess.run([sys.executable, "-c", script], env={**env, **(told or {})}, capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    return out.stdout.strip() or out.stderr


def test_ready_workers_warm_the_gpus_of_the_real_family_unless_told_not_to(monkeypatch):
    monkeypatch.delenv("DEVCOURSE_WARM_GPUS", raising=False)
    assert process_setup.warms_gpus("real") and not process_setup.warms_gpus("sim")
    monkeypatch.setenv("DEVCOURSE_WARM_GPUS", "0")
    assert not process_setup.warms_gpus("real")
    monkeypatch.setenv("DEVCOURSE_WARM_GPUS", "1")
    assert process_setup.warms_gpus("real")


def test_a_worker_confines_itself_at_once_unless_cuda_must_start_first(monkeypatch):
    confined = []
    monkeypatch.setattr(process_setup, "_confine", confined.append)
    monkeypatch.setattr(process_setup, "_private_dir", None)
    monkeypatch.setattr(process_setup, "_has_nvidia_gpus", lambda: True)
    process_setup._confine_soon("p1", "real", gpus_started=False)  # later: _run confines once CUDA has started
    assert confined == [] and process_setup._private_dir == "p1"
    process_setup._confine_soon("p2", "real", gpus_started=True)
    process_setup._confine_soon("p3", "sim", gpus_started=False)
    monkeypatch.setattr(process_setup, "_has_nvidia_gpus", lambda: False)
    process_setup._confine_soon("p4", "real", gpus_started=False)
    assert confined == ["p2", "p3", "p4"]
    # _run: a worker left unconfined for CUDA is confined there, once; one confined already is not again
    confined.clear()
    monkeypatch.setattr(process_setup, "_isolation", None)
    process_setup._confine_if_deferred()
    process_setup._private_dir = None  # (not deferred: confined at once)
    process_setup._confine_if_deferred()
    process_setup._private_dir = "p5"
    monkeypatch.setattr(process_setup, "_isolation", object())
    process_setup._confine_if_deferred()
    assert confined == ["p1"]


def test_a_spare_on_an_nvidia_machine_confines_itself_once_cuda_has_started(monkeypatch):
    # spawn mode: a spare of the real family has not started CUDA when it begins, so it defers its confinement
    confined = []
    monkeypatch.setattr(process_setup, "_confine", confined.append)
    monkeypatch.setattr(process_setup, "_private_dir", None)
    monkeypatch.setattr(process_setup, "_has_nvidia_gpus", lambda: True)
    monkeypatch.setattr(workers, "_prepare", lambda family: None)
    monkeypatch.setattr(workers, "_warm_up", lambda: None)
    monkeypatch.setattr(workers, "_exit", sys.exit)
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO(""))  # no job comes: the daemon is ending
    with pytest.raises(SystemExit) as ended:
        workers._spare_main("real", -1, "p")
    assert confined == [] and process_setup._private_dir == "p" and ended.value.code == 0


def test_the_pytest_arguments_of_a_job():
    job = {"grader": "/g/checks/test_x.py", "submission": "/s/x.py", "spec": "sim", "timeout": 10}
    args = grading_process._pytest_args(job)
    assert args[0] == "/g/checks/test_x.py"
    assert [a for a in args if a.startswith("-pno:")] == [f"-pno:{n}" for n in grading_process.UNUSED_PYTEST_PLUGINS]
    rest = args[1 + len(grading_process.UNUSED_PYTEST_PLUGINS):]
    assert rest == ["--assert=plain", "-c", os.devnull, "--rootdir", "/g/checks", "--confcutdir", "/g/checks",
                    "--timeout=60",
                    "--cpu-timeout=10", "--submission", "/s/x.py", "--device", "sim", "-q", "--no-header",
                    "-o", "addopts="]


def test_the_code_digest_follows_the_workers_code_and_the_isolation_setting(monkeypatch, tmp_path):
    first = workers.code_digest()
    assert re.fullmatch(r"[0-9a-f]{16}", first) and workers.code_digest() == first
    monkeypatch.setenv("DEVCOURSE_ISOLATION", "off")
    assert workers.code_digest() != first
    monkeypatch.delenv("DEVCOURSE_ISOLATION")
    from grader import ROOT

    for changed in (Path(workers.__file__).with_name("plugin.py"), ROOT / "grader" / "guard" / "policy.py",
                    ROOT / "grader" / "simulated" / "tensor.py"):
        st = changed.stat()
        try:
            os.utime(changed, ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
            assert workers.code_digest() != first, changed
        finally:
            os.utime(changed, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert workers.code_digest() == first


@linux
def test_process_states_and_children():
    assert judging._stat(os.getpid())[0] in "RS"
    assert judging._stat(2**22 + 12345) is None
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        assert child.pid in containment._children(os.getpid())
        assert child.pid in containment._live_below(os.getpid())
        assert child.pid not in containment._live_below(os.getpid(), spare={child.pid})
    finally:
        child.kill()
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
    assert child.pid not in containment._live_below(os.getpid())  # a zombie
    handlers = {child.pid, 1}
    workers._reap(handlers)
    assert handlers == {1} and judging._stat(child.pid) is None
    workers._reap(handlers)  # nothing left to reap: no error
    assert containment._children(2**22 + 12345) == set()


def test_prepared_says_why_a_family_cannot_grade(capsys):
    assert workers._prepared(lambda a: None, 1) is None

    def broken(name):
        raise ImportError(f"no module named {name}")

    assert workers._prepared(broken, "x") == "the grading processes could not start: ImportError: no module named x"
    assert "Traceback" in capsys.readouterr().err  # logged too
    workers._import_all(["json", "no_such_module_at_all", "csv"])
    assert "csv" in sys.modules


def test_a_socket_is_removed_only_by_the_daemon_that_made_it(where):
    server, path, inode = workers._listen(where, "sim")
    assert path == where / "sim.sock" and path.stat().st_ino == inode
    again, _, newer = workers._listen(where, "sim")  # a newer daemon took the path over
    workers._unlink_if_ours(path, inode)
    assert path.exists()
    workers._unlink_if_ours(path, newer)
    assert not path.exists()
    workers._unlink_if_ours(path, newer)  # gone already: no error
    server.close()
    again.close()


def test_the_dtensor_placeholder_is_removed_after_its_one_lookup():
    name = "torch.distributed.tensor"
    saved = sys.modules.pop(name, None)
    try:
        with workers._dtensor_class_placeholder():
            placeholder = sys.modules[name]
            assert placeholder.DTensor.__name__ == "NotADTensor"
        assert name not in sys.modules
        with workers._dtensor_class_placeholder():
            sys.modules[name] = "the real one, imported meanwhile"
        assert sys.modules[name] == "the real one, imported meanwhile"
        with workers._dtensor_class_placeholder():  # already imported: left alone
            assert sys.modules[name] == "the real one, imported meanwhile"
    finally:
        sys.modules.pop(name, None)
        if saved is not None:
            sys.modules[name] = saved


def collected(pid: int, rfd: int, ofd: int):
    """Zygote._collect of a worker's records and output pipes (closed after), by a zygote with no client."""
    zygote = type("Z", (), {"client": None})()
    try:
        return workers.Zygote._collect(zygote, pid, rfd, ofd, timeout=60)
    finally:
        os.close(rfd)
        os.close(ofd)


def test_collect_stops_a_worker_that_never_starts_and_keeps_its_output_end(monkeypatch):
    monkeypatch.setattr(judging, "START_LIMIT", 0.5)
    rfd, wfd = os.pipe()
    ofd, owfd = os.pipe()
    worker = subprocess.Popen([sys.executable, "-c", "import sys, time; print('x' * 5000 + 'END', flush=True); "
                               "time.sleep(60)"], stdout=owfd, pass_fds=(owfd,), start_new_session=True)
    os.close(wfd)
    os.close(owfd)
    lines, output, status, stopped = collected(worker.pid, rfd, ofd)
    assert lines == [] and os.waitstatus_to_exitcode(status) == -signal.SIGKILL
    assert stopped == ("the grader stopped your code after 0.5 s without an answer (it ignored the time limit of "
                       "its check)")
    assert output.endswith("END\n") and len(output) == judging.OUTPUT_TAIL


def test_collect_reads_records_and_stops_a_check_whose_client_hung_up(monkeypatch):
    rfd, wfd = os.pipe()
    ofd, owfd = os.pipe()
    ours, theirs = socket.socketpair()
    code = ("import os, sys, time; fd = int(sys.argv[1]); os.write(fd, b'{\"collected\": []}\\n'); "
            "os.write(fd, b'{\"a\": 1}\\n' * 3); time.sleep(60)")
    worker = subprocess.Popen([sys.executable, "-c", code, str(wfd)], stdout=owfd, pass_fds=(wfd, owfd),
                              start_new_session=True)
    os.close(wfd)
    os.close(owfd)
    records = []
    zygote = type("Z", (), {"client": ours.fileno()})()
    threading.Timer(1.5, theirs.close).start()
    try:
        lines, output, status, stopped = workers.Zygote._collect(zygote, worker.pid, rfd, ofd, timeout=60,
                                                                 on_record=lambda: records.append(1))
    finally:
        os.close(rfd)
        os.close(ofd)
        ours.close()
    assert lines == ['{"collected": []}', '{"a": 1}', '{"a": 1}', '{"a": 1}'] and records
    assert stopped == "the check was stopped: nobody waits for its result"
    assert os.waitstatus_to_exitcode(status) == -signal.SIGKILL


# ------------------------------------------------------------------------------------------------ workers: serving
# The real daemon (grader.engine.workers.serve, fork mode), started in a fresh process as grader.engine.daemon starts it (a
# fork of this test process would inherit what other tests of this pytest worker did: a simulator already in use
# cannot be used again in a forked child), grading real jobs with the real graders.
NOISE = ROOT / "solutions" / "01_tensors" / "noise_batch.py"
NOISE_GRADER = ROOT / "grader" / "checks" / "01_tensors" / "test_noise_batch.py"


@pytest.fixture(scope="module")
def served():
    import shutil

    folder, pid = start_daemon()
    try:
        yield folder, pid
    finally:
        daemon.stop(folder)
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        shutil.rmtree(folder, ignore_errors=True)


_STARTED: list = []
SERVED_MAX_JOBS = 2


def start_daemon() -> tuple[Path, int]:
    """grader.engine.workers.serve (its workers forked from zygotes) in a new process of its own group, once both
    families answer: its folder and pid."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="dcs-"))
    # SERVED_MAX_JOBS: the tests that fill a zygote do the same on every machine (not 32 checks at once on 32 cores)
    env = {**os.environ, "DEVCOURSE_WORKERS": "fork", "DEVCOURSE_IDLE_SECONDS": "300",
           "DEVCOURSE_MAX_JOBS": str(SERVED_MAX_JOBS)}
    env.pop("PYTEST_CURRENT_TEST", None)
    with open(folder / "daemon.log", "ab") as log:
        process = subprocess.Popen([sys.executable, "-c", "import sys, pathlib; from grader.engine import workers; "
                                    "workers.serve(pathlib.Path(sys.argv[1]))", str(folder)],
                                   cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                   start_new_session=True)  # its own group: the test ends whatever it left
    pid = process.pid
    _STARTED.append(process)  # kept: a collected Popen may be reaped by the next one, before the test waits for it
    digest = workers.code_digest()
    deadline = time.monotonic() + 180
    while not daemon._alive(folder, digest) and time.monotonic() < deadline:
        assert os.waitpid(pid, os.WNOHANG)[0] == 0, (folder / "daemon.log").read_text()
        time.sleep(0.1)
    return folder, pid


def job(submission: Path, spec="cpu", grader: Path = NOISE_GRADER, timeout=60) -> dict:
    return {"grader": str(grader), "submission": str(submission), "spec": spec, "timeout": timeout,
            "cwd": str(submission.parent)}


def graded_by(folder, family: str, the_job: dict) -> dict:
    return daemon._talk(folder, family, {"job": the_job}, timeout=300)


def holding_fix(tmp_path: Path) -> Path:
    """A right fix that prints what its process holds; where all is well, "threads 1 sockets 0 capped True":
    one CPU thread for PyTorch; none of the zygote's sockets (its server, its clients' connections), through
    which learner code could answer for the grader; its host memory capped (an allocation of HOST_MEMORY and
    1 GiB more fails). Its descriptors are looked at one by one: a grading process may not read /proc. Where CUDA
    has started, the driver's own socket (abstract "@cuda-uvmfd-NETNS-PID@" on 2 x H200 with driver 580) is the
    worker's, and cannot be told by its name without /proc: on a machine with NVIDIA GPUs one socket is
    allowed (`HELD_RIGHT`)."""
    seen = tmp_path / "seen" / "noise_batch.py"
    seen.parent.mkdir(exist_ok=True)
    seen.write_text(NOISE.read_text() + textwrap.dedent(f"""
        import os, torch

        def is_socket(fd):
            try:
                return os.fstat(fd).st_mode & 0o170000 == 0o140000
            except OSError:
                return False

        print("threads", torch.get_num_threads(), "sockets", sum(map(is_socket, range(1024))), end=" ")
        try:
            torch.empty({limits.HOST_MEMORY} + 2 ** 30, dtype=torch.uint8)
            print("capped", False)
        except RuntimeError:
            print("capped", True)
    """))
    return seen


#: What holding_fix prints where all is well.
HELD_RIGHT = ("threads 1 sockets 0 capped True\n",) + (
    ("threads 1 sockets 1 capped True\n",) if process_setup._has_nvidia_gpus() else ())


def slow_fix(tmp_path: Path, seconds: int) -> Path:
    """The right fix, loaded only after `seconds`: a check still in progress meanwhile."""
    slow = tmp_path / "slow" / "noise_batch.py"
    slow.parent.mkdir()
    slow.write_text(f"import time\ntime.sleep({seconds})\n" + NOISE.read_text())
    return slow


def sent(folder, family: str, the_job: dict) -> socket.socket:
    """A connection that has sent `the_job` and not read its answer (yet)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(folder / f"{family}.sock"))
    s.sendall((json.dumps({"job": the_job}) + "\n").encode())
    return s


def outcomes(answer: dict) -> dict:
    return {(r["check"], r["leg"]): r["outcome"] for r in answer["results"]}


@linux
def test_the_daemon_answers_pings_with_its_code_and_grades_a_right_fix(served, tmp_path):
    folder, pid = served
    for fam in workers.FAMILIES:
        answer = daemon._talk(folder, fam, {"ping": True}, timeout=30)
        assert answer["digest"] == workers.code_digest() and answer["pid"] != os.getpid()
    seen = holding_fix(tmp_path)
    answer = graded_by(folder, "real", job(seen))
    assert answer["results"] and set(outcomes(answer).values()) == {"passed"}, answer
    assert {leg for _, leg in outcomes(answer)} == {"cpu"}
    assert all(r["output"] in HELD_RIGHT for r in answer["results"]), [
        r["output"] for r in answer["results"]]
    from grader.guard import sandbox

    isolated = sandbox.status().available
    assert answer["isolation"]["isolated"] is isolated
    # on a machine with NVIDIA GPUs the real family is confined once CUDA has started, which the line says
    # (tests/test_isolation.py: the_solution_still_passes)
    how = answer["isolation"]["how"]
    assert (how == sandbox.status().how or (process_setup._has_nvidia_gpus() and how.startswith(f"{sandbox.status().how} (")
                                            and how.endswith("thread(s) started before were not confined)"))
            ) if isolated else how, how
    sim = graded_by(folder, "sim", job(NOISE, "sim"))
    assert set(outcomes(sim).values()) == {"passed"} and {leg for _, leg in outcomes(sim)} >= {"sim:0"}, sim


@linux
def test_the_daemon_names_a_crash_an_exit_and_processes_left_running(served, tmp_path):
    folder, pid = served
    source = NOISE.read_text()
    cases = {
        "crash": (source + "\nimport os\nos.abort()\n",
                  "the process running your code was killed by signal 6"),
        "exit": (source + "\nimport os\nos._exit(0)\n", "your code ended the grading process after 0 of"),
        "left": (source + "\nimport os, time\nif os.fork() == 0:\n    time.sleep(120)\n    os._exit(0)\n",
                 "your code left 3 process(es) running after its checks"),  # one per check: each loads the file
        # one that leaves the worker's process group (and its parent): found as an orphan handed to the handler.
        # The load goes on once the middle process has ended (the pipe's last writer closed), however late it runs
        # on a loaded machine: else it may still be alive, and counted, when the checks end.
        "escaped": (source + textwrap.dedent("""
                        import os, time
                        r, w = os.pipe()
                        if os.fork() == 0:
                            os.setsid()
                            if os.fork() == 0:
                                os.close(w)
                                time.sleep(120)
                            os._exit(0)
                        os.close(w)
                        os.read(r, 1)
                    """), "your code left 3 process(es) running after its checks"),
        # a child that waits for a grandchild: the child is an orphan of the handler at the end, the grandchild
        # is not (its parent lives), so only the worker's process group finds it. The load goes on once both
        # exist (the pipe's last writer closed), however late the child runs on a loaded machine.
        "tree": (source + textwrap.dedent("""
                     import os, time
                     r, w = os.pipe()
                     if os.fork() == 0:
                         if os.fork() == 0:
                             os.close(w)
                             time.sleep(120)
                             os._exit(0)
                         os.close(w)
                         os.wait()
                         os._exit(0)
                     os.close(w)
                     os.read(r, 1)
                 """), "your code left 6 process(es) running after its checks"),
    }
    for name, (code, said) in cases.items():
        file = tmp_path / name / "noise_batch.py"
        file.parent.mkdir()
        file.write_text(code)
        answer = graded_by(folder, "real", job(file))
        process = [r for r in answer["results"] if r["check"] == "(grader process)"]
        assert len(process) == 1 and process[0]["message"].startswith(said), (name, answer)
        assert process[0]["leg"] == "cpu"
        assert _escaped_from(pid) == [], name  # counted, and stopped too: none lives on to meet the next grading


def _escaped_from(daemon_pid: int) -> list[int]:
    """Live processes whose parent is one of the daemon's (its session) but which left its session (setsid), a
    little after a grading: a process the learner's code left running, handed to the daemon as an orphan."""
    def stat(pid):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            return fields[0], int(fields[1]), int(fields[3])  # state, parent, session
        return None

    deadline = time.monotonic() + 10
    while True:
        procs = {int(p): stat(p) for p in os.listdir("/proc") if p.isdigit()}
        daemons = {pid for pid, st in procs.items() if st and st[2] == daemon_pid}
        left = [pid for pid, st in procs.items()
                if st and st[0] != "Z" and st[1] in daemons and st[2] != daemon_pid]
        if not left or time.monotonic() > deadline:  # SIGKILL is sent before the answer; dying can take a moment
            return left
        time.sleep(0.1)


@linux
def test_the_daemon_says_why_a_grader_cannot_be_loaded(served, tmp_path):
    folder, _ = served
    grader = tmp_path / "test_broken.py"
    grader.write_text("import helpers_that_are_not_shipped\n")
    answer = graded_by(folder, "real", job(NOISE, grader=grader))
    (problem,) = answer["results"]
    assert problem["message"] == (
        "the grader could not run: the check module test_broken.py could not be loaded: ModuleNotFoundError: No "
        "module named 'helpers_that_are_not_shipped'. That is a fault of the grader, not of your code: please "
        "report it.")
    dying = tmp_path / "test_dying.py"
    dying.write_text("import os, sys\nprint('loading', flush=True)\n"
                     "sys.stderr.write('RuntimeError: why it died\\n')\nsys.stderr.flush()\nos._exit(3)\n")
    for fam, spec in (("sim", "sim"), ("real", "cpu")):
        answer = graded_by(folder, fam, job(NOISE, spec, grader=dying))
        (problem,) = answer["results"]
        assert problem["message"] == "the grader could not run: loading\nRuntimeError: why it died", problem


@linux
def test_an_idle_zygote_keeps_a_worker_forked_ahead_of_the_next_job(served):
    folder, _ = served
    deadline = time.monotonic() + 120
    while not (ping := daemon._talk(folder, "sim", {"ping": True}, timeout=30))["warm"]:  # not the stand-in
        assert time.monotonic() < deadline
        time.sleep(0.05)
    zygote = ping["pid"]

    def ready_worker():  # a handler (child of the zygote) with its worker (its own child) waiting for a job
        return any(_live_children(h) for h in _live_children(zygote))

    deadline = time.monotonic() + 60  # it is forked as soon as the zygote is idle
    while not ready_worker() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ready_worker()
    # A ready handler that died before its job came (killed, out of memory) is not handed the job: the zygote
    # grades it in a handler of its own, and serves on
    dead = [h for h in _live_children(zygote) if _live_children(h)]
    for handler in dead:
        os.kill(handler, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while _alive(dead) and time.monotonic() < deadline:  # gone, its channel closed (not still dying)
        time.sleep(0.01)
    answer = graded_by(folder, "sim", job(NOISE, "sim"))
    assert set(outcomes(answer).values()) == {"passed"}, answer


@linux
def test_the_daemon_grades_jobs_at_once_and_a_hung_up_check_does_not_stop_it(served, tmp_path):
    folder, _ = served
    sent(folder, "real", job(slow_fix(tmp_path, 100))).close()  # sent, then nobody waits for it
    results = [graded_by(folder, fam, job(NOISE, spec)) for fam, spec in (("real", "cpu"), ("sim", "sim"))]
    assert all(set(outcomes(a).values()) == {"passed"} for a in results), results


@linux
def test_a_zygote_grades_at_most_max_jobs_at_once_and_answers_pings_meanwhile(served, tmp_path):
    # A job sent while MAX_JOBS checks run waits for one of them to end; a ping is answered meanwhile (a busy
    # daemon is not a dead one: grader.engine.daemon.ensure would wait for it, then replace it)
    folder, _ = served
    slow = slow_fix(tmp_path, 100)
    clients = []
    try:
        for _ in range(SERVED_MAX_JOBS):
            clients.append(sent(folder, "real", job(slow)))
        # two more: the first one's worker must not hold the second one's connection (its code could answer it)
        with sent(folder, "real", job(holding_fix(tmp_path))) as queued, sent(folder, "real", job(NOISE)) as last:
            assert daemon._talk(folder, "real", {"ping": True}, timeout=60)["warm"]
            queued.settimeout(5)
            with pytest.raises(TimeoutError):  # not graded while the others run: how long it waits does not matter
                queued.recv(1 << 20)
            for client in clients:
                client.close()  # nobody waits for their results: their checks are stopped, and these are graded
            for client in (queued, last):
                client.settimeout(120)
                with client.makefile("rb") as answer:
                    results = json.loads(answer.readline())["results"]
                assert {r["outcome"] for r in results} == {"passed"}, results
                assert all(r["output"] in ("", *HELD_RIGHT) for r in results), results
    finally:
        for client in clients:
            client.close()


def test_the_command_line_of_the_grading_processes(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(workers, "serve", lambda folder: calls.append(("serve", folder)))
    monkeypatch.setattr(workers, "_serve", lambda *a: calls.append(("zygote", *a)))
    monkeypatch.setattr(workers, "_spare_main", lambda *a: calls.append(("spare", *a)))
    workers.main(["serve", "--dir", str(tmp_path)])
    workers.main(["zygote", "--family", "sim", "--dir", str(tmp_path), "--digest", "abc"])
    workers.main(["spare", "--family", "real", "--fd", "7", "--private", "/p"])
    workers.main(["spare", "--family", "sim", "--fd", "8", "--private", "/q", "--contained"])
    assert calls == [("serve", tmp_path), ("zygote", "sim", tmp_path, "abc"), ("spare", "real", 7, "/p", False),
                     ("spare", "sim", 8, "/q", True)]
    with pytest.raises(SystemExit):
        workers.main(["other"])


def test_serve_runs_both_families_in_either_mode(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(workers, "_serve_forked", lambda folder, digest: calls.append(("forked", folder, digest)))
    monkeypatch.setattr(workers, "use_fork", lambda: True)
    # Not this process's network: the daemon's own, made at its start (grader.guard.namespaces).
    monkeypatch.setattr(workers.namespaces, "leave_network", lambda: calls.append("left the network"))
    folder = tmp_path / "a" / "b"
    workers.serve(folder)
    assert folder.is_dir() and calls == ["left the network", ("forked", folder, workers.code_digest())]

    class Sim:
        pid = 4321

        def terminate(self):
            calls.append("sim terminated")

    monkeypatch.setattr(workers, "use_fork", lambda: False)
    monkeypatch.setattr(workers.subprocess, "Popen", lambda args: calls.append(args) or Sim())
    monkeypatch.setattr(workers, "_serve", lambda *a, **k: calls.append((a, k)))
    calls.clear()
    workers.serve(folder)
    digest = workers.code_digest()
    assert calls == [[sys.executable, "-m", "grader.engine.workers", "zygote", "--family", "sim", "--dir", str(folder),
                      "--digest", digest],
                     (("real", folder, digest), {"keep": frozenset({4321})}), "sim terminated"]


class _Answering:
    """grader.engine.workers._answer run on a thread of this process, for a zygote that cannot grade (`broken`): what
    it answers, and why it returned."""

    def __init__(self, where: Path, broken: str | None, until: int | None = None):
        self.server, _, _ = workers._listen(where, "sim")
        zygote = type("Z", (), {"fork": False, "ready": None, "private_fds": []})()
        self.returned = []
        self.thread = threading.Thread(
            target=lambda: self.returned.append(workers._answer(self.server, zygote, "dg", broken, until)))
        self.thread.start()

    def ended(self) -> str:
        self.thread.join(60)
        self.server.close()
        return self.returned[0]


def test_a_zygote_answers_pings_stops_and_says_why_it_cannot_grade(where):
    answering = _Answering(where, "the grading processes could not start: ImportError: x")
    ping = daemon._talk(where, "sim", {"ping": True}, timeout=30)
    assert ping == {"digest": "dg", "pid": os.getpid(), "warm": True}
    assert daemon._talk(where, "sim", {"job": {}}, timeout=30) == {
        "error": "the grading processes could not start: ImportError: x"}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:  # a client that hangs up at once
        s.connect(str(where / "sim.sock"))
    assert daemon._talk(where, "sim", {"ping": True}, timeout=30)["digest"] == "dg"  # still serving
    assert daemon._talk(where, "sim", {"stop": True}, timeout=30) == {"stopped": True}
    assert answering.ended() == "stop"


def test_a_zygote_ends_when_idle_or_handed_over(where, monkeypatch):
    monkeypatch.setattr(workers, "IDLE_SECONDS", 0.3)
    assert _Answering(where, "broken").ended() == "idle"
    r, w = os.pipe()
    answering = _Answering(where, "broken", until=r)
    assert daemon._talk(where, "sim", {"ping": True}, timeout=30)["warm"] is False  # a stand-in
    time.sleep(0.5)  # longer than idle: a stand-in waits for its hand-over, not for idleness
    assert answering.thread.is_alive()
    os.close(w)
    assert answering.ended() == "handed"
    os.close(r)


def test_ensure_reports_its_own_start_that_died_after_waiting_for_anothers(where, monkeypatch):
    """Another process's daemon was starting and ended; the one this call then starts dies too: one start of
    its own, then the reason, not a new start each time."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    (where / "starting").write_text(f"{sleeper.pid} {workers.code_digest()}")
    started = []

    def start(w, d):  # dies at once
        started.append(w)
        (w / "daemon.log").write_text("it died\n")

    monkeypatch.setattr(daemon, "_start", start)
    threading.Timer(0.3, sleeper.kill).start()
    try:
        with pytest.raises(daemon.DaemonError, match="it died"):
            daemon.ensure(where)
    finally:
        sleeper.wait()
    assert started == [where]


def test_submit_hangs_up_every_connection_when_it_fails(where, monkeypatch):
    """A job that cannot be sent to its family (its socket is gone) leaves no connection open to the other: its
    zygote sees the hang-up (and stops the check) instead of grading for nobody."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(where / "real.sock"))
    server.listen(1)
    heard = []

    def zygote():
        conn, _ = server.accept()
        conn.settimeout(20)
        with conn:
            conn.makefile("rb").readline()
            heard.append(conn.recv(1))  # b"": the client hung up

    thread = threading.Thread(target=zygote)
    thread.start()
    monkeypatch.setattr(daemon, "ensure", lambda: where)
    with pytest.raises(OSError) as failed:
        daemon.submit([("real", {"n": 1}), ("sim", {"n": 2})])  # no sim.sock
    thread.join(30)
    server.close()
    assert failed.value is not None and heard == [b""]


@linux
def test_the_daemon_grades_a_batch_of_answers_in_one_worker(served, tmp_path):
    folder, _ = served
    wrong = tmp_path / "wrong" / "noise_batch.py"
    wrong.parent.mkdir()
    wrong.write_text(NOISE.read_text() + "\n\ndef make_noise_batch(*args, **kwargs):\n    raise ValueError('no')\n")
    for fam, spec in (("real", "cpu"), ("sim", "sim")):
        the_job = {**job(NOISE, spec), "submissions": [str(NOISE), str(wrong)]}
        the_job.pop("submission")
        reply = graded_by(folder, fam, the_job)
        right, broken = reply["answers"]
        assert set(outcomes(right).values()) == {"passed"}, right
        assert "failed" in outcomes(broken).values(), broken


# Last: it ends the module's daemon.
@linux
def test_a_stop_ends_the_daemon_and_removes_its_sockets(served, tmp_path):
    folder, pid = served
    slow = slow_fix(tmp_path, 5)  # checks in progress when the stop comes, and one more waiting for them
    clients = [sent(folder, "real", job(slow)) for _ in range(SERVED_MAX_JOBS)] + [sent(folder, "real", job(NOISE))]
    try:
        assert daemon.stop(folder) is True
        deadline = time.monotonic() + 120
        while os.waitpid(pid, os.WNOHANG)[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        for client in clients:  # the daemon ended only once every check it took was answered: the answers are there
            client.setblocking(False)
            assert b'"results"' in client.recv(1 << 20)
    finally:
        for client in clients:
            client.close()
    assert not any((folder / f"{fam}.sock").exists() for fam in workers.FAMILIES)
    assert daemon.stop(folder) is False


# ------------------------------------------------------------------------------------------------ the plugin's part
def test_a_check_module_that_cannot_be_collected_is_reported_instead_of_the_list():
    from types import SimpleNamespace

    from grader.engine import plugin

    sent = []
    reporter = plugin.ChannelReporter(sent.append)
    ok = SimpleNamespace(failed=False, nodeid="test_x.py", longrepr=None)
    reporter.pytest_collectreport(ok)
    reporter.pytest_collection_finish(SimpleNamespace(items=[SimpleNamespace(nodeid="test_x.py::test_a[cpu]")]))
    assert sent == [{"collected": [("test_a", "cpu")]}]
    sent.clear()
    broken = SimpleNamespace(failed=True, nodeid="sub/test_x.py", longrepr=(
        "ImportError while importing test module '/g/test_x.py'.\nTraceback:\n  File ...\nE   ModuleNotFoundError: "
        "No module named 'helpers'\n"))
    reporter.pytest_collectreport(broken)
    reporter.pytest_collection_finish(SimpleNamespace(items=[]))
    assert sent == [{"error": "the check module test_x.py could not be loaded: ModuleNotFoundError: No module named "
                              "'helpers'. That is a fault of the grader, not of your code: please report it."}]
    assert plugin.last_error_line("a\nE   first\n  b\nE   second\nx.py:3: NameError\n") == "second"
    assert plugin.last_error_line("no marks\nthe last line\n\n") == "the last line"
    assert plugin.last_error_line("") == "(no error text)"


@linux
def test_a_daemon_ended_by_sigterm_ends_its_simulated_zygote_and_removes_its_sockets():
    import shutil

    folder, pid = start_daemon()
    try:
        deadline = time.monotonic() + 120
        while not (ping := daemon._talk(folder, "sim", {"ping": True}, timeout=30))["warm"]:  # its last zygote
            assert time.monotonic() < deadline
            time.sleep(0.05)
        sim = ping["pid"]
        os.kill(pid, signal.SIGTERM)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0  # an ordinary end, as asked
        deadline = time.monotonic() + 60
        while _alive([sim]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive([sim])
        assert not any((folder / f"{fam}.sock").exists() for fam in workers.FAMILIES)
    finally:
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        shutil.rmtree(folder, ignore_errors=True)


@linux
def test_collect_keeps_the_end_of_what_a_worker_wrote_just_before_it_ended():
    """More than a read's worth of records and output still in the pipes when the worker has ended: all records
    and the output's end are read after it (pipes of 1 MiB, filled by a worker that has exited)."""
    import fcntl

    rfd, wfd = os.pipe()
    ofd, owfd = os.pipe()
    for fd in (rfd, ofd):
        fcntl.fcntl(fd, 1031, 1 << 20)  # F_SETPIPE_SZ
    code = ("import os, sys; fd = int(sys.argv[1]); os.write(fd, b''.join(b'{\"n\": %d}\\n' % i for i in range(20000)));"
            " os.write(1, b'x' * 200000 + b'END'); os._exit(0)")
    worker = subprocess.Popen([sys.executable, "-c", code, str(wfd)], stdout=owfd, pass_fds=(wfd, owfd))
    os.close(wfd)
    os.close(owfd)
    os.waitid(os.P_PID, worker.pid, os.WEXITED | os.WNOWAIT)  # ended, everything still in the pipes
    lines, output, status, stopped = collected(worker.pid, rfd, ofd)
    assert len(lines) == 20000 and lines[-1] == '{"n": 19999}' and stopped is None
    assert output.endswith("END") and len(output) == judging.OUTPUT_TAIL


def test_a_sigterm_during_a_forks_own_hooks_still_ends_the_zygote():
    """A zygote ends on SIGTERM by raising SystemExit from its handler. A signal that lands while fork runs its
    after-fork hooks (logging's lock release, in the parent) would raise inside the hook, where Python prints the
    exception and drops it, and the zygote would serve on after its daemon ended: process_setup._fork holds SIGTERM back
    until the hooks have run. The signal is sent from a hook here, the worst moment."""
    code = textwrap.dedent("""
        import os, signal, sys
        from grader.engine import workers
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(7))
        os.register_at_fork(after_in_parent=lambda: os.kill(os.getpid(), signal.SIGTERM))
        try:
            pid = workers._fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
        except SystemExit as exc:
            print("ended", exc.code)
        else:
            print("served on")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.stdout.strip() == "ended 7", (out.stdout, out.stderr)


@linux
def test_a_sigterm_while_a_zygote_prepares_ends_it_once_prepared(tmp_path):
    """A zygote told to end (SIGTERM, from its daemon's stop) while it still prepares its family must not serve
    on. Preparing the simulated family runs code whose exceptions torch's C++ may drop, SystemExit included: the
    signal waits until the preparation is over (a stop in twenty to forty left such a zygote answering, on a socket
    file already removed, until idle). Here the preparation drops every exception itself."""
    code = textwrap.dedent("""
        import os, signal, sys, time, pathlib
        from grader.engine import workers
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        ready_r, ready_w = os.pipe()
        def preparing(family):
            os.write(ready_w, b"x")
            end = time.monotonic() + 1.0
            while time.monotonic() < end:
                try:
                    time.sleep(0.01)
                except BaseException:
                    pass  # as torch's C++ did with the exception raised in a Python hook it called
        workers._prepare_family = preparing
        workers.IDLE_SECONDS = 20
        where = pathlib.Path(sys.argv[1])
        server, _, _ = workers._listen(where, "sim")
        pid = workers._fork_zygote("sim", where, server, "dg", None)
        server.close()
        os.read(ready_r, 1)
        os.kill(pid, signal.SIGTERM)
        end = time.monotonic() + 15
        while time.monotonic() < end:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                print("ended", os.waitstatus_to_exitcode(status))
                break
            time.sleep(0.05)
        else:
            os.kill(pid, signal.SIGKILL)
            print("served on")
    """)
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120,
                         cwd=ROOT, env={**os.environ, "DEVCOURSE_WORKERS": "fork"})
    assert out.stdout.strip() == "ended 70", (out.stdout, out.stderr)


def test_collect_gives_a_started_worker_its_checks_limit_not_the_start_allowance(monkeypatch):
    # Once the worker has said which checks it collected, silence longer than the check's limit and the grace
    # stops it: not the (longer) allowance for importing the grader and collecting the checks
    monkeypatch.setattr(judging, "START_LIMIT", 5.0)
    monkeypatch.setattr(judging, "GRACE_SECONDS", 0.2)
    rfd, wfd = os.pipe()
    ofd, owfd = os.pipe()
    worker = subprocess.Popen([sys.executable, "-c", f"import os, time; os.write({wfd}, b'{{\"collected\": []}}\\n'); "
                               "time.sleep(60)"], stdout=owfd, pass_fds=(wfd, owfd), start_new_session=True)
    os.close(wfd)
    os.close(owfd)
    zygote = type("Z", (), {"client": None})()
    try:
        lines, _, status, stopped = workers.Zygote._collect(zygote, worker.pid, rfd, ofd, timeout=0.3)
    finally:
        os.close(rfd)
        os.close(ofd)
    assert lines == ['{"collected": []}'] and os.waitstatus_to_exitcode(status) == -signal.SIGKILL
    assert stopped.startswith("the grader stopped your code after 0.5 s without an answer"), stopped


def test_a_started_worker_may_be_silent_for_its_checks_limit_and_a_batch_also_for_an_answers_start():
    assert zygote.Zygote.silence_limit({"timeout": 30}) == limits.wall_limit(30.0)
    batch = zygote.Zygote.silence_limit({"timeout": 30, "submissions": []})
    assert batch == limits.wall_limit(30.0) + judging.START_LIMIT


@linux
def test_a_zygote_whose_family_cannot_be_prepared_says_why_and_ends_as_asked(tmp_path):
    """A zygote prepares its family itself after the fork (the simulated one installs the simulator): where that
    fails, every job is answered with why, and the zygote still ends on a stop (STOP_ALL, which ends the daemon)
    or when idle (0). Run in a fresh process: a fork of this test process would inherit its threads."""
    code = textwrap.dedent("""
        import json, os, sys, pathlib
        from grader.engine import daemon, workers
        def no_simulator(family):
            raise RuntimeError("no simulator here")
        workers._prepare_family = no_simulator
        workers.IDLE_SECONDS = 0.5
        where, seen = pathlib.Path(sys.argv[1]), {}
        for ending in ("stop", "idle"):
            server, _, _ = workers._listen(where, "sim")
            pid = workers._fork_zygote("sim", where, server, "dg", None)
            server.close()
            seen[ending] = [daemon._talk(where, "sim", {"job": {}}, timeout=30)]
            if ending == "stop":
                seen[ending].append(daemon._talk(where, "sim", {"stop": True}, timeout=30))
            seen[ending].append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
        print(json.dumps(seen))
    """)
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120,
                         cwd=ROOT, env={**os.environ, "DEVCOURSE_WORKERS": "fork"})
    why = {"error": "the grading processes could not start: RuntimeError: no simulator here"}
    assert json.loads(out.stdout.splitlines()[-1]) == {
        "stop": [why, {"stopped": True}, workers.STOP_ALL], "idle": [why, 0]}, out.stderr


def test_a_zygote_grades_two_jobs_at_once_even_on_one_core_unless_told():
    # a check that hangs must not hold up a second one sent meanwhile (another leg), on a one-core machine
    assert set_at_import("MAX_JOBS", cores=1) == "2"
    assert set_at_import("MAX_JOBS", cores=3) == "3"
    assert set_at_import("MAX_JOBS", {"DEVCOURSE_MAX_JOBS": "1"}, cores=3) == "1"
    # a value it cannot use is refused by grader.engine.daemon.ensure (tests/test_settings.py); importing never fails
    assert set_at_import("MAX_JOBS", {"DEVCOURSE_MAX_JOBS": "four"}, cores=3) == "3"
