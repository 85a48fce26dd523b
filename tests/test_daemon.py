"""The warm grading processes (grader.engine.daemon, grader.engine.workers): started by the first check, ended by
`devcourse stop` or after idle minutes, answering while they warm up, and never started twice."""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import glob
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader import ROOT
from grader.catalog import course
from grader.engine import daemon, runner
from grader.engine.judging import _stat
from tests.peer_listener import PeerListener

NOISE = course.get("noise_batch")
FIT = course.get("fit_line")  # its solution steps an optimizer (torch._dynamo's stand-in answers it)


# Seconds a stopped daemon's processes get to end. Generous: on a loaded CI machine (both cores busy with the other
# test files) a zygote that is still importing torch when the stop arrives ends only after that import.
STOPPED_WITHIN = 120


def serving(where: Path) -> list[int]:
    """Daemon processes (both zygotes and any stand-in) of the folder `where`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = (Path("/proc") / entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            st = _stat(int(entry))
            if b"grader.engine.workers" in cmd and str(where).encode() in cmd and st is not None and st[0] != "Z":
                found.append(int(entry))
    return found


def parent(pid: int) -> int:
    return int(_stat(pid)[1])


def warm_zygotes(where: Path) -> dict[str, int] | None:
    """The zygotes' pids by family once both have warmed up and answer themselves (not their stand-ins)."""
    answers = {fam: daemon._talk(where, fam, {"ping": True}, timeout=5) for fam in ("real", "sim")}
    return {fam: a["pid"] for fam, a in answers.items()} if all(a["warm"] for a in answers.values()) else None


def children(pid: int) -> set[int]:
    found = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):
            found |= {int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()}
    return found


