"""Start the doctor's process for a script and wait for its findings (grader.doctor.probe runs inside).

The script runs as a submission does (grader/INTEGRITY.md): in a process of its own, confined by Landlock to
write only into a private temporary folder, with grader.engine.limits' memory and output limits, a limit on CPU time
(`timeout`) and a longer one on the clock (grader.engine.limits.wall_limit: a hang that burns no CPU). It runs in a
scratch copy of the folder the doctor was started in: every entry there is a link to yours, so the script reads
your files (data, configs, checkpoints) by the same relative paths, and what it writes (checkpoints, logs)
lands in the scratch folder, removed afterwards."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from grader.engine import limits
from grader.guard import sandbox

DEFAULT_STEPS = 3  # iterations of each loop: two tell a per-step pattern from a one-off; a third shows growth
DEFAULT_TIMEOUT = 120.0  # seconds of CPU time
SETUP_SECONDS = 60  # CPU seconds for the probe's set-up (torch's import, the simulator), not the script's
ANALYSIS_SECONDS = 30  # CPU seconds left, after the time limit, to report what was seen
OUTPUT_KEPT = 4000  # characters of the script's own output kept for the report


def scratch_copy(folder: Path, into: Path) -> Path:
    """`into`/work with a link to each entry of `folder`."""
    work = into / "work"
    work.mkdir()
    for entry in folder.iterdir():
        try:
            (work / entry.name).symlink_to(entry)
        except OSError:
            pass
    return work


def run(script: str, args: list[str] = (), device: str = "sim:1", steps: int = DEFAULT_STEPS,
        timeout: float = DEFAULT_TIMEOUT, profile: str = "cuda", cwd: str | None = None) -> dict:
    """Run the doctor on `script`; the result as a dict (grader.doctor.session's, or what went wrong)."""
    script_path = Path(script).resolve()
    if not script_path.is_file():
        return {"outcome": "no-script", "script": str(script_path),
                "message": f"{script} is not a file: give the path of a Python script."}
    private = sandbox.private_folder()
    try:
        work = scratch_copy(Path(cwd or os.getcwd()).resolve(), private)
        request = {"script": str(script_path), "args": list(args), "device": device, "steps": steps,
                   "timeout": timeout,
                   "profile": profile, "private": str(private), "result": str(private / "result.json")}
        (private / "request.json").write_text(json.dumps(request), encoding="utf-8")
        started = time.monotonic()
        output, status, stopped = _spawn(private, work, timeout)
        wall = time.monotonic() - started
        result_file = private / "result.json"
        if result_file.is_file() and not stopped:
            try:
                result = json.loads(result_file.read_text(encoding="utf-8"))
            except ValueError:
                result = {"outcome": "doctor-error", "error": "the doctor's result could not be read"}
        else:
            result = {"outcome": _why_gone(status, stopped), "script": str(script_path),
                      "device": device, "findings": []}
            result["message"] = _message(result["outcome"], timeout, output)
        result["output"] = output[-OUTPUT_KEPT:]
        result["seconds"] = round(wall, 2)
        result.setdefault("script", str(script_path))
        result.setdefault("device", device)
        result.setdefault("findings", [])
        return result
    finally:
        sandbox.remove(private)


def _limits(cpu_seconds: float):
    def apply():
        # The hard limit kills a probe that could not stop: its set-up (importing torch) and the analysis of what
        # ran come on top of the script's own time, whose soft limit the probe sets itself (steps.TimeUp).
        seconds = max(1, int(cpu_seconds)) + SETUP_SECONDS + ANALYSIS_SECONDS
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))
    return apply


def _spawn(private: Path, work: Path, timeout: float):
    """Run the probe; (its output's end, its exit status, why it was stopped: None, "timeout" or "output")."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONSTARTUP", None)
    import grader

    root = str(Path(grader.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen([sys.executable, "-m", "grader.doctor.probe", str(private / "request.json")],
                            cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_limits(timeout))
    tail = _Tail(proc)
    reader = threading.Thread(target=tail.drain, daemon=True)
    reader.start()
    try:
        proc.wait(timeout=limits.wall_limit(timeout))
    except subprocess.TimeoutExpired:
        tail.stopped = tail.stopped or "timeout"
    _kill_group(proc.pid)  # DataLoader workers and whatever else the script started
    proc.wait()
    reader.join(timeout=5)
    return tail.text(), proc.returncode, tail.stopped


class _Tail:
    """The end of the probe's output (the script's prints), read as it comes: the pipe is not a file, so
    RLIMIT_FSIZE does not limit it; past grader.engine.limits.OUTPUT_LIMIT bytes the probe is stopped."""

    KEEP = 64 * 1024

    def __init__(self, proc):
        self.proc, self.data, self.total, self.stopped = proc, b"", 0, None

    def drain(self) -> None:
        for chunk in iter(lambda: self.proc.stdout.read1(65536), b""):
            self.total += len(chunk)
            self.data = (self.data + chunk)[-self.KEEP:]
            if self.total > limits.OUTPUT_LIMIT and not self.stopped:
                self.stopped = "output"
                _kill_group(self.proc.pid)

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _why_gone(status: int, stopped: str | None) -> str:
    if stopped == "output":
        return "output-limit"
    if stopped == "timeout" or status == -signal.SIGXCPU:
        return "timeout"
    if status is not None and status < 0:
        return "killed"
    return "doctor-error"


def _message(outcome: str, timeout: float, output: str) -> str:
    if outcome == "timeout":
        return (f"The script did not end within the time limit ({timeout:g} s of CPU time, "
                f"{limits.wall_limit(timeout):g} s on the clock): it hangs, or an iteration is very slow here. Try "
                "--steps 1 (each loop cut after one iteration), a smaller batch or model, or --timeout.")
    if outcome == "output-limit":
        return (f"The script printed more than {limits.OUTPUT_LIMIT // 2**20} MiB, the doctor's output limit: print a "
                "little (a loss every few hundred steps), not whole tensors or every step.")
    if outcome == "killed" and "terminate called" in output:
        # Neither the doctor's time limit (grader.engine.deferred_stop) nor an error of a simulated kernel during a
        # backward (grader.simulated.hook_errors) does this any more; what is left is C++ giving up on its own.
        return ("The script's process ended inside PyTorch's C++ code (\"terminate called\"), without a Python "
                "error the doctor could report. Run the script plainly, or the doctor with --device cpu, to see "
                "whether it happens without the simulated accelerator; with --steps 1 or a larger --timeout if it "
                "stopped near its limits.")
    if outcome == "killed":
        return ("The script's process was killed (out of memory?): the doctor allows "
                f"{limits.describe_memory()}.")
    return "The doctor's process ended without a result. Its last output:\n" + output[-1000:]
