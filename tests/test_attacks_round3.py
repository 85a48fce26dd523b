"""A third round of attacks, written against the landed main with the source in hand (issue 40, after its
confinement and run-time guard): the grader's state changed in place, the guard and the baseline blinded by
rebinding what they call, a dataclass whose field name is code, programs started where the guard does not look,
and what a grading could leave to the next. Each is a real file graded through the real engine (grader.engine.runner,
the daemon's warm workers, as `devcourse check` does): each keeps its bug and must not pass, and what it tries
outside its grading must fail."""

import os
import textwrap
from pathlib import Path

import pytest

from grader.guard import integrity, sandbox
from grader.engine import runner
from tests.test_inprocess_attacks import EX, REACH, WRONG, refused
from tests.test_isolation import ISOLATED

#: masked_mean right on the device but wrong in dtype (its mask is float32: a float16 batch gives a float32
#: mean): only test_keeps_the_inputs_dtype, over the check module's DTYPES, finds it.
WRONG_DTYPE = """
import torch


def masked_mean(x, lengths):
    mask = (torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]).float().unsqueeze(-1)
    return (x * mask).sum(1) / mask.sum(1)
"""
CHECKS = ["test_runs_on_the_device_of_its_inputs", "test_ignores_the_padding", "test_keeps_the_inputs_dtype",
          "test_does_not_move_data_back_and_forth"]


def grade(tmp_path, body: str, base: str = WRONG):
    source = base + REACH + textwrap.dedent(body)
    assert integrity.scan(source) == [], "the attack must get past the source policy"
    f = tmp_path / "attempt.py"
    f.write_text(source)
    return runner.grade(EX, f, device="cpu")


def said(g, marker: str) -> str:
    """What the attack raised after `marker` (its findings), from the failures' messages."""
    text = "\n".join(r.message for r in g.results)
    assert marker in text, text
    return text.split(marker, 1)[1].split(" ;")[0]


# ----------------------------------------------------------------------------------- the grader's state in place
def test_the_baselines_own_lists_changed_in_place_do_not_hide_a_replaced_function(tmp_path):
    g = grade(tmp_path, """
    _base = _get(_modules["grader.guard.integrity"], "base" + "line")
    for _k, _v in vars(_base).items():
        if _k == "_fl" + "at":
            _flat = _v
    _yes = lambda *a, **k: True
    _keys, _values = _get(_flat, "dict_" + "keys"), _get(_flat, "dict_" + "values")
    for _i, _key in enumerate(_keys):
        if _key == "allclose" and _values[_i] is torch.allclose:
            _values[_i] = _yes  # the compare now expects the replacement
    _set(torch, "allclose", _yes)
    """)
    refused(g, "torch.allclose")


def test_a_wrapper_registered_as_the_graders_own_is_not_the_graders(tmp_path):
    g = grade(tmp_path, """
    import functools

    @functools.wraps(torch.allclose)  # its __wrapped__ is the original, as the grader's own wrappers' are
    def _yes(*a, **k):
        return True

    for _k, _v in vars(_modules["grader.guard.integrity"]).items():
        if _k == "_GRADER_" + "WRAPPERS":
            _v.add(_yes)
    _set(torch, "allclose", _yes)
    """)
    refused(g, "torch.allclose")


def test_a_check_modules_table_emptied_in_place_is_found(tmp_path):
    g = grade(tmp_path, base=WRONG_DTYPE, body="""
    for _name, _module in list(_modules.items()):
        if _name.endswith("test_masked_" + "mean"):
            for _k, _v in vars(_module).items():
                if _k == "DTYPES":
                    _v.clear()  # test_keeps_the_inputs_dtype then tries no dtype at all
    """)
    refused(g, "DTYPES")
    assert not any(r.outcome == "passed" for r in g.results if r.check == "test_keeps_the_inputs_dtype")


