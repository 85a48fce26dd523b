"""`devcourse doctor SCRIPT [ARGS...]`: the course's instruments on the learner's own script.

The whole script runs, each of its loops that works on the device cut after a few iterations (grader.doctor.loops)
and each device mismatch gone on after (grader.doctor.mismatch), on the simulated accelerator, `sim:1` so that a
lost device index shows, or on a real one (`--device cuda:0`), confined and limited as a submission is
(grader.doctor.launch, grader.doctor.probe), and each device problem is reported at the learner's line with the
book's section that explains it (grader.doctor.findings lists them; grader.doctor.analyze finds them; a script
written for CUDA only is read as the simulator: grader.doctor.cuda_only). grader.doctor.render prints the
report: rich in a terminal, plain when piped, --json, --sarif.

    from grader.doctor import diagnose
    result = diagnose("train.py", ["--epochs", "1"])   # a dict: outcome, steps, loops_cut, findings, per_step, memory
"""

from __future__ import annotations

from grader.doctor.launch import DEFAULT_STEPS, DEFAULT_TIMEOUT
from grader.doctor.launch import run as diagnose

__all__ = ["diagnose", "DEFAULT_STEPS", "DEFAULT_TIMEOUT"]
