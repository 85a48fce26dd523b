"""Attacks on the grade by a learner who has read the grader's source (grader/INTEGRITY.md's threat model).

Each test grades a real file through the real engine (grader.engine.runner, warm workers): the trick must not pass,
must say what was found, and the next grading must be unaffected. The same attacks are tried with the bug
still there (a wrong body), since that is what a forger wants to pass. Layers: the judge (every check reports
once), skips, what learner code leaves behind (grader.guard.audit), threads, returned values (grader.guard.learner_values),
the checks' own globals and clocks."""

import dataclasses
import re
import textwrap

import pytest

from grader.engine import runner
from grader.catalog import course
from grader.engine.judging import judge

EX = dataclasses.replace(course.get("masked_mean"), timeout=6)
# The bug itself: the mean over every position, padding included. A forgery must make this pass.
WRONG = """
import torch

def _wrong(x, lengths):
    return x.mean(1)
"""


def grade(tmp_path, body: str, device="cpu", ex=EX):
    f = tmp_path / "attempt.py"
    f.write_text(WRONG + textwrap.dedent(body))
    return runner.grade(ex, f, device=device)


def refused(g, *words) -> str:
    assert not g.passed, "the forgery passed"
    text = "\n".join(r.message for r in g.results)
    assert any(w in text for w in words), text
    return text


def test_the_wrong_body_fails_and_the_count_of_checks_is_known(tmp_path):
    g = grade(tmp_path, "masked_mean = _wrong\n")
    assert not g.passed and len(g.results) == 4


def test_keyboard_interrupt_fails_its_check_and_the_others_still_run(tmp_path):
    g = grade(tmp_path, """
        def masked_mean(x, lengths):
            raise KeyboardInterrupt
    """)
    refused(g, "KeyboardInterrupt")
    assert len(g.results) == 4  # pytest went on to the other checks


def test_an_exception_whose_message_raises_is_a_failure_not_an_internal_error(tmp_path):
    # str() of an exception whose only argument is itself recurses until RecursionError: pytest's own report
    # would call it and end the whole run with an internal error
    g = grade(tmp_path, """
        def masked_mean(x, lengths):
            problem = RuntimeError()
            problem.args = (problem,)
            raise problem
    """)
    refused(g, "RuntimeError")
    assert {r.outcome for r in g.results} == {"failed"} and len(g.results) == 4


def test_a_recursion_limit_set_just_above_the_depth(tmp_path):
    g = grade(tmp_path, """
        import sys
        import traceback

        def masked_mean(x, lengths):
            sys.setrecursionlimit(len(traceback.extract_stack()) + 12)
            return _wrong(x, lengths)
    """)
    refused(g, "recursion limit", "setrecursionlimit")


@pytest.mark.parametrize("raise_it", [
    "import unittest\n        raise unittest.SkipTest('fine')",
])
def test_a_skip_raised_by_learner_code_fails(tmp_path, raise_it):
    g = grade(tmp_path, f"""
        def masked_mean(x, lengths):
            {raise_it}
    """)
    refused(g, "skipped this check", "unittest")
    assert not any(r.outcome == "skipped" for r in g.results)


def test_a_skip_raised_at_import_fails(tmp_path):
    g = grade(tmp_path, """
        import unittest
        raise unittest.SkipTest("not today")
    """)
    assert not g.passed and not any(r.outcome == "skipped" for r in g.results)


def test_a_made_up_simulator_limit_does_not_pass(tmp_path):
    # Text that looks like a simulator limit, raised on the accelerator legs only: such a skip never makes a pass
    g = grade(tmp_path, """
        def masked_mean(x, lengths):
            if x.device.type != "cpu":
                raise NotImplementedError("Could not run 'aten::foo' with arguments from the 'PrivateUse1' backend")
            return _wrong(x, lengths)
    """, device="sim")
    assert not g.passed


