"""Issue 40's in-process attacks: text the source policy never parsed that becomes code, modules reached under
plain names, the grader's own state rebound, the judge's secret read from memory (grader/INTEGRITY.md).

Each submission passes the source policy (asserted), keeps the bug (masked_mean over every position), and would
pass if its trick worked: the payload, hidden as hex, binds a right masked_mean to the file's name after the
scan. Each is graded through the real engine (grader.engine.runner, warm workers) and must fail with a message that
names what was refused; the honest fixes and the next grading are unaffected."""

import dataclasses
import pickle
import textwrap

import pytest

from grader.engine import runner
from grader.guard import integrity
from grader.catalog import course

EX = dataclasses.replace(course.get("masked_mean"), timeout=6)
WRONG = """
import torch


def _wrong(x, lengths):
    return x.mean(1)


masked_mean = _wrong
"""
# A right masked_mean, bound to the submission's own name by walking the stack to the file's globals.
PAYLOAD = """
import sys
import torch


def masked_mean(x, lengths):
    mask = torch.arange(x.shape[1], device=x.device)[None, :] < lengths.to(x.device)[:, None]
    m = mask.unsqueeze(-1).to(x.dtype)
    return (x * m).sum(1) / m.sum(1)


f = sys._getframe()
while f is not None and "_wrong" not in f.f_globals:
    f = f.f_back
f.f_globals["masked_mean"] = masked_mean
"""


class _Exec:
    def __reduce__(self):
        return exec, (PAYLOAD,)


PICKLE_HEX = pickle.dumps(_Exec(), protocol=2).hex()
PAYLOAD_HEX = PAYLOAD.encode().hex()


def grade(tmp_path, body: str, reach: bool = False):
    source = WRONG + (REACH if reach else "") + textwrap.dedent(body)
    assert integrity.scan(source) == [], "the attack must get past the source policy"
    f = tmp_path / "attempt.py"
    f.write_text(source)
    return runner.grade(EX, f, device="cpu")


def refused(g, *words) -> str:
    assert not g.passed, "the forgery passed"
    text = "\n".join(r.message for r in g.results)
    assert any(w in text for w in words), text
    assert "grader's own machinery" not in text
    return text


@pytest.mark.parametrize("body, words", [
    (f"""
    import io
    try:
        torch.load(io.BytesIO(bytes.fromhex("{PICKLE_HEX}")), weights_only=False)
    except Exception:
        pass  # what was refused still fails the grade
    """, ["unpickling builtins.exec"]),
    (f"""
    import io
    import numpy as np
    np.load(io.BytesIO(bytes.fromhex("{PICKLE_HEX}")), allow_pickle=True)
    """, ["unpickling builtins.exec"]),
    (f"""
    from multiprocessing.reduction import ForkingPickler
    ForkingPickler.loads(bytes.fromhex("{PICKLE_HEX}"))
    """, ["unpickling builtins.exec"]),
    (f"""
    import functools


    @functools.singledispatch
    def _describe(x):
        return "a value"


    _annotation = 'exec(bytes.fromhex("{PAYLOAD_HEX}").decode()) or int'


    def _an_int(x: _annotation):
        return "an int"


    _describe.register(_an_int)  # evaluates the annotation, a string only at run time
    """, ["compiling text into code", "running a code object"]),
], ids=["torch_load", "numpy_allow_pickle", "forking_pickler", "singledispatch_annotation"])
def test_text_the_policy_never_parsed_does_not_run(tmp_path, body, words):
    text = refused(grade(tmp_path, body), *words)
    assert "the grader does not run" in text or "does not run" in text


# The builtins and the grader's modules, reached through the listing of a module under a plain name
REACH = """
import sys

_s = sys
for _k, _v in vars(_s).items():
    if _k == "mod" + "ules":
        _modules = _v
for _k, _v in vars(_modules["builtins"]).items():
    if _k == "set" + "attr":
        _set = _v
    if _k == "get" + "attr":
        _get = _v
"""


def test_a_heap_walk_through_gc_under_a_plain_name_is_refused(tmp_path):
    g = grade(tmp_path, reach=True, body="""
    for _k, _v in vars(_modules["gc"]).items():
        if _k == "get_" + "referents":
            _torch_dict = _v(torch)[0]  # torch's own writable namespace
            _torch_dict["allclose"] = lambda *a, **k: True
    """)
    refused(g, "walking the heap")


def test_rebinding_the_baseline_global_and_then_torch_is_found(tmp_path):
    g = grade(tmp_path, reach=True, body="""
    _set(_modules["grader.guard.integrity"], "base" + "line", None)  # the compare was off with it
    _set(torch, "allclose", lambda *a, **k: True)
    """)
    text = refused(g, "grader.guard.integrity.baseline")
    assert "torch.allclose" in text


def test_the_plugin_hooks_state_can_be_neither_read_nor_replaced(tmp_path):
    g = grade(tmp_path, reach=True, body="""
    _plugin = _modules["grader.engine.plugin"]
    try:
        _held = _get(_get(_plugin, "pytest_runtest_makereport"), "__def" + "aults__")
    except Exception as e:
        print("read:", e)
    _get(_plugin, "_hold")(send=print, changed=list)  # no compare, and records to stdout
    """)
    text = refused(g, "changing what the grader holds", "reading __defaults__")
    assert "reading __defaults__" in text or all(r.outcome == "failed" for r in g.results)


