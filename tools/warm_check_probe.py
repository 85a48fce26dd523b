"""Where a warm check's time goes: each leg alone, then a worker's phases in forks of a prepared zygote.

    python tools/warm_check_probe.py OUTDIR      (from the repository root; writes OUTDIR/diag.txt)

Times `devcourse check` warm with each --device (cuda legs only where there are GPUs), and in forks of a
prepared real-family zygote the making of CUDA's contexts (grader.engine.workers._start_gpus) and each leg's pytest
run with its checks' own seconds. tools/GPU_RUNS.md (eleventh session) has what it found on 2 x H100."""
import json, os, subprocess, sys, time
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
env = {**os.environ, "PYTHONPATH": os.getcwd(), "DEVCOURSE_DAEMON_DIR": "/tmp/dd-diag"}
lines = []
def t(args, n=3):
    walls = []
    for _ in range(n):
        s = time.perf_counter()
        r = subprocess.run(args, env=env, capture_output=True, text=True)
        walls.append(round(time.perf_counter() - s, 3))
    lines.append(f"{walls} {' '.join(args[1:])}")
    print(lines[-1], flush=True)
    return r
py = sys.executable
ngpu = int(subprocess.run([py, "-c", "import torch; print(torch.cuda.device_count())"], capture_output=True,
                          text=True).stdout.strip() or 0)
GPU_LEGS = [["--device", f"cuda:{i}"] for i in range(ngpu)]
t([py, "-c", "pass"])
t([py, "-c", "import grader.launch, grader.cli"])
t([py, "-m", "grader", "check", "masked_mean", "--solution"], 1)
time.sleep(10)
for ex in ("masked_mean", "train_anywhere", "noise_batch"):
    for dev in ([], ["--device", "real"], ["--device", "cpu"], *GPU_LEGS, ["--device", "sim"]):
        t([py, "-m", "grader", "check", ex, "--solution", *dev])
r = t([py, "-m", "grader", "check", "train_anywhere", "--solution", "--json"], 1)
with open(f"{out}/train_anywhere.json", "w") as f:
    f.write(r.stdout)
# the same job without the daemon: a worker's pytest run in this process's fork, timed by phase
code = r'''
import os, sys, time, torch
from grader.engine import grading_process, process_setup, workers
from grader.catalog import course
t = time.perf_counter(); workers._prepare("real"); workers._warm_up(); print("prep", round(time.perf_counter() - t, 3))
ex = course.get(sys.argv[1])
for spec in ["cpu"] + [f"cuda:{i}" for i in range(torch.cuda.device_count())]:
    pid = os.fork()
    if pid == 0:
        import pytest, pytest_timeout
        from grader.engine import plugin
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        t0 = time.perf_counter(); process_setup._start_gpus(); t1 = time.perf_counter()
        job = {"grader": str(ex.grader_file), "submission": str(ex.solution_file), "spec": spec, "timeout": 30, "cwd": os.getcwd()}
        recs = []
        import io, contextlib
        with contextlib.redirect_stdout(io.StringIO()):
            pytest.main(grading_process._pytest_args(job), plugins=[plugin, pytest_timeout, plugin.ChannelReporter(recs.append)])
        t2 = time.perf_counter()
        print(spec, "gpus", round(t1 - t0, 3), "pytest", round(t2 - t1, 3), [(r.get("check"), r.get("seconds")) for r in recs if "outcome" in r], flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
'''
for ex in ("train_anywhere", "masked_mean"):
    r = subprocess.run([py, "-c", code, ex], env=env, capture_output=True, text=True)
    lines.append(r.stdout + r.stderr[-2000:])
    print(lines[-1], flush=True)
subprocess.run([py, "-m", "grader", "stop"], env=env)
with open(f"{out}/diag.txt", "w") as f:
    f.write("\n".join(lines))