def test_work_on_a_helper_thread_is_refused(tmp_path):
    # the host read happens on another thread, where the grader's counting mode is not active
    g = grade(tmp_path, """
        import threading

        def masked_mean(x, lengths):
            out = {}
            t = threading.Thread(target=lambda: out.update(n=int(lengths.max())))
            t.start()
            t.join()
            return _wrong(x, lengths)
    """)
    refused(g, "thread")  # the source policy refuses the import; grader.guard.audit the start


def test_a_timer_left_to_fire_later_is_refused(tmp_path):
    g = grade(tmp_path, """
        import threading
        import torch

        def masked_mean(x, lengths):
            threading.Timer(0.01, torch.manual_seed, (0,)).start()
            return _wrong(x, lengths)
    """)
    refused(g, "thread")  # the source policy refuses the import; grader.guard.audit the start


def test_a_pool_of_threads_is_refused(tmp_path):
    g = grade(tmp_path, """
        from concurrent.futures import ThreadPoolExecutor

        def masked_mean(x, lengths):
            with ThreadPoolExecutor(2) as pool:
                return pool.submit(_wrong, x, lengths).result()
    """)
    refused(g, "thread")  # the source policy refuses the import; grader.guard.audit the start


def test_a_tensor_subclass_that_answers_for_itself(tmp_path):
    # No special method: plain methods of a Tensor subclass that the check calls on the result (detach, cpu)
    # hand back the right answer, computed here, while the function's own result is still the wrong one
    g = grade(tmp_path, """
        import torch

        class Answer(torch.Tensor):
            def detach(self):
                return self.right

        def masked_mean(x, lengths):
            T = x.shape[1]
            keep = (torch.arange(T, device=x.device)[None, :] < lengths[:, None]).to(x.dtype).unsqueeze(-1)
            out = _wrong(x, lengths).as_subclass(Answer)
            out.right = ((x * keep).sum(1) / lengths[:, None].to(x.dtype)).as_subclass(torch.Tensor)
            return out
    """)
    refused(g, "subclass of torch.Tensor")


def test_a_float_that_multiplies_to_zero(tmp_path):
    g = grade(tmp_path, """
        import torch

        class Zero(float):
            def __mul__(self, other):
                return 0.0
            __rmul__ = __mul__

            def __sub__(self, other):
                return 0.0
            __rsub__ = __sub__

        def validation_loss(model, batches):
            return Zero(123.0)
    """, ex=course.get("validation_loss"))
    refused(g, "poses as a number", "special method")  # refused by the policy, or by the vetting of results


def test_replacing_a_helper_of_the_hidden_check(tmp_path):
    g = grade(tmp_path, """
        import test_masked_mean

        test_masked_mean.fail = lambda message: None

        def masked_mean(x, lengths):
            return _wrong(x, lengths)
    """)
    refused(g, "test_masked_mean", "check module")


def test_a_garbage_collector_callback(tmp_path):
    g = grade(tmp_path, """
        import gc

        def _later(phase, info):
            pass

        def masked_mean(x, lengths):
            gc.callbacks.append(_later)
            return _wrong(x, lengths)
    """)
    refused(g, "callbacks")


TIME_MATMUL_WRONG = """
import time
import torch

def time_matmul(a, b, repeats=10, {signature}):
    a @ b
    start = {clock}
    for _ in range(repeats):
        c = a @ b
    return ({clock} - start) / repeats
"""


@pytest.mark.parametrize("signature, clock", [
    ("_unused=None", "time.clock_gettime(time.CLOCK_MONOTONIC)"),
    ("clock=time.perf_counter", "clock()"),
], ids=["clock_gettime", "clock_in_a_default_argument"])
def test_a_clock_the_grader_did_not_watch(tmp_path, signature, clock):
    # No synchronisation: on an accelerator these time the launches. Only the clock differs from the exercise.
    f = tmp_path / "time_matmul.py"
    f.write_text(TIME_MATMUL_WRONG.format(signature=signature, clock=clock))
    g = runner.grade(course.get("time_matmul"), f, device="sim")
    assert not g.passed, [r.message for r in g.results]