def wait_for(condition, seconds=60.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """A daemon folder of this test's own, with no daemon in it yet; stopped at the end."""
    where = tmp_path / "daemon"
    monkeypatch.setenv("DEVCOURSE_DAEMON_DIR", str(where))
    yield where
    daemon.stop(where)
    # The tests of stopping assert that everything ends; here, a daemon that outlives its test is ended so that it
    # cannot load the machine for the tests after it. (A zygote that outlived a stop on a loaded machine was a
    # SIGTERM handled inside fork's own hooks, which dropped its SystemExit: grader.engine.process_setup._fork, nineteenth
    # session.)
    if not wait_for(lambda: not serving(where), STOPPED_WITHIN):
        for pid in serving(where):
            os.kill(pid, signal.SIGKILL)


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def test_the_first_check_starts_the_daemon_and_stop_ends_it(fresh):
    assert not serving(fresh)
    done = cli("check", NOISE.name, "--solution")
    assert done.returncode == 0, done.stdout + done.stderr
    assert serving(fresh) and (fresh / "real.sock").exists() and (fresh / "sim.sock").exists()
    assert "stopped" in cli("stop").stdout.lower()
    assert wait_for(lambda: not serving(fresh), STOPPED_WITHIN)
    assert not (fresh / "real.sock").exists() and not (fresh / "sim.sock").exists()
    assert "no grading processes" in cli("stop").stdout.lower()


def test_an_idle_daemon_ends_by_itself(fresh):
    assert cli("check", NOISE.name, "--solution", env={"DEVCOURSE_IDLE_SECONDS": "2"}).returncode == 0
    assert wait_for(lambda: not serving(fresh), 60), "the daemon outlived its idle time"


def test_an_early_start_and_the_check_after_it_start_one_daemon(fresh):
    daemon.ensure(wait=False)
    daemon.ensure(wait=False)  # a second learner command at once: no second daemon
    daemon.ensure()
    assert daemon.folder() == fresh
    zygotes = {daemon._talk(fresh, fam, {"ping": True}, timeout=5)["pid"] for fam in ("real", "sim")}
    assert len(zygotes) == 2

    def roots():  # the zygotes, forks of one `serve` process, and their stand-ins while they warm up
        procs = serving(fresh)
        return [p for p in procs if parent(p) not in procs]

    # A stand-in that hands over ends, and its child comes back to `serve` (a subreaper) a moment later: the
    # warm-up, a fraction of a second, may end while the tree is read.
    assert wait_for(lambda: len(roots()) == 1, 10), roots()


def send_and_hang_up(where: Path, family: str, request: dict) -> None:
    """A client that sends its request and closes before any answer (as one whose timeout ran out)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(str(where / f"{family}.sock"))
        s.sendall((json.dumps(request) + "\n").encode())


def test_a_client_that_hangs_up_before_its_answer_leaves_the_daemon_serving(fresh):
    # A ping that timed out on a loaded machine closed its socket before the zygote replied; the reply's broken
    # pipe ended the zygote, and every check after it waited 180 s for a daemon that was gone (a GPU run of
    # tools/verdicts.py, fourteenth session).
    daemon.ensure()
    for fam in ("real", "sim"):
        for _ in range(3):
            send_and_hang_up(fresh, fam, {"ping": True})
    time.sleep(0.5)
    for fam in ("real", "sim"):  # refused (ConnectionRefusedError) where the zygote ended
        assert daemon._talk(fresh, fam, {"ping": True}, timeout=5)["pid"] in serving(fresh)


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "warming_up"])
def test_a_stop_whose_client_hung_up_still_stops(fresh, warm):
    # daemon.stop waited 5 s for its answer; a stand-in still preparing on the loaded CI machine answered later,
    # found the client gone, and went on serving: "a zygote kept running after stop" (fifteenth session's CI).
    daemon.ensure(wait=warm)
    # Both first: once the real family stops, the daemon removes both sockets.
    assert wait_for(lambda: all((fresh / f"{fam}.sock").exists() for fam in ("real", "sim")), 60)
    for fam in ("real", "sim"):
        send_and_hang_up(fresh, fam, {"stop": True})
    assert wait_for(lambda: not serving(fresh), STOPPED_WITHIN), "a zygote kept running after a stop"


def test_a_check_waiting_for_a_daemon_that_ends_starts_its_own(fresh):
    # One command starts the daemon; a check waits for it; the daemon ends before it answers (stopped from
    # another terminal, or a test session's end): the check starts a daemon of its own instead of failing.
    daemon.ensure(wait=False)
    first = int((fresh / "starting").read_text().split()[0])
    ended = ThreadPoolExecutor(1).submit(lambda: (time.sleep(0.3), os.killpg(first, 9)))
    assert daemon.ensure() == fresh
    ended.result()
    assert int((fresh / "starting").read_text().split()[0]) != first
    assert runner.grade(NOISE, NOISE.solution_file).passed


def test_checks_are_graded_while_the_zygotes_warm_up_and_after(fresh):
    daemon.ensure()
    first = {fam: daemon._talk(fresh, fam, {"ping": True}, timeout=5) for fam in ("real", "sim")}
    assert runner.grade(FIT, FIT.solution_file).passed  # answered by the stand-ins (or the zygotes, if ready)

    assert wait_for(lambda: warm_zygotes(fresh), 60), "the stand-ins never handed over"
    # A family's warm-up takes a fraction of a second: it may be over by the first ping. A stand-in that
    # answered it has handed over to another process since.
    warm = warm_zygotes(fresh)
    assert all(warm[fam] != answer["pid"] for fam, answer in first.items() if not answer["warm"])
    assert runner.grade(FIT, FIT.solution_file).passed
    assert runner.grade(NOISE, NOISE.exercise_file).passed is False  # the shipped bug still fails


@pytest.fixture
def record(shared):
    return shared / "seen.txt"


def _recording(tmp_path: Path, exercise, record: Path, what: str) -> Path:
    """The exercise's solution, which first appends `what` (an expression, evaluated as the grader imports it)
    and the accelerator its process sees to `record`."""
    attempt = tmp_path / "recording.py"
    attempt.write_text(f"import multiprocessing\nimport torch\nwith open({str(record)!r}, 'a') as f:\n"
                       f"    f.write(repr((str(torch.accelerator.current_accelerator()), {what})) + '\\n')\n\n"
                       + exercise.solution_file.read_text())
    return attempt


def test_both_families_are_warmed_up_once_warm(fresh, tmp_path, record):
    # The real zygote imports WARM_UP_IMPORTS once for both families; the simulated zygote that answers after
    # the warm-up is a fork made after it (grader.engine.workers._serve_forked).
    attempt = _recording(tmp_path, NOISE, record, "hasattr(multiprocessing, 'popen_fork')")  # a warm-up import
    daemon.ensure()
    assert runner.grade(NOISE, attempt).passed
    assert wait_for(lambda: warm_zygotes(fresh), 60), "the stand-ins never handed over"
    record.write_text("")
    assert runner.grade(NOISE, attempt).passed
    seen = dict(ast.literal_eval(line) for line in record.read_text().splitlines())
    assert len(seen) == 2 and all(seen.values()), seen  # the real legs' process and the simulated legs' one


def test_the_simulated_legs_see_no_gpu_and_the_real_legs_every_gpu(fresh, tmp_path, record):
    # On a GPU machine: code that looks for CUDA on the simulated legs finds none, as on a laptop, and the real
    # legs find every GPU (the zygote they fork from never counted them). Checked on 2 x H100 (tools/GPU_RUNS.md).
    import torch

    attempt = _recording(tmp_path, NOISE, record, "(torch.cuda.is_available(), torch.cuda.device_count())")
    for _ in range(2):  # a check answered by the stand-ins, then one by the warm zygotes
        assert runner.grade(NOISE, attempt).passed
        assert wait_for(lambda: warm_zygotes(fresh), 60)
    found = dict(map(ast.literal_eval, record.read_text().splitlines()))
    real = (torch.cuda.is_available(), torch.cuda.device_count())
    assert found == {"sim": (False, 0), "cuda" if real[0] else "None": real}, found


def test_spawn_mode_grades_with_spare_workers_and_stops(fresh):
    # Where fork is unsafe (macOS), each family's zygote keeps a spawned spare worker warm instead.
    spawn = {"DEVCOURSE_WORKERS": "spawn"}
    done = cli("check", NOISE.name, "--solution", env=spawn)
    assert done.returncode == 0 and "PASSED" in done.stdout, done.stdout + done.stderr
    assert "does not pass yet" in cli("check", NOISE.name, env=spawn).stdout  # the shipped bug still fails
    zygotes = serving(fresh)
    spares = {c for z in zygotes for c in children(z)} - set(zygotes)  # `grader.engine.workers spare`, without the folder
    assert spares and "stopped" in cli("stop").stdout.lower()
    assert wait_for(lambda: not serving(fresh) and not any(_stat(p) and _stat(p)[0] != "Z" for p in spares), 30)


@pytest.mark.parametrize("missing", ["torch/__init__.py", "pytest_timeout.py"])
def test_grading_processes_that_cannot_start_fail_each_check_with_the_reason(fresh, tmp_path, missing):
    # torch fails in the daemon's first step; pytest_timeout in what the stand-in and the daemon prepare after it.
    shadow = tmp_path / "shadow" / missing
    shadow.parent.mkdir(parents=True)
    shadow.write_text("raise ImportError('not installed here')\n")
    env = {"PYTHONPATH": f"{tmp_path / 'shadow'}{os.pathsep}{ROOT}"}
    for _ in range(2):  # the first check starts the daemon; the second finds it running
        done = cli("check", NOISE.name, "--solution", env=env)
        assert done.returncode == 1 and "the grading processes could not start: ImportError: not installed here" \
            in done.stdout, done.stdout + done.stderr
    assert "stopped" in cli("stop", env=env).stdout.lower()
    assert wait_for(lambda: not serving(fresh), STOPPED_WITHIN)


def test_stop_during_the_warm_up_ends_everything(fresh):
    daemon.ensure()
    assert daemon.stop(fresh)
    assert wait_for(lambda: not serving(fresh), STOPPED_WITHIN), "a zygote kept running after stop"


def test_learner_code_can_import_dtensor_on_the_simulator(tmp_path):
    # The sim zygote starts without importing torch.distributed.tensor (grader.engine.workers); code that needs the
    # module gets the real one.
    mm = course.get("masked_mean")
    f = tmp_path / "attempt.py"
    f.write_text("from torch.distributed.tensor import DTensor, Replicate\n\n"
                 "assert DTensor.__module__.startswith('torch.distributed.tensor') and Replicate is not None\n\n"
                 + mm.solution_file.read_text())
    g = runner.grade(mm, f)
    assert g.passed, [r.message for r in g.failures]
    assert any(r.leg.startswith("sim") for r in g.ran)


def test_a_zygote_grades_jobs_at_once(tmp_path, shared):
    # Two submissions that each wait for the other to have started: they pass only if graded side by side.
    mm = dataclasses.replace(course.get("masked_mean"), timeout=30)
    meeting = shared
    files = []
    for me, other in ((0, 1), (1, 0)):
        f = tmp_path / f"learner{me}.py"
        f.write_text(f"import pathlib, time\n"
                     f"pathlib.Path({str(meeting)!r}, '{me}').touch()\n"
                     f"for _ in range(400):\n"
                     f"    if pathlib.Path({str(meeting)!r}, '{other}').exists():\n"
                     f"        break\n"
                     f"    time.sleep(0.05)\n"
                     f"else:\n"
                     f"    raise RuntimeError('graded alone')\n\n" + mm.solution_file.read_text())
        files.append(f)
    with ThreadPoolExecutor(2) as pool:
        grades = list(pool.map(lambda f: runner.grade(mm, f, device="cpu"), files))
    assert all(g.passed for g in grades), [r.message for g in grades for r in g.failures]


def test_devcourse_check_starts_grading_before_the_rest_of_the_tool():
    from grader import launch

    launch._start_check([NOISE.name, "--solution"])  # as `devcourse check noise_batch --solution` does first
    assert len(runner._SOON) == 1
    g = runner.grade(NOISE, NOISE.solution_file)  # what grader.cli then asks for: the result started early
    assert g.passed and not runner._SOON
    launch._start_check(["no_such_exercise"])  # left to grader.cli, which says what is wrong
    launch._start_check([NOISE.name, "--all"])
    assert not runner._SOON


#: Python source, for a submission: its process's start time in clock ticks since boot (/proc/self/stat).
class StartTicks:
    """When the grading process that asks started, in clock ticks since boot (/proc/PID/stat's field 22). A
    grading process may not read /proc: it asks through a Unix socket in `folder` (multiprocessing.connection,
    which the source policy allows); the kernel gives this test its pid (SO_PEERCRED), and the test reads the
    host's /proc while the process waits for the answer. `expression`: what learner code evaluates to ask."""

    def __init__(self, folder: Path):
        path = folder / "start-ticks.sock"
        self.expression = f"Client({str(path)!r}).recv_bytes().decode()"
        self.imports = "from multiprocessing.connection import Client\n"

        def answer(conn, pid):
            ticks = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19].encode()
            conn.sendall(struct.pack("!i", len(ticks)) + ticks)

        self.listener = PeerListener(path, answer)


def _started_at(ticks) -> float:
    """When a process started, in seconds since boot (CLOCK_BOOTTIME), from its /proc start time in clock ticks:
    exact to a tick, where btime (whole seconds) would blur it by up to a second."""
    return int(ticks) / os.sysconf("SC_CLK_TCK")


def test_a_check_is_graded_by_a_worker_started_before_it_and_stop_ends_the_next_one(fresh, tmp_path, shared):
    # An idle zygote keeps a handler and its worker started (on a GPU machine, with CUDA's context made), so a
    # check does not wait for them; stop ends the one waiting for the next check too.
    mm = course.get("masked_mean")
    record = shared / "worker.txt"
    attempt = tmp_path / "attempt.py"
    ticks = StartTicks(shared)
    attempt.write_text(
        "import os\n" + ticks.imports +
        f"with open({str(record)!r}, 'a') as f:\n"
        f"    f.write(f\"{{os.getpid()}} {{{ticks.expression}}}\\n\")\n\n"
        + mm.solution_file.read_text())
    assert runner.grade(mm, attempt).passed
    # A learner reads the result and edits: meanwhile the zygotes finish warming up, and each forks a ready
    # handler with its worker (a zygote's children are the other zygote and its ready handler).
    assert wait_for(lambda: warm_zygotes(fresh), 120), "the zygotes never finished warming up"
    zygotes = set(warm_zygotes(fresh).values())
    assert wait_for(lambda: all(any(children(h) for h in children(z) - zygotes) for z in zygotes), 60)
    time.sleep(0.1)  # start times are whole ticks (10 ms): leave a few between the workers' start and the check
    sent = time.clock_gettime(time.CLOCK_BOOTTIME)
    record.write_text("")
    assert runner.grade(mm, attempt).passed
    starts = {pid: _started_at(t) for pid, t in map(str.split, record.read_text().splitlines())}
    tick = 1 / os.sysconf("SC_CLK_TCK")  # a start time is rounded down to a tick
    assert starts and all(start < sent - tick for start in starts.values()), (sent, starts)
    assert daemon.stop(fresh)
    assert wait_for(lambda: not serving(fresh), STOPPED_WITHIN), "a process of the daemon (a ready handler?) kept running"


@pytest.mark.skipif(not glob.glob("/dev/nvidia[0-9]*"), reason="needs an NVIDIA GPU")
def test_on_a_gpu_machine_the_next_ready_worker_starts_while_a_check_runs(fresh, tmp_path, shared):
    # Its CUDA contexts take 0.3 to 0.5 s: a check sent right after another must not wait for them. Each real
    # worker records when its grading began and when its process started, then takes a second: the worker of
    # the next check must have started while this one was grading (not after it ended, as on a CPU machine).
    mm = course.get("masked_mean")
    record = shared / "workers.txt"
    attempt = tmp_path / "attempt.py"
    ticks = StartTicks(shared)
    attempt.write_text(  # the simulated family's processes have CUDA_VISIBLE_DEVICES="" (grader.engine.workers)
        "import os, time\n" + ticks.imports +
        "real = os.environ.get('CUDA_VISIBLE_DEVICES') != ''\n"
        f"with open({str(record)!r}, 'a') as f:\n"
        f"    f.write(repr((real, time.clock_gettime(time.CLOCK_BOOTTIME), {ticks.expression})) + '\\n')\n"
        "if real:\n"
        "    time.sleep(1)\n\n" + mm.solution_file.read_text())
    assert runner.grade(mm, attempt).passed
    assert wait_for(lambda: warm_zygotes(fresh), 120)
    time.sleep(1.0)  # idle: the real zygote's ready worker has made its contexts
    record.write_text("")
    assert runner.grade(mm, attempt).passed and runner.grade(mm, attempt).passed  # the second sent at once
    records = map(ast.literal_eval, record.read_text().splitlines())
    real = [(began, _started_at(ticks)) for is_real, began, ticks in records if is_real]  # a record per leg
    first_began, first_started = real[0]
    second_started = next(started for _, started in real if started != first_started)
    assert second_started < first_began + 0.5, (first_began, second_started)


def test_ready_workers_make_cuda_contexts_unless_told_not_to(monkeypatch):
    # Each context holds device memory while the daemon is idle (518 MiB per H100): a shared hub turns it off.
    from grader.engine.process_setup import warms_gpus

    monkeypatch.delenv("DEVCOURSE_WARM_GPUS", raising=False)
    assert warms_gpus("real") and not warms_gpus("sim")
    monkeypatch.setenv("DEVCOURSE_WARM_GPUS", "0")
    assert not warms_gpus("real")


def test_the_code_digest_covers_every_grader_module_a_worker_runs():
    # A daemon whose workers run older code than the files say grades with it: each module a grading worker
    # loads (what it prepares, the plugin, the checks' helpers) must be in the digest that tells it is stale.
    from grader.engine.workers import WORKER_MODULES

    loaded = subprocess.run(
        [sys.executable, "-c", "import sys; from grader.engine import workers; workers._prepare_common(); "
         "print(' '.join(m for m in sys.modules if m.startswith('grader.')))"],
        capture_output=True, text=True, timeout=300, check=True).stdout.split()
    from grader import ROOT

    # a module's file under grader/, as WORKER_MODULES names it: "engine/plugin", "guard/__init__"
    files = {m.split(".", 1)[1].replace(".", "/") for m in loaded if m.split(".")[1] not in ("simulated", "checks")}
    files = {f + "/__init__" if (ROOT / "grader" / f).is_dir() else f for f in files}
    assert files - set(WORKER_MODULES) == set(), "add these to grader.engine.workers.WORKER_MODULES"
    assert all((ROOT / "grader" / f"{name}.py").is_file() for name in WORKER_MODULES)
