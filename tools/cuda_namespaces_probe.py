"""Which namespace keeps CUDA from starting in a grading process? Run on a GPU machine from the repository root:
`python3 tools/cuda_namespaces_probe.py`. Each variant sets up in a fresh interpreter, forks, and starts CUDA in
the child; one line each, the child's pid and CUDA's answer (tools/GPU_RUNS.md, 2026-12-06, has the results)."""

import subprocess
import sys

VARIANT = r'''
import ctypes, json, os, sys
sys.path.insert(0, os.getcwd())
from grader.guard import containment, namespaces

v = sys.argv[1]
if v in ("pid_root", "pid_root_own_proc"):
    namespaces.unshare(namespaces.CLONE_NEWPID)
elif v == "net_root":
    namespaces.unshare(namespaces.CLONE_NEWNET)
elif v == "user_pid":
    namespaces.new_namespaces(namespaces.CLONE_NEWPID)
elif v == "user_net":
    namespaces.new_namespaces(namespaces.CLONE_NEWNET)
elif v == "user_only":
    namespaces.new_namespaces(0)
pid = containment.fork_contained(os.fork, last=True)[0] if v == "fork_contained" else os.fork()
if pid == 0:
    out = {"variant": v, "pid": os.getpid()}
    try:
        if v == "pid_root_own_proc":
            namespaces.own_proc()
        import torch
        out["devices"] = torch.cuda.device_count()
        out["sum"] = float((torch.ones(4, device="cuda") * 2).sum())
    except BaseException as exc:
        out["error"] = repr(exc)[:200]
    print(json.dumps(out), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
'''

for variant in ("plain", "net_root", "user_only", "user_net", "pid_root", "user_pid", "pid_root_own_proc",
                "fork_contained"):
    done = subprocess.run([sys.executable, "-c", VARIANT, variant], capture_output=True, text=True, timeout=120)
    print(done.stdout.strip() or f"{variant}: {done.stderr.strip()[-300:]}")