# Launches timed by a clock no grader can wrap (/proc, os.times(), torch's profiler): the submissions
# tests/submissions/time_matmul/wrong_unwatched_clock_*.py, graded by tests/test_course.py and on GPUs.


def test_after_the_attacks_the_next_grading_is_unaffected(tmp_path):
    # One daemon served every attack above: the reference fix still passes on every leg.
    ex = course.get("masked_mean")
    assert runner.grade(ex, ex.solution_file).passed


# ---------------------------------------------------------------------------------------------------------
# The judge: what it accepts from a worker
# ---------------------------------------------------------------------------------------------------------
TOKEN = "t" * 32


def _line(**rec):
    import json

    return json.dumps({**rec, "token": TOKEN})


def _judge(lines, code=77):
    import os

    status = (code & 0xff) << 8  # a normal exit with `code`
    assert os.waitstatus_to_exitcode(status) == code
    return judge(lines, TOKEN, 77, status, None, 0, "", {"spec": "cpu"})["results"]


def test_the_judge_fails_checks_that_never_reported():
    lines = [_line(collected=[["a", "cpu"], ["b", "cpu"]]),
             _line(check="a", leg="cpu", outcome="passed", message="", seconds=0), _line(end=0)]
    results = _judge(lines)
    assert [(r["check"], r["outcome"]) for r in results] == [("a", "passed"), ("b", "failed")]
    assert "never reported" in results[1]["message"]


def test_the_judge_refuses_an_unknown_outcome_and_a_second_report():
    lines = [_line(collected=[["a", "cpu"]]),
             _line(check="a", leg="cpu", outcome="xpassed", message="", seconds=0),
             _line(check="a", leg="cpu", outcome="passed", message="", seconds=0),
             _line(check="a", leg="cpu", outcome="passed", message="", seconds=0), _line(end=0)]
    results = _judge(lines)
    assert any("did not send" in r["message"] for r in results)
    assert [r["outcome"] for r in results if r["check"] == "a"] == ["passed"]
    assert any(r["outcome"] == "failed" for r in results)


def test_a_stopped_grading_fails_the_rest_with_the_reason_given_once():
    lines = [_line(collected=[["a", "cpu"], ["b", "cpu"]]),
             _line(check="a", leg="cpu", outcome="failed", message="your code left a thread running", seconds=0),
             _line(stopped="your code left a thread running")]
    results = _judge(lines, code=0)
    assert [r["outcome"] for r in results] == ["failed", "failed"]
    assert "earlier check" in results[1]["message"]
    assert not any("ended the grading process" in r["message"] for r in results)


# ---------------------------------------------------------------------------------------------------------
# What learner code may leave behind (grader.guard.audit), in this process: the scan refuses most of these
# constructs before a file runs, so the run-time layer is tried here on its own
# ---------------------------------------------------------------------------------------------------------
@pytest.fixture
def interpreter():
    from grader.guard import audit

    return audit.Interpreter()


def test_a_clean_interpreter_has_nothing_to_say(interpreter):
    assert interpreter.changes() == []


def test_a_trace_and_a_profile_function(interpreter):
    import sys

    sys.settrace(lambda *a: None)
    try:
        assert any("trace function" in c for c in interpreter.changes())
    finally:
        sys.settrace(None)
    sys.setprofile(lambda *a: None)
    try:
        assert any("profile function" in c for c in interpreter.changes())
    finally:
        sys.setprofile(None)


def test_a_gc_callback_and_a_signal_handler(interpreter):
    import gc
    import signal

    def callback(phase, info):
        pass

    gc.callbacks.append(callback)
    try:
        assert any("gc.callbacks" in c for c in interpreter.changes())
    finally:
        gc.callbacks.remove(callback)
    before = signal.signal(signal.SIGUSR1, lambda *a: None)
    try:
        assert any("SIGUSR1" in c for c in interpreter.changes())
    finally:
        signal.signal(signal.SIGUSR1, before)
    assert interpreter.changes() == []


