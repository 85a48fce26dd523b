"""The doctor's own process: `python -m grader.doctor.probe REQUEST.json`, started by grader.doctor.launch.

It confines itself first, as a grading worker does (grader.guard.sandbox: Landlock, while it has one thread; on a
real GPU right after CUDA started), limits the files it may write (output included) and its host memory
(grader.engine.limits), makes the simulated accelerator (or uses the real one), then runs the learner's script as
`python SCRIPT ARGS` would, inside the instruments, each of its loops cut after the iterations asked for. It
writes what it found as JSON to the request's `result` path, in its private folder."""

from __future__ import annotations

import json
import os
import sys


def _limit_files() -> None:
    import resource
    import signal

    from grader.engine import limits

    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.OUTPUT_LIMIT, limits.OUTPUT_LIMIT))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead of killing us


def _limit_host_memory() -> None:
    import resource

    from grader.engine import limits

    try:
        with open("/proc/self/status") as f:
            data = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmData:"))
        limit = data + limits.HOST_MEMORY
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    except (OSError, ValueError, StopIteration):
        pass


def prepare(request: dict):
    """Confine, limit, and make the device; returns (torch.device, isolation line)."""
    from grader.guard import sandbox

    device = request["device"]
    simulated = device.startswith("sim")
    if simulated:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # code that looks for CUDA finds none, as on a laptop
    isolation = None
    if simulated or not device.startswith("cuda"):
        isolation = sandbox.confine(request["private"])  # one thread still: before torch starts its own
    _limit_files()
    import torch

    from grader.engine import limits

    if simulated:
        from grader import simulated as sim

        sim.install(count=2, profile=request.get("profile", "cuda"))
        for index in range(2):
            torch.sim.set_per_process_memory_fraction(
                min(1.0, limits.DEVICE_MEMORY / torch.sim.get_device_properties(index).total_memory), index)
    elif device.startswith("cuda"):
        torch.cuda.init()
        isolation = sandbox.confine(request["private"])  # CUDA cannot start confined (grader.engine.workers)
        for index in range(torch.cuda.device_count()):
            torch.cuda.set_per_process_memory_fraction(
                min(1.0, limits.DEVICE_MEMORY / torch.cuda.get_device_properties(index).total_memory), index)
    _limit_host_memory()
    return torch.device(device), isolation


def main(argv: list[str]) -> int:
    with open(argv[0], encoding="utf-8") as f:
        request = json.load(f)
    result_path = request["result"]
    try:
        device, isolation = prepare(request)
        from grader.doctor import session

        result = session.run(request, device)
        result["isolation"] = isolation.how if isolation else "not isolated"
        result["isolated"] = bool(isolation and isolation.available)
    except BaseException as exc:  # noqa: BLE001 - the launcher reports the doctor's own failure
        import traceback

        result = {"outcome": "doctor-error", "error": "".join(traceback.format_exception(exc))[-4000:]}
    sys.stdout.flush()
    with open(result_path, "w", encoding="utf-8") as f:
        json.dump(result, f)
    os._exit(0)  # the script's threads and DataLoader workers must not keep us


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
