"""Assertions for hidden graders, with messages in the learner's terms.

A grader check calls the learner's code inside `running(...)` and states what it expects with `expect_*`;
any failure becomes a `GradeFailure` whose message names the bug and the fix, not a bare assertion."""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from contextlib import contextmanager, nullcontext
from typing import NamedTuple

import pytest
import torch

from grader.engine import instruments, legs, limits
from grader.guard import audit, integrity, learner_values
from grader.engine.instruments import Measurement, measure  # noqa: F401 (graders import them from here)
from grader.engine.submission import Submission, SubmissionError, describe_exception, exception_text


class GradeFailure(AssertionError):
    """A check failed; the message is shown to the learner as it is."""


def fail(message: str):
    raise GradeFailure(message)


def canonical(device: torch.device | str) -> torch.device:
    """'cuda' and 'cuda:0' name the same GPU in the grader's own code, where 0 stays current (learner code runs
    with another device current: other_device_current); compare devices in this form."""
    device = torch.device(device)
    if device.type != "cpu" and device.index is None:
        return torch.device(device.type, 0)
    return device


# How PyTorch words a mix of devices besides "same device" (fidelity cases recorded on CUDA): cuDNN compares tensor
# types, one of a device ("torch.cuda.FloatTensor") and one not; CUDA's sparse kernels name the device type.
_DEVICE_MIX = re.compile(
    r"same device|device type|to be on|Use Tensor\.cpu\(\)"
    r"|type \(torch\.\w+\.\w+Tensor\) and \w+ type \(torch\.\w+Tensor\)"
    r"|type \(torch\.\w+Tensor\) and \w+ type \(torch\.\w+\.\w+Tensor\)"
    r"|expected '\w+' to be (?:a )?\w+(?: tensor)?, but got (?:a )?CPU")


def is_device_error(exc: BaseException) -> bool:
    return isinstance(exc, (RuntimeError, TypeError)) and _DEVICE_MIX.search(str(exc)) is not None


_DEVICE_NAME = re.compile(r"\b(cpu|meta|[a-z]+:\d+)\b")


def devices_in(exc: BaseException) -> list[str]:
    """The devices a device error names ('cpu', 'cuda:0', 'sim:1'), in the order it names them, so that an
    explanation says where the tensor really was rather than where it usually is."""
    return list(dict.fromkeys(_DEVICE_NAME.findall(exception_text(exc))))


def cuda_call_note(exc: BaseException, device: torch.device) -> str:
    """What to add to the message of `exc` when code called torch.cuda's own functions (set_device, .cuda()) on an
    accelerator that is not CUDA; "" otherwise."""
    if device.type != "cuda" and ("cuda" in str(exc).lower()):
        return ("\ntorch.cuda serves NVIDIA GPUs only, and this code must run on any accelerator: "
                "torch.accelerator.set_device_index(i) does what torch.cuda.set_device(i) does, and "
                "torch.accelerator.current_accelerator() names the accelerator.")
    return ""


def is_out_of_memory(exc: BaseException) -> bool:
    return isinstance(exc, torch.OutOfMemoryError) or "can't allocate memory" in str(exc)


def simulator_limit(exc: BaseException) -> str | None:
    """What the simulator cannot do that `exc` ran into (PyTorch's Python backend API lacks a few hooks, which
    correct code can hit), in a sentence; None when `exc` is the learner's own error."""
    from grader.simulated import limit_message

    named = limit_message(exc)
    if named is None and isinstance(exc, (NotImplementedError, RuntimeError)) and "PrivateUse1" in str(exc):
        named = str(exc).strip().splitlines()[0]
    return named


@contextmanager
def running(what: str, submission: Submission,
            explain_device_error: str | Callable[[BaseException], str] | None = None):
    """Run learner code, with another device than the check's leg current (other_device_current). An exception it
    raises becomes a GradeFailure naming the call, the learner's line, and, for device errors, the explanation
    given (or made from the exception by a function, when what to say depends on the devices the error names).
    Afterwards, what the checks rely on must be untouched."""
    try:
        with other_device_current(LEG[0]), instruments.statistics_kept(LEG[0]):
            yield
    except (GradeFailure, SubmissionError):
        _verify_after_call()  # a planted hook first: it could have written this very failure
        raise
    except Exception as exc:
        _verify_after_call()
        if exception_text(exc).startswith("(a message"):  # its __str__ raises: nothing below may call it
            raise GradeFailure(f"{what} raised {describe_exception(exc, submission.filename)}") from None
        limit = simulator_limit(exc)
        if limit:  # said in the report; a grade with such a skip is not passed (Grade.passed), on every machine
            skip_leg(f"the simulated accelerator cannot run {what}: {limit}. Not a fault of your code: please "
                     "report it")
        message = f"{what} raised {describe_exception(exc, submission.filename)}"
        if explain_device_error and is_device_error(exc):
            explanation = explain_device_error(exc) if callable(explain_device_error) else explain_device_error
            message += f"\n{explanation}"
        if "device-side assert triggered" in str(exc):
            message += ("\nA device-side assert: a kernel on the device found a value out of range (a class label "
                        "not below the number of classes, an index past the end of an embedding or a tensor, a "
                        "probability below 0 or above 1). The device may report it only at the next point where "
                        "Python waits for it, so the line above may not "
                        "be the one at fault, and every later operation on that device fails the same way. The "
                        "cpu leg's error names the value.")
        if is_out_of_memory(exc):
            message += (f"\nYour code asked for more memory than the grader allows ({limits.describe_memory()}): "
                        "no exercise needs that much; look for a tensor far larger than the data.")
        raise GradeFailure(message) from None
    _verify_after_call()