def test_a_torch_function_mode_left_on_the_stack(interpreter):
    from torch.overrides import TorchFunctionMode

    class Agree(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    mode = Agree()
    mode.__enter__()
    try:
        assert any("function mode active (Agree)" in c for c in interpreter.changes())
    finally:
        mode.__exit__(None, None, None)
    assert interpreter.changes() == []


def test_the_recursion_limit_is_put_back(interpreter):
    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + 7)
    assert any("recursion limit" in c for c in interpreter.changes())
    assert sys.getrecursionlimit() == limit


GUARDED_THREADS = """
import sys, threading
from grader.guard import audit

audit.interpreter = audit.Interpreter()
audit.guard_threads()
learner = {}
exec(compile("import threading\\ndef start(target):\\n    threading.Thread(target=target).start()\\n", LEARNER, "exec"),
     learner)
try:
    learner["start"](lambda: None)
    print("started")
except audit.ThreadRefused as exc:
    print("refused:", exc)
# a thread that started some other way, running the learner's code, is found when the call returns
import _thread
stop = threading.Event()
exec(compile("def loop(stop):\\n    stop.wait(30)\\n", LEARNER, "exec"), learner)
_thread.start_new_thread(learner["loop"], (stop,))
import time
time.sleep(0.2)
print("changes:", audit.interpreter.changes())
stop.set()
# torch's own threads go on: a DataLoader that pins starts its pin-memory thread from torch's code
import torch
from torch.utils.data import DataLoader, TensorDataset
exec(compile("def batches(loader):\\n    return [b for b in loader]\\n", LEARNER, "exec"), learner)
loader = DataLoader(TensorDataset(torch.ones(8, 2)), batch_size=4, num_workers=1)
print("batches:", len(learner["batches"](loader)))
"""


def test_threads_of_the_learner_are_refused_and_found(tmp_path):
    import subprocess
    import sys

    # code compiled under a path outside torch, the grader and the standard library stands for the learner's
    script = GUARDED_THREADS.replace("LEARNER", repr(str(tmp_path / "attempt.py")))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "refused: the grader does not let your code start threads" in out.stdout
    assert "left a thread running" in out.stdout.split("changes:")[1]
    assert "batches: 2" in out.stdout


# ---------------------------------------------------------------------------------------------------------
# Issue 26's second red team (wt-red19): what the policy allows and reaches the grader indirectly
# ---------------------------------------------------------------------------------------------------------
def _grade_file(tmp_path, exercise: str, text: str, name="attempt.py"):
    f = tmp_path / name
    f.write_text(textwrap.dedent(text))
    return runner.grade(course.get(exercise), f)


def _leg(g, check: str, leg: str):
    return next(r for r in g.results if r.check == check and r.leg == leg)


@pytest.mark.parametrize("write", ["lengths.fill_(x.shape[1])", "lengths.numpy()[:] = x.shape[1]"],
                         ids=["in_place", "through_numpy"])
def test_writing_into_the_tensors_the_grader_keeps_for_its_reference(tmp_path, write):
    # On the CPU leg x.to("cpu") is x: the grader's reference, computed after the call, read the lengths this
    # call set to "every sequence is full", and agreed with the mean over the padding (the bug). .numpy()
    # writes without bumping the version counter.
    g = grade(tmp_path, f"""
        def masked_mean(x, lengths):
            if x.device.type == "cpu":
                {write}
            return _wrong(x, lengths)
    """)
    refused(g, "in place")
    assert _leg(g, "test_ignores_the_padding", "cpu").outcome == "failed"


PREDICT_ZEROES_A_BATCH = """
import torch

@torch.no_grad()
def predict(model, batches, device):
    model.to(device).eval()
    out = torch.cat([model(x.to(device)).argmax(dim=1) for x in batches])
    batches[-1].zero_()  # after its use: the caller's list still holds this tensor
    return out
"""

TRAIN_STANDARDISES_IN_PLACE = """
import torch
import torch.nn.functional as F

def train(model, loader, epochs, device):
    if hasattr(loader, "dataset"):
        x, _ = loader.dataset.tensors
        x.sub_(x.mean(0)).div_(x.std(0))  # the caller's data, standardised where it lies
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    history = []
    for _ in range(epochs):
        model.train()
        losses = []
        for x, y in loader:
            loss = F.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        history.append(sum(losses) / len(losses))
    return history
"""


