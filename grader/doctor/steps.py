"""Steps of the learner's script: optimizer steps (every optimizer, through torch's global step hooks) and
DataLoader batches (every DataLoader's iterator), each of which makes the loop it runs in one that
grader.doctor.loops cuts; and the time limit, which stops a script whose loops do no such work."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import torch


WIDEN_AFTER = 1  # second(s) of CPU time past the limit waiting for a line of the learner's own code


class TimeUp(BaseException):
    """Raised into the script when its CPU time is up, so that what ran is still reported: a loop with neither an
    optimizer nor a DataLoader to count its steps ends so."""


def stop_when_time_is_up(seconds: float, script: str) -> None:
    """From now on, the script may use `seconds` of CPU time (the hard limit, set by grader.doctor.launch, stays).

    SIGXCPU comes at the soft limit set here. Its handler does not raise: TimeUp is raised at the next line of the
    learner's code (grader.engine.deferred_stop says why), never inside the simulator's kernels or device guard under
    the autograd engine, where it ended the process ("terminate called without an active exception")."""
    import resource
    import signal

    from grader.engine import deferred_stop

    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(usage.ru_utime + usage.ru_stime + max(1.0, seconds)) + 1
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    learners_code = deferred_stop.learners_code(script)
    signals = [0]

    def handler(signum, frame):  # SIGXCPU comes again each second of CPU time past the soft limit
        signals[0] += 1
        if signals[0] == 1:
            deferred_stop.raise_at_next_line(TimeUp, learners_code, frame)
        elif signals[0] > WIDEN_AFTER:
            # The learner's lines did not come (a library's training loop): a library's too, but not torch's nor
            # the grader's (the simulator), so that the analysis still runs in the time left.
            signal.signal(signal.SIGXCPU, signal.SIG_IGN)
            deferred_stop.raise_at_next_line(TimeUp, deferred_stop.libraries_but(torch.__file__, __file__), frame)

    signal.signal(signal.SIGXCPU, handler)


def stop_no_more() -> None:
    """The script has ended: nothing is raised into it any more (the analysis runs in the time left)."""
    import signal

    from grader.engine import deferred_stop

    signal.signal(signal.SIGXCPU, signal.SIG_IGN)
    deferred_stop.cancel()


@dataclass
class Steps:
    """Optimizer steps and DataLoader batches: each makes the loops running working ones (grader.doctor.loops,
    which cuts them), and optimizer steps are counted for the report."""

    rec: object  # grader.doctor.observe.Recorder
    optimizer_steps: int = 0
    batches: int = 0
    optimizer_contexts: list = field(default_factory=list)  # Loops.context of each optimizer step
    optimizer_state: list = field(default_factory=list)  # (line, what) of optimizer state on another device
    step_on_device: set = field(default_factory=set)  # lines of optimizer steps whose `step` counters are on a device

    def stepped(self, optimizer, *_):
        self.optimizer_steps += 1
        self.optimizer_contexts.append(self.rec.loops.context)
        self.rec.loops.work()

    def before_step(self, optimizer, *_):
        try:
            _check_state(optimizer, self.optimizer_state)
            if _step_on_device(optimizer):
                from grader.doctor.observe import line

                self.step_on_device.add(line())
        except Exception:
            pass

    def next_batch(self, first: bool):
        self.batches += 1
        self.rec.loops.work()

    def install(self):
        """Hook optimizers and loaders; returns the undo list (owner, name, original)."""
        from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

        register_optimizer_step_pre_hook(self.before_step)
        register_optimizer_step_post_hook(self.stepped)
        loader = torch.utils.data.DataLoader
        original = loader.__iter__
        steps = self

        @functools.wraps(original)
        def __iter__(self):
            return _Counted(original(self), steps)

        loader.__iter__ = __iter__
        return [(loader, "__iter__", original)]


class _Counted:
    def __init__(self, it, steps: Steps):
        self.it, self.steps, self.first = it, steps, True

    def __iter__(self):
        return self

    def __next__(self):
        first, self.first = self.first, False
        self.steps.next_batch(first)
        # The loader's own work (indexing samples, collating, pinning) runs on the CPU, outside the instruments:
        # watched, each sample's indexing went through their Python code, the largest part of the doctor's cost.
        from torch.utils._python_dispatch import _disable_current_modes

        with _disable_current_modes(), torch._C.DisableTorchFunction():  # nor grader.doctor.mismatch's mode
            return next(self.it)

    def __len__(self):
        return len(self.it)

    def __getattr__(self, name):
        return getattr(self.it, name)


def _step_on_device(optimizer) -> bool:
    """Adam's (and others') `step` counters on a device, where the step reads them back every time (they stay
    on the CPU unless the optimizer is capturable or fused: a checkpoint loaded with map_location=device)."""
    for group in optimizer.param_groups:
        if group.get("capturable") or group.get("fused"):
            continue
        for p in group["params"]:
            step = optimizer.state.get(p, {}).get("step")
            if isinstance(step, torch.Tensor) and step.device.type != "cpu":
                return True
    return False


def _check_state(optimizer, found: list) -> None:
    """Before a step: state (Adam's moments, momentum buffers) kept on another device than its parameter, which
    the step is about to mix (the model moved after the state was made or loaded)."""
    from grader.doctor.observe import line

    for group in optimizer.param_groups:
        for p in group["params"]:
            for key, value in optimizer.state.get(p, {}).items():
                if isinstance(value, torch.Tensor) and value.dim() > 0 and value.device != p.device:
                    found.append((line(), f"`{key}` of a parameter of {type(optimizer).__name__} is on "
                                          f"{value.device}, its parameter on {p.device}"))
                    return