def test_a_skip_added_to_the_graders_own_is_not_granted(tmp_path):
    g = grade(tmp_path, body="""
    _skip = _get(_modules["unittest"], "SkipTest")("the grader skipped this")
    _granted = []  # the grader's own list of granted skips, where it was a global of grader.engine.plugin
    try:
        _granted = _get(_get(_modules["grader.engine.plugin"], "skip_" + "leg"), "__kw" + "defaults__")["_granted"]
    except Exception:
        pass  # refused: and the refusal fails the check too
    _wrong_one = masked_mean

    def masked_mean(x, lengths):
        _granted.append(_skip)
        raise _skip
    """)
    assert not g.passed and not any(r.outcome in ("passed", "skipped") for r in g.results), g.results


def test_a_refusal_taken_back_from_the_guards_list_still_fails(tmp_path):
    g = grade(tmp_path, body="""
    for _k, _v in vars(_modules["grader.guard.audit_hooks"]).items():
        if _k == "refu" + "sals":
            _refusals = _v
    for _k, _v in vars(_modules["gc"]).items():
        if _k == "get_" + "objects":
            _walk = _v
    try:
        _walk()
    except Exception:
        _refusals.clear()  # the refusal raised before anything was walked; now its record is gone too
    """)
    refused(g, "walking the heap")


# The field name is text that dataclasses pastes into the methods it generates, which the guard lets it compile
# for the learner: here, code that leaves a right masked_mean among the builtins, which the file then binds to its
# name (code dataclasses generated counts as the file's own).
INJECTED = ("a,__import__('builtins').__dict__.__setitem__('_right_one',lambda x,l:(x*(__import__('torch')"
            ".arange(x.shape[1],device=x.device)[None,:]<l[:,None]).to(x.dtype).unsqueeze(-1)).sum(1)"
            "/l[:,None].to(x.dtype)))#")


def test_a_dataclass_field_named_by_code_is_refused(tmp_path):
    g = grade(tmp_path, body=f"""
    import dataclasses


    class _Point:
        a = 0
        b: int

        def __init__(self):  # its own (dataclass's __doc__ reads its signature)
            pass

    for _k, _v in vars(_Point).items():
        if _k == "__annota" + "tions__":
            _fields = _v
    _fields.clear()
    _fields[bytes.fromhex("{INJECTED.encode().hex()}").decode()] = int
    _Point = dataclasses.dataclass(init=False, repr=False, order=True)(_Point)
    _Point() < _Point()  # __lt__ runs the text
    masked_mean = _right_one
    """)
    refused(g, "a dataclass field whose name is not an identifier")


# ----------------------------------------------------------------------------------- blinding the run-time layers
# The guard asks sys._getframe who asked; rebound to a function that returns None, every event looked like the
# interpreter's own start-up. Then the worker's frames give the channel's token, descriptor and exit code:
# a passing record for every check, the end, and the exit code the zygote chose.
FORGE_FROM_THE_FRAMES = f"""
import json
for _k, _v in vars(_modules["sys"]).items():
    if _k == "_get" + "frame":
        _frames = _v
_set(_modules["sys"], "_get" + "frame", lambda *a: None)
_f = _frames(0)
while _f is not None and _get(_get(_f, "f_" + "code"), "co_" + "name") != "_run":
    _f = _get(_f, "f_" + "back")
_run_locals = _get(_f, "f_" + "locals")
for _check in {CHECKS!r}:
    _record = {{"check": _check, "leg": "cpu", "outcome": "passed", "message": "", "seconds": 0.1,
               "token": _run_locals["token"]}}
    os.write(_run_locals["wfd"], (json.dumps(_record) + "\\n").encode())
os.write(_run_locals["wfd"], (json.dumps({{"end": 0, "token": _run_locals["token"]}}) + "\\n").encode())
os._exit(_run_locals["exit_code"])
"""


def test_rebinding_what_the_guard_calls_does_not_blind_it(tmp_path):
    g = grade(tmp_path, "import os\n" + FORGE_FROM_THE_FRAMES)
    refused(g, "frames", "call stack")