@pytest.mark.parametrize("exercise, text, where", [
    ("cuda_only_fast_path", PREDICT_ZEROES_A_BATCH, r"predict\(\) changed argument 2\[\d\] in place"),
    # The reference training reads the same loader after the call: standardised in place, it agreed on every leg.
    ("train_anywhere", TRAIN_STANDARDISES_IN_PLACE, r"train\(\) changed argument 2\.dataset\.tensors\[0\] in place"),
], ids=["inside_a_list", "inside_a_loader"])
def test_a_write_into_a_cpu_tensor_given_inside_a_container_is_found(tmp_path, exercise, text, where):
    f = tmp_path / "attempt.py"
    f.write_text(text)
    g = runner.grade(course.get(exercise), f, device="cpu")  # on the CPU leg the reference reads those tensors
    assert not g.passed
    assert re.search(where, "\n".join(r.message for r in g.failures)), [r.message for r in g.failures]


def test_the_cpu_tensors_given_are_found_at_any_depth_and_in_container_subclasses():
    import collections

    import torch

    from grader.guard.learner_values import CpuArguments

    Pair = collections.namedtuple("Pair", "x y")
    deep, state, pair = torch.ones(2), collections.OrderedDict(w=torch.ones(3)), Pair(torch.ones(1), 7)
    cycle = [torch.ones(4)]
    cycle.append(cycle)
    batch = {"a": [({"b": [(deep,)]},)]}  # seven containers down
    given = CpuArguments((batch, state, pair, cycle), {})
    for tensor, where in [(deep, "argument 1['a'][0][0]['b'][0][0]"), (state["w"], "argument 2['w']"),
                          (pair.x, "argument 3[0]"), (cycle[0], "argument 4[0]")]:
        assert given.changed() is None
        before = tensor.clone()
        tensor.add_(1)
        assert given.changed() == where
        tensor.copy_(before)


VALIDATION_LOSS_PEAK_RESET = """
import torch
import torch.nn.functional as F

def validation_loss(model, batches):
    # the bug is still there: the running total keeps every batch's graph alive while the loop runs
    model.eval()
    total = 0.0
    for x, y in batches:
        total = total + F.cross_entropy(model(x), y)
    value = (total / len(batches)).item()
    device = batches[0][0].device
    del total
    if device.type != "cpu":
        torch.get_device_module(device).reset_peak_memory_stats(device)  # the statistic the grader reads
    return value
"""


def test_a_reset_of_the_peak_memory_statistic_hides_no_growth(tmp_path):
    g = _grade_file(tmp_path, "validation_loss", VALIDATION_LOSS_PEAK_RESET)
    assert not g.passed
    assert {_leg(g, "test_memory_does_not_grow_with_the_batches", leg).outcome
            for leg in ("sim:0", "sim:1")} == {"failed"}


STALE_OPTIMIZER_MODEL = """
import torch
import torch.nn.functional as F
from torch import nn


class Classifier(nn.Module):
    def __init__(self, in_features, num_classes):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_features, 32), nn.ReLU())
        self.head = nn.Linear(32, num_classes)

    def forward(self, x):
        return self.head(self.body(x))


def build(in_features, num_classes, device, lr=0.1):
    # a bug stale_optimizer's grader draws its lr to catch: lr is ignored (always 0.1)
    model = Classifier(in_features, num_classes).to(device)
    return model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def train_step(model, optimizer, x, y):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach()
"""

