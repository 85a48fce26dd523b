"""One run of the learner's script inside the instruments (in the doctor's confined process, grader.doctor.probe):
the script is compiled from its own file (read as the simulated accelerator where it names CUDA:
grader.doctor.cuda_only), with each of its loops cut after the iterations asked for (grader.doctor.loops), run
as `__main__` with its arguments to its end (or the time limit: grader.doctor.steps), and what was watched is
turned into findings (grader.doctor.analyze)."""

from __future__ import annotations

import ast
import builtins
import os
import sys
from collections import Counter

import torch

from grader.engine import instruments
from grader.doctor import analyze, cuda_only, habits, loops, mismatch, observe
from grader.doctor.findings import order
from grader.doctor.observe import (Recorder, watch_library, watch_module_moves, watch_python_data,
                                  watch_synchronize)
from grader.doctor.steps import Steps, TimeUp, stop_no_more, stop_when_time_is_up


def _main_device(device: torch.device):
    """Where the script's own device choice lands: torch.accelerator.current_accelerator() names the doctor's
    device with its index (sim:1), while the *current* device stays index 0, so a lost index shows."""
    original = torch.accelerator.current_accelerator

    def current_accelerator(check_available: bool = False):
        return device

    torch.accelerator.current_accelerator = current_accelerator
    return [(torch.accelerator, "current_accelerator", original)]


def run(request: dict, device: torch.device) -> dict:
    path = os.path.abspath(request["script"])
    with open(path, encoding="utf-8") as f:
        source = f.read()
    lines = source.splitlines()
    tree = ast.parse(source, path)
    findings = []
    if device.type != "cuda":
        findings += cuda_only.findings(tree, path, lines, str(device))
    if device.type == "sim":
        tree = cuda_only.as_simulator(tree, device.index or 0)
    code = compile(loops.rewrite(tree), path, "exec")

    instruments.attribute_to(path)
    cut = loops.Loops(request["steps"])
    rec = Recorder(device, cut)
    steps = Steps(rec)
    cut.on_leave = habits.kept_at_exit(rec, lambda tensor, scopes: analyze.holder_line(tensor, scopes, lines))
    undo = cut.install()
    if device.type != "cpu":
        undo += _main_device(device)
    undo += steps.install() + watch_python_data(rec) + watch_module_moves(rec) + watch_library(rec)
    undo += watch_synchronize(rec) if device.type != "cpu" else []
    undo += habits.watch_clocks(rec, path) + habits.watch_empty_cache(rec) + habits.watch_load(rec)
    args = list(request.get("args", []))
    sys.argv = [path] + (cuda_only.as_simulator_args(args, device.index or 0) if device.type == "sim" else args)
    sys.path.insert(0, os.path.dirname(path))
    namespace = {"__name__": "__main__", "__file__": path, "__builtins__": builtins, "__spec__": None,
                 loops.NAME: cut}
    outcome, error, exit_code = "finished", None, None
    stop_when_time_is_up(request.get("timeout", 120), path)
    # the script's tree as written (the loops' rewrite changed `tree`): where its names are assigned
    continued = mismatch.Continue(rec, path, ast.parse(source, path), lines) if device.type != "cpu" else None
    with observe.measure(device, rec) as m:
        try:
            try:
                if continued is not None:
                    with continued:
                        exec(code, namespace)
                else:
                    exec(code, namespace)
            finally:
                stop_no_more()
        except TimeUp as stop:
            outcome, error = "time-up", stop
        except SystemExit as exc:
            outcome = "finished" if exc.code in (None, 0) else "exited"
            exit_code = exc.code if isinstance(exc.code, int) else str(exc.code)
        except BaseException as exc:  # noqa: BLE001 - the learner's error is a finding
            outcome, error = "crashed", exc
    sys.stdout.flush()
    for owner, name, original in undo:
        setattr(owner, name, original)

    scopes = [namespace] + [frame.f_locals for frame, _ in _script_frames(error, path)]
    analysis = analyze.Analysis(rec, steps, path, lines, scopes, continued)
    findings += analysis.all()
    if outcome == "crashed":
        ended = analyze.crash(error, path, lines, str(device))
        ended.message += ("\nThe doctor cannot go on after this error (it goes on only after a device mismatch): "
                          "the code after it did not run, so its bugs, if any, are not reported.")
        findings.append(ended)
    return {
        "script": path,
        "args": list(request.get("args", [])),
        "device": str(device),
        "profile": request.get("profile", "cuda"),
        "outcome": outcome,
        "exit_code": exit_code,
        "steps": {"asked": request["steps"], "optimizer_steps": steps.optimizer_steps, "batches": steps.batches},
        "loops_cut": cut.report(),
        "findings": [f.to_json() for f in order(findings)],
        "per_step": _per_step(rec, analysis),
        "memory": _memory(rec, m),
    }


def _script_frames(error, path):
    import traceback

    if error is None:
        return []
    return [(frame, n) for frame, n in traceback.walk_tb(error.__traceback__) if frame.f_code.co_filename == path]


def _per_step(rec: Recorder, analysis) -> dict:
    """Traffic of the last whole iteration of the loop of steps (analysis.main_step): copies by direction
    (count, bytes, from or into pinned memory), host reads and explicit synchronisations."""
    main = analysis.main_step()
    if main is None:
        return {}
    loop, iteration = main
    mark = (loop.uid, iteration)
    out = {"loop_line": loop.line}
    for kind in ("h2d", "d2h", "d2d"):
        copies = [c for c in rec.copies if c.kind == kind and mark in c.step]
        out[kind] = {"copies": len(copies), "bytes": sum(c.nbytes for c in copies),
                     "pinned": sum(1 for c in copies if c.pinned)}
    out["host_reads"] = sum(1 for context, _ in rec.reads if mark in context)
    out["syncs"] = sum(1 for context, _ in rec.waits if mark in context)
    return out


def _memory(rec: Recorder, m) -> dict:
    holders = [{"line": line.number if line else None, "source": line.code if line else "", "bytes": n}
               for line, n in rec.peak_holders.most_common(3)]
    return {"peak_bytes": m.peak_bytes, "held_at_peak": holders}