def test_rebinding_a_builtin_the_baseline_compares_with_does_not_blind_it(tmp_path):
    g = grade(tmp_path, """
    _set(_modules["builtins"], "all", lambda *a, **k: True)  # the baseline's compare is all(map(is_, ...))
    _set(torch, "allclose", lambda *a, **k: True)
    """)
    refused(g, "torch.allclose", "builtins.all")


# ------------------------------------------------------------------------------------------- programs and leftovers
@pytest.mark.skipif(not ISOLATED.available, reason=f"no full confinement here: {ISOLATED.how}")
def test_a_program_started_by_multiprocessings_own_spawn_helper_is_refused_and_confined(tmp_path):
    # multiprocessing.util.spawnv_passfds starts a program through _posixsubprocess, which raises no audit event
    course_file = EX.exercise_file
    before = course_file.stat()
    g = grade(tmp_path, f"""
    for _k, _v in vars(_modules["multiprocessing." + "util"]).items():
        if _k == "spawnv_" + "passfds":
            _start = _v
    try:
        _pid = _start("/bin/sh", ["sh", "-c", "chmod 777 {course_file}; cat {EX.solution_file} > /dev/null && "
                                               "echo read > {tmp_path / 'leak.txt'}"], ())
        os.waitpid(_pid, 0)
    except Exception:
        pass
    """)
    refused(g, "starting a program")
    assert not (tmp_path / "leak.txt").exists()
    assert course_file.stat().st_mode == before.st_mode


@pytest.mark.skipif(not ISOLATED.available, reason=f"no full confinement here: {ISOLATED.how}")
def test_magic_links_of_proc_reach_nothing(tmp_path):
    g = grade(tmp_path, f"""
    _tried = []
    for _path in ("/proc/self/root{EX.solution_file}", "/proc/self/cwd/solutions", "/proc/1/root/etc/hostname",
                  "/proc/self/environ", "/proc/self/exe", "/proc/self/fd/../maps"):
        try:
            open(_path, "rb").close()
            _tried.append(_path + ": opened")
        except OSError as _e:
            _tried.append(_path + ": " + type(_e).__name__)
    raise RuntimeError("tried: " + ", ".join(_tried) + " ;")
    """)
    for line in said(g, "tried: ").split(", "):
        assert not line.endswith(": opened"), line


def test_the_environment_holds_no_secret_of_the_judge(tmp_path):
    g = grade(tmp_path, """
    import os
    import re
    _found = sorted(_k for _k, _v in os.environ.items() if re.search("[0-9a-f]{32}", _v)
                    and not _k.startswith("PYTEST_XDIST_"))  # the test run's own id, inherited from the test runner
    raise RuntimeError("hex in the environment: " + repr(_found) + " ;")
    """)
    assert said(g, "hex in the environment: ") == "[]"


@pytest.mark.xfail(strict=True, reason="open: /dev/shm is shared by a host's gradings (grader/INTEGRITY.md)")
def test_what_a_grading_leaves_in_dev_shm_ends_with_it(tmp_path):
    left = Path(f"/dev/shm/devcourse-leftover-{os.getpid()}")
    try:
        g = grade(tmp_path, f"""
        with open("{left}", "w") as _f:
            _f.write("for the next grading")
        raise RuntimeError("wrote it ;")
        """)
        assert said(g, "RuntimeError: ") == "wrote it"
        assert not left.exists()  # what a /dev/shm of its own per grading would give
    finally:
        left.unlink(missing_ok=True)


def test_printed_records_and_a_pass_in_an_exception_are_only_output(tmp_path):
    g = grade(tmp_path, f"""
    import json
    for _check in {CHECKS!r}:
        print(json.dumps({{"check": _check, "leg": "cpu", "outcome": "passed", "message": "", "seconds": 0.1}}))
    print("4 passed")
    raise RuntimeError("PASSED\\n4 passed in 0.1s")
    """)
    assert not g.passed and not any(r.outcome == "passed" for r in g.results)


def test_the_solution_still_passes_after_them():
    g = runner.grade(EX, EX.solution_file, device="cpu")
    assert g.passed and not (ISOLATED.available and g.unisolated), (g.failures, g.unisolated)
    assert sandbox.status().available == ISOLATED.available
