"""In-process tests of the grading processes' decisions (grader.limits, grader.daemon, grader.workers), for the
mutation report (tools/mutation/modules.tsv; issue 31): each test runs in well under a second, with no daemon of
its own. The same decisions are met through the real command in tests/test_front_end_decisions.py,
test_daemon.py and test_grading_robustness.py; these tests pin the values behind them."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from grader import ROOT, daemon, limits, workers

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


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
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while self.running:
            for fam, s in list(self.servers.items()):
                try:
                    conn, _ = s.accept()
                except (TimeoutError, OSError):
                    continue
                with conn, conn.makefile("rwb") as stream:
                    raw = stream.readline()
                    request = json.loads(raw)
                    self.requests.append((fam, raw))
                    if request.get("ping"):
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
                        stream.write((json.dumps(reply) + "\n").encode())
                        stream.flush()

    def close(self):
        self.running = False
        self.thread.join()
        for fam, s in self.servers.items():
            s.close()
            (self.where / f"{fam}.sock").unlink(missing_ok=True)


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

    monkeypatch.setattr(daemon, "_start", start)
    with pytest.raises(daemon.DaemonError) as err:
        daemon.ensure(where)
    text = str(err.value)
    assert text.startswith("the grading processes did not start (within 180 s):\n")
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
    assert args == [sys.executable, "-m", "grader.workers", "serve", "--dir", str(where)]
    assert kw["cwd"] == ROOT and kw["start_new_session"] is True and kw["stdin"] == subprocess.DEVNULL
    assert kw["env"]["PYTHONPATH"] == os.pathsep.join([str(ROOT), "/somewhere/else"])
    assert kw["stdout"] is kw["stderr"] and kw["stdout"].name == str(where / "daemon.log")
    assert (where / "starting").read_text() == "4242 d9"
    monkeypatch.delenv("PYTHONPATH")
    assert daemon._pythonpath() == str(ROOT)


@linux
def test_starting_means_a_live_process_of_this_code_started_lately(where):
    marker = where / "starting"
    assert not daemon._starting(where, "d")  # no marker
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        marker.write_text(f"{sleeper.pid} d")
        assert daemon._starting(where, "d")
        assert not daemon._starting(where, "other")
        old = time.time() - daemon.START_TIMEOUT - 5
        os.utime(marker, (old, old))
        assert not daemon._starting(where, "d")  # started too long ago
        near = time.time() - daemon.START_TIMEOUT + 20
        os.utime(marker, (near, near))
        assert daemon._starting(where, "d")  # not yet too long ago
        marker.write_text("garbage")
        assert not daemon._starting(where, "d")
    finally:
        sleeper.kill()
    os.waitid(os.P_PID, sleeper.pid, os.WEXITED | os.WNOWAIT)  # until it has ended, leaving it unreaped
    assert daemon._is_zombie(sleeper.pid)  # ended, not yet waited for
    marker.write_text(f"{sleeper.pid} d")
    assert not daemon._starting(where, "d")
    sleeper.wait()
    assert not daemon._is_zombie(sleeper.pid) and not daemon._starting(where, "d")  # gone
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
