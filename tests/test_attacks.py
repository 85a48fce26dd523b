"""Attacks on the grade by a learner who has read the grader's source (grader/INTEGRITY.md's threat model).

Each test grades a real file through the real engine (grader.runner, warm workers): the trick must not pass,
must say what was found, and the next grading must be unaffected. The same attacks are tried with the bug
still there (a wrong body), since that is what a forger wants to pass. Layers: the judge (every check reports
once), skips, what learner code leaves behind (grader.audit), threads, returned values (grader.learner_values),
the checks' own globals and clocks."""

import dataclasses
import textwrap

import pytest

from grader import course, runner
from grader.workers import judge

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
    refused(g, "thread")  # the source policy refuses the import; grader.audit the start


def test_a_timer_left_to_fire_later_is_refused(tmp_path):
    g = grade(tmp_path, """
        import threading
        import torch

        def masked_mean(x, lengths):
            threading.Timer(0.01, torch.manual_seed, (0,)).start()
            return _wrong(x, lengths)
    """)
    refused(g, "thread")  # the source policy refuses the import; grader.audit the start


def test_a_pool_of_threads_is_refused(tmp_path):
    g = grade(tmp_path, """
        from concurrent.futures import ThreadPoolExecutor

        def masked_mean(x, lengths):
            with ThreadPoolExecutor(2) as pool:
                return pool.submit(_wrong, x, lengths).result()
    """)
    refused(g, "thread")  # the source policy refuses the import; grader.audit the start


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
# What learner code may leave behind (grader.audit), in this process: the scan refuses most of these
# constructs before a file runs, so the run-time layer is tried here on its own
# ---------------------------------------------------------------------------------------------------------
@pytest.fixture
def interpreter():
    from grader import audit

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
from grader import audit

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