def test_reading_the_process_memory_for_the_token_is_refused(tmp_path):
    g = grade(tmp_path, """
    with open("/proc/self/mem", "rb") as _mem:
        _mem.read(1)
    """)
    # the kernel's read allow-list (no /proc: tests/test_confinement.py) or, where it is missing, the guard
    refused(g, "tried to open /proc/self/mem", "opening /proc/self/mem")


# Every object reachable from pytest.mark and the worker's module by attributes, containers, closures and bound methods (what needs
# no audited route): a 32-hex string may be the channel's token, a function named send the channel itself
# (pytest.mark._config leads to pytest's config, its plugins and the channel's reporter). Forged records for
# every check, then the real channel silenced (its descriptors pointed at /dev/null), so that the worker ends
# normally with the exit code the zygote chose (before this issue, every forged record was accepted).
TOKEN_HUNT = """
import collections
import json
import os
import re

_seen, _tokens, _senders = set(), set(), []
_todo = collections.deque([_get(_modules["pytest"], "mark"), _modules["__main__"]])
_function = type(_wrong)
while _todo and len(_seen) < 100000 and not _senders:
    _o = _todo.popleft()
    if id(_o) in _seen:
        continue
    _seen.add(id(_o))
    try:
        _t = type(_o)
        if _t is str:
            if len(_o) == 32 and re.fullmatch("[0-9a-f]+", _o):
                _tokens.add(_o)
        elif _t is dict:
            _todo += list(_o.values())
        elif _t in (list, tuple, set, frozenset):
            _todo += list(_o)
        elif _t is _function:
            if _o.__qualname__ == "_run.<locals>.send":  # the worker's channel (grader.engine.workers)
                _senders.append(_o)
            _todo += [_get(_o, "__clo" + "sure__"), _get(_o, "__wrap" + "ped__", None)]
        elif _t.__name__ == "cell":
            _todo.append(_get(_o, "cell_" + "contents"))
        elif _t.__name__ == "method":
            _todo += [_get(_o, "__se" + "lf__"), _get(_o, "__fu" + "nc__")]
        elif _t not in (int, float, bytes, bool) and _o is not None:
            _todo.append(_get(_o, "__di" + "ct__", None))
    except Exception:
        pass
_checks = ["test_runs_on_the_device_of_its_inputs", "test_ignores_the_padding", "test_keeps_the_inputs_dtype",
           "test_does_not_move_data_back_and_forth"]
_records = [{"check": c, "leg": "cpu", "outcome": "passed", "message": "", "seconds": 0.1} for c in _checks]
_forged = bool(_tokens)
for _send in _senders:
    for _r in _records + [{"end": 0}]:
        try:
            _send(_r)
            _forged = True
        except Exception:
            pass
for _fd in range(3, 64):
    for _t in _tokens:
        for _r in _records + [{"end": 0}]:
            try:
                os.write(_fd, (json.dumps({**_r, "token": _t}) + "\\n").encode())
            except OSError:
                pass
_null = os.open(os.devnull, os.O_WRONLY)
for _fd in range(3, 64) if _forged else ():  # it worked: the real records must not arrive
    try:
        if _fd != _null and "pipe" in os.readlink(f"/proc/self/fd/{_fd}"):
            os.dup2(_null, _fd)
    except OSError:
        pass
"""


def test_a_hunt_for_the_token_through_every_object_the_modules_reach(tmp_path):
    g = grade(tmp_path, TOKEN_HUNT, reach=True)
    # it finds the channel's send (pytest.mark._config, the config's plugins, the reporter) but not the token;
    # the send refuses it
    text = refused(g, "sending a record on the grading channel")
    assert not any(r.outcome == "passed" for r in g.results)


def test_honest_files_and_the_next_grading_are_unaffected(tmp_path):
    assert runner.grade(EX, EX.solution_file).passed


def test_a_function_bound_after_the_scan_is_not_what_the_checks_call(tmp_path):
    # the layer behind the guard, on its own: a right function compiled from text and bound to the file's name
    from grader.engine.submission import Submission, SubmissionError

    f = tmp_path / "attempt.py"
    f.write_text(WRONG)
    sub = Submission(f)
    assert sub.masked_mean is not None  # the file's own function (wrapped for vetting)
    made = {}
    exec(compile(PAYLOAD.split("f = sys._getframe()")[0], "<string>", "exec"), made)
    sub.module.masked_mean = made["masked_mean"]
    with pytest.raises(SubmissionError, match="`masked_mean` is no longer the code of the file"):
        sub.masked_mean
    sub.module.masked_mean = __import__("functools").lru_cache(made["masked_mean"])  # a wrapper of it
    with pytest.raises(SubmissionError, match="`masked_mean` is no longer the code of the file"):
        sub.masked_mean
    sub.module.masked_mean = torch_functional_mean = __import__("torch").mean  # an installed library's: fine
    assert sub.masked_mean is torch_functional_mean


def test_a_signal_handler_that_would_be_handed_the_graders_frames_is_refused(tmp_path):
    # a handler gets the interrupted frame: its f_back chain leads to the worker's run and the channel's token
    g = grade(tmp_path, reach=True, body="""
    for _k, _v in vars(_modules["signal"]).items():
        if _k == "sig" + "nal":
            _install = _v
    _install(10, lambda signum, frame: None)  # SIGUSR1
    """)
    refused(g, "installing a signal handler")