def once_per_leg(run: Callable):
    """For a grader whose checks all read one run of the learner's program (a capstone's training, an
    evaluation): `run(submission, device)` runs it, once per leg, for the first check that asks; every later
    check of that file and device gets what it returned, or the GradeFailure it raised (each check then fails
    with the run's message). Keyed by file and device, since the submission fixture is made anew per check.
    What the run printed is printed again in each later check, so that a check that fails shows it too."""
    done: dict = {}

    @functools.wraps(run)
    def once(submission: Submission, device: torch.device):
        key = (submission.filename, str(device))
        if key not in done:
            with _printed() as printed:
                try:
                    done[key] = run(submission, device), printed
                except GradeFailure as exc:
                    done[key] = exc, printed
        else:
            sys.stdout.write("".join(done[key][1]))
        result = done[key][0]
        if isinstance(result, GradeFailure):
            raise result
        return result

    return once


class _Tee:
    """A stream that keeps a copy of what is written to it."""

    def __init__(self, stream, copy: list[str]):
        self._stream, self._copy = stream, copy

    def write(self, text):
        self._copy.append(str(text))
        return self._stream.write(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextmanager
def _printed():
    """What is printed inside the block (sys.stdout and sys.stderr, in the order written), as it is printed."""
    printed: list[str] = []
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Tee(out, printed), _Tee(err, printed)
    try:
        yield printed
    finally:
        sys.stdout, sys.stderr = out, err


class Forward(NamedTuple):
    """One forward pass of a module, as forward_passes() saw it."""

    device: torch.device | None  # of its first input (None: not a tensor)
    grad: bool  # whether autograd was on


@contextmanager
def forward_passes(of: torch.nn.Module | type = torch.nn.Module, first: Callable | None = None):
    """The forward passes run inside the block, a Forward each (where the learner's code really ran the model,
    whatever it returns): of the module `of`, or of every module of the class `of`, wherever the learner's code
    made it. `first(module)` is called before the first of them (to see the weights that training starts from)."""
    seen: list[Forward] = []

    def hook(module, args):
        if isinstance(of, type) and not isinstance(module, of):
            return
        if first is not None and not seen:
            first(module)
        seen.append(Forward(args[0].device if args and isinstance(args[0], torch.Tensor) else None,
                            torch.is_grad_enabled()))

    handle = (torch.nn.modules.module.register_module_forward_pre_hook(hook) if isinstance(of, type)
              else of.register_forward_pre_hook(hook))
    try:
        yield seen
    finally:
        handle.remove()


def _verify_after_call() -> None:
    """Before the check looks at what the learner's code returned: nothing planted, nothing replaced."""
    try:
        audit.verify()
        integrity.verify()
    except (audit.Tainted, integrity.IntegrityError) as exc:
        raise GradeFailure(str(exc)) from None


def skip_leg(reason: str, *, _granted=[]):  # noqa: B006 - the one list, held where learner code cannot reach it
    """Skip the current check on this leg, as the grader (a simulator limit): the one way a check may skip. The
    skips the grader raised during the current check are kept in this function's defaults (learner code may not
    read a function's defaults: grader.guard.audit_hooks; the plugin clears them before each check); any other skip
    (pytest's Skipped or unittest.SkipTest raised by learner code) fails the check."""
    try:
        pytest.skip(reason)
    except BaseException as exc:
        _granted.append(exc)
        raise


#: The device of the check that is running (its `device` parameter; None for the CPU-less pair checks and
#: outside a check), set by the plugin: running() keeps it from being the current device.
LEG: list = [None]


def other_device_current(device: torch.device | None):
    """Make a device of the leg's kind other than the leg's own the current one while learner code runs: on a :0
    leg :1 where it exists, on any other leg :0. An index-less 'cuda', .cuda(), torch.accelerator.synchronize() or
    torch.Event(device=...) that dropped the index then means another device than the leg's, on every leg that
    has another device (both simulated legs, and CUDA legs with two GPUs), instead of being right by luck.
    Nothing to do on the CPU, for an index-less device, or where the kind has one device (MPS, one GPU)."""
    if device is None or device.type == "cpu" or device.index is None:
        return nullcontext()
    accelerator = torch.accelerator.current_accelerator()
    if accelerator is None or accelerator.type != device.type:
        return nullcontext()
    other = 1 if device.index == 0 else 0
    if other >= torch.accelerator.device_count():
        return nullcontext()
    return torch.accelerator.device_index(other)


def device_in_virtual_time(device: torch.device, kernel_us: float):
    """For a check that judges the learner's own clock readings: on a simulated leg, inside, each kernel costs the
    device `kernel_us` on the virtual clock (grader.simulated.clock.kernels_cost); nothing changes on a real leg."""
    if legs.simulated_profile(device.type) is None:
        return nullcontext()
    return sys.modules["grader.simulated.clock"].kernels_cost(kernel_us)


def virtual_host_clock(device: torch.device) -> Callable[[], float] | None:
    """On a simulated leg, the simulator's host clock in seconds (each read costs the host a query, so that a loop
    waiting for it ends); None on a real leg, whose clocks are the machine's."""
    if legs.simulated_profile(device.type) is None:
        return None
    return sys.modules["grader.simulated.clock"].read_host_clock


def keep_busy(device: torch.device) -> None:
    """Queue work that the device is still running when Python goes on (about 0.1 s on a GPU; the simulated
    device always runs behind the host)."""
    if device.type == "cuda":
        with torch.cuda.device(device):  # _sleep runs on the current device, which learner code's is not
            torch.cuda._sleep(200_000_000)
    elif device.type != "cpu":
        x = torch.ones(64, device=device)
        for _ in range(64):
            x = x * 1.0


def spin(device: torch.device, ms: float) -> None:
    """Queue, on the current stream of ``device``, a kernel that keeps that stream busy at least ``ms`` milliseconds:
    ``_sleep`` of the device module, in clock cycles counted at 2 GHz (no NVIDIA data-centre GPU clocks faster; the
    simulator counts 1.5 GHz on its virtual clock). A race between streams shows on a GPU only while the stream
    that writes is still busy; inside a grader's module it makes the race show on every draw."""
    with torch.accelerator.device_index(device.index):  # _sleep runs on the current device
        torch.get_device_module(device.type)._sleep(int(ms * 2_000_000))


def expect_tensor(value, what: str) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        got = "None (is a return statement missing?)" if value is None else f"a {type(value).__name__}"
        fail(f"{what} should be a tensor, but it is {got}.")
    try:
        return learner_values.vetted(value, what)  # a subclass could answer for itself
    except learner_values.UntrustedValue as exc:
        fail(str(exc))


def expect_device(tensor: torch.Tensor, device: torch.device | str, what: str, fix: str):
    expect_tensor(tensor, what)
    if canonical(tensor.device) != canonical(device):
        fail(f"{what} is on {tensor.device}, but it should be on {device}: {fix}")


@contextmanager
def no_round_trips(device: torch.device, what: str):
    """Fail if the code inside makes the host wait for the device: a copy to the CPU, a read of a device value
    from Python (`.item()`, `int(t)`, `if t:` ...), a synchronize(), or an operation whose result is sized by
    device data (nonzero, a boolean mask: the host must read the count). Counted by the same instruments on
    every leg (see grader.engine.instruments), so the CPU, CUDA, MPS and the simulator agree."""
    with measure(device) as m:
        yield m
    if m.waits:
        fail(f"{what} made {m.describe_waits()}: each one makes Python wait for {device}. Keep the work on "
             "the input's device instead of moving data back and forth.")
    if m.data_dependent and device.type != "cpu":  # on the CPU the size is known where it is computed
        fail(f"{what} ran {m.describe_data_dependent()} on {device}: each sizes its result by the data on the "
             "device (a boolean mask or nonzero()), so Python waits for the device to read the size. Keep the "
             "shapes fixed: multiply by the mask, or use torch.where, instead of selecting with it.")


def refuse_unawaited_reads(m: Measurement, who: str, message: str | None = None) -> None:
    """Fail where `who` read a non_blocking copy to the CPU that nothing waited for (with `message`, where the
    exercise has words of its own for it). On a GPU a copy of a few bytes often lands before the host reads it, so
    the race is refused on every leg, not only where the simulator shows it (it leaves such a buffer NaN): one
    verdict on every machine."""
    if m.unawaited_d2h:
        fail(message or (f"{who} read a value from a non_blocking copy to the CPU that nothing waited for: such a "
                         "copy returns before its values have arrived, so what is read may be anything (on a GPU it "
                         "is usually right by luck). Read the device tensor itself (.item() waits for it), or "
                         "synchronize before reading the copy."))


def within(got: float, want: float, tol: float) -> bool:
    """|got - want| <= tol for Python numbers, false for NaN (a check written `abs(got - want) > tol: fail`
    lets NaN through, since every comparison with NaN is false)."""
    return abs(got - want) <= tol


def expect_close(actual: torch.Tensor, expected: torch.Tensor, what: str, atol=1e-5, rtol=1e-4):
    actual = expect_tensor(actual, what).detach().cpu()
    expected = expected.detach().cpu()
    if actual.shape != expected.shape:
        fail(f"{what} has shape {tuple(actual.shape)}, expected {tuple(expected.shape)}.")
    if not torch.allclose(actual.to(expected.dtype), expected, atol=atol, rtol=rtol):
        worst = (actual.to(expected.dtype) - expected).abs().max().item()
        fail(f"{what} has the wrong values (largest difference {worst:.3g}): the fix changed the result.")