PLANTED = {
    # the grader draws lr with random.choice (never 0.1): make it draw 0.1 (a module the checks use)
    "steers_the_draws": ("import random\nrandom.choice = lambda seq: 0.1\n", "random.choice"),
    # the reference is copy.deepcopy(model): without the copy it is the learner's own model
    "no_copy": ("import copy\ncopy.deepcopy = lambda obj, memo=None: obj\n", "copy.deepcopy"),
    # runs before every optimizer step of the process, the reference optimizer's too
    "global_optimizer_hook": ("from torch.optim import optimizer as o\n"
                              "def _same_lr(opt, args, kwargs):\n"
                              "    for group in opt.param_groups:\n"
                              "        group['lr'] = 0.1\n"
                              "o.register_optimizer_step_pre_hook(_same_lr)\n", "register_optimizer_step"),
    # entered and never left: rewrites what every later backward reads, the reference's included
    "saved_tensors_hooks": ("import torch\n"
                            "torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t).__enter__()\n",
                            "saved-tensors hooks"),
}


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_what_the_reference_training_relies_on(tmp_path, kind):
    plant, words = PLANTED[kind]
    g = _grade_file(tmp_path, "stale_optimizer", plant + STALE_OPTIMIZER_MODEL)
    refused(g, words)
    assert not any(r.outcome == "passed" for r in g.results)


def test_the_run_time_layers_find_a_global_hook_and_a_replaced_module_function(interpreter, monkeypatch):
    # the policy refuses the names used here: the audit and the baseline are tried on their own
    import copy
    import types

    import torch
    from torch.optim import optimizer as o

    from grader.guard import integrity

    handle = o.register_optimizer_step_post_hook(lambda *a: None)
    try:
        assert any("global optimizer hook" in c for c in interpreter.changes())
    finally:
        handle.remove()
    hooks = torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t)
    hooks.__enter__()
    try:
        assert any("saved-tensors hooks" in c for c in interpreter.changes())
    finally:
        hooks.__exit__(None, None, None)
    assert interpreter.changes() == []
    checks = types.ModuleType("test_uses_copy")
    checks.copy = copy
    baseline = integrity.Baseline(check_modules=[checks])
    monkeypatch.setattr(copy, "deepcopy", lambda obj, memo=None: obj)
    monkeypatch.setattr(torch.nn.Linear, "forward", lambda self, x: x)
    assert {"copy.deepcopy", "torch.nn.Linear.forward"} <= set(baseline.changed())


def test_after_the_second_red_team_the_next_gradings_are_unaffected(tmp_path):
    for name in ("stale_optimizer", "time_matmul", "validation_loss"):
        ex = course.get(name)
        assert runner.grade(ex, ex.solution_file).passed, name


READ_BELOW_THE_DISPATCHER = {
    "torch_save": ("buffer = io.BytesIO()\n"
                   "torch.save(acc, buffer)\n"
                   "buffer.seek(0)\n"
                   "value = float(torch.load(buffer, map_location='cpu'))", "torch.save"),
    "storage_cpu": ("host = acc.reshape(1).float().untyped_storage().cpu()\n"
                    "value = float(torch.tensor(host.tolist(), dtype=torch.uint8).view(torch.float32)[0])",
                    "untyped_storage().cpu()"),
}


@pytest.mark.parametrize("how", sorted(READ_BELOW_THE_DISPATCHER))
def test_reads_of_the_device_below_the_dispatcher(tmp_path, how):
    # One read per class, each through torch.save and torch.load back, or the storage copied to the host: below
    # the dispatcher, the copies were not counted and "one round trip" passed with six
    read, words = READ_BELOW_THE_DISPATCHER[how]
    g = _grade_file(tmp_path, "per_class_accuracy", (
        "import io\nimport torch\n\n"
        "def per_class_accuracy(logits, labels, num_classes):\n"
        "    correct = (logits.argmax(dim=1) == labels).to(logits.dtype)\n"
        "    out = []\n"
        "    for c in range(num_classes):\n"
        "        mask = (labels == c).to(logits.dtype)\n"
        "        acc = (correct * mask).sum() / mask.sum().clamp(min=1)\n"
        + textwrap.indent(read, " " * 8) + "\n"
        "        out.append(value)\n"
        "    return out\n"))
    text = refused(g, words)
    assert "syntax error" not in text
    assert {_leg(g, "test_one_round_trip", leg).outcome for leg in ("sim:0", "sim:1")} == {"failed"}
