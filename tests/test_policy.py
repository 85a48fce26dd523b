"""The source policy (grader/guard/policy.py): every fix of the course passes it, and every construct it refuses is
refused on the line that uses it, however it is spelled. The issue's bypasses are also graded through the
runner: refused before any of their code runs."""

import dataclasses
import json
import re
from pathlib import Path

import pytest

from grader.engine import runner
from grader.guard import integrity, policy
from grader.catalog import course

ROOT = Path(__file__).resolve().parents[1]


def _corpus() -> dict[str, str]:
    """Every file a learner could submit that the course ships or tests: solutions, the broken exercises, the
    right and wrong submissions, and the exercise cells of the notebooks (the set-up cell is the course's)."""
    files = [*ROOT.glob("solutions/*/*.py"), *ROOT.glob("exercises/*/*.py"), *ROOT.glob("tests/submissions/*/*.py")]
    corpus = {str(f.relative_to(ROOT)): f.read_text() for f in sorted(files)}
    for nb in sorted(ROOT.glob("notebooks/*.ipynb")):
        for i, cell in enumerate(json.loads(nb.read_text())["cells"]):
            source = "".join(cell["source"])
            if cell["cell_type"] == "code" and source.startswith("%%exercise"):
                corpus[f"{nb.relative_to(ROOT)}#cell{i}"] = source.split("\n", 1)[1]
    return corpus


CORPUS = _corpus()


def test_the_corpus_is_all_there():
    kinds = {name.split("/")[0] for name in CORPUS}
    assert kinds == {"solutions", "exercises", "tests", "notebooks"}
    assert len([n for n in CORPUS if n.startswith("solutions/")]) == len(course.load())


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_every_fix_of_the_course_passes(name):
    # Wrong submissions too: a wrong fix must fail its checks, not the policy (none uses a refused construct).
    assert integrity.scan(CORPUS[name], name) == []


@pytest.mark.parametrize("source", [
    "import gc\ngc.collect()",
    "import os\nrank = os.environ.get('RANK', '0')\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'",
    "import torch.multiprocessing as mp\nctx = mp.get_context('spawn')",
    "import multiprocessing\nn = multiprocessing.cpu_count()\nseen = hasattr(multiprocessing, 'popen_fork')",
    "import time\nt0 = time.perf_counter()",
    "from timeit import default_timer as clock\nt = clock()",
    "import torch\nf = torch.compile(lambda x: x + 1, backend='eager')",
    "from torch.utils.data import DataLoader\nloader = DataLoader([1, 2], num_workers=2, pin_memory=True)",
    "if __name__ == '__main__':\n    print(f'{__name__} on {1 + 1}')",
    "from torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self._cache = {}\n    def forward(self, x):\n        return self._cache.get(x.device, x)",
    "from torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        nn.Module.__init__(self)",
    "for sub in model.modules():\n    print(len(sub._parameters), len(sub._buffers), len(sub._modules))",
    "for name, value in vars(sub).items():\n    print(name)\nfor name in sub.__dict__:\n    print(name)",
    "for attr in ('key', 'idx'):\n    if hasattr(entry, attr):\n        print(getattr(entry, attr))",
    "for name, p in list(sub.named_parameters(recurse=False)):\n    setattr(sub, name, p)",
    "for name, v in list(vars(sub).items()):\n    setattr(sub, name, v)",
    "x = getattr(torch.accelerator, 'current_accelerator', None)",
    "import operator\nkey = operator.attrgetter('device.type')",
    "import os, sys\nprint(sys.version, os.getpid())\nos._exit(1)",
    "import os\nif os.fork() == 0:\n    os._exit(0)",
    "from torch.utils._pytree import tree_map\nimport torch.utils._pytree as pytree\npytree.tree_leaves([])",
    "from __future__ import annotations\ndef f(x: 'torch.Tensor') -> 'list[int]':\n    return []",
    "class D(torch.utils.data.Dataset):\n    def __len__(self):\n        return 1\n"
    "    def __getitem__(self, i):\n        return i",
    "x = type(batch)(v for v in batch)\nname = type(x).__name__\nv = torch.__version__\nm = DTensor.__module__",
    "y = 'simulation'\nz = 'cuda:1'\nmode = 'eval'\nmodel.eval()",
    # Ordinary imports of device code, some of them modules under another name (os.path is posixpath).
    "import os.path\nfrom os import path\nimport torch.nn as nn\nfrom torch.cuda import amp\n"
    "from torch.amp import autocast\nimport torch.distributed as dist\nfrom torch.nn import functional as F\n"
    "from torch.optim.lr_scheduler import StepLR\nfrom torch.profiler import profile\nimport numpy.random\n"
    "from collections import OrderedDict\nfrom typing import Optional\nfrom pathlib import Path\n"
    "from contextlib import nullcontext\nfrom dataclasses import dataclass\nfrom torch.func import vmap\n"
    "import torch.backends.cudnn\ntorch.backends.cudnn.benchmark = True\nok = torch.backends.mps.is_available()",
])
def test_what_fixes_need_stays_allowed(source):
    assert integrity.scan(source) == []


# Each attack: the construct on its line (counted from the first line of the snippet), and what the finding says.
ATTACKS = [
    # The issue's bypasses of the scan by name.
    ("m = os.sys.modules['grader.engine.expect']", 1, "uses os.sys.modules"),
    ("hook = getattr(sys, 'set' + 'trace')", 1, "calls getattr with a computed attribute name"),
    ("b = print.__self__", 1, "uses print.__self__, a special attribute"),
    ("ex = vars()['__builtins__']['exec']", 1, "calls vars() without exactly one object"),
    ("payload = 'eD0x'\nrun = vars(os)['ex' + 'ec']\nrun(payload)", 2, "uses vars(...) other than to list it"),
    ("for k, run in vars(os).items():\n    pass", 1, "lists the namespace of the module os"),
    ("walk = type.__subclasses__(object)", 1, "uses type.__subclasses__"),
    # Dynamic attribute access.
    ("def peek(obj, name):\n    return getattr(obj, name)", 2, "calls getattr with a computed attribute name"),
    ("def sync(x):\n    getattr(torch, x.device.type).synchronize()", 2, "torch.get_device_module(device)"),
    ("name = 'f_back'\nx = getattr(frame, name)", 2, "calls getattr with a computed attribute name"),
    ("setattr(obj, attribute_name(), 1)", 1, "calls setattr with a computed attribute name"),
    ("delattr(torch, 'al' + 'lclose')", 1, "calls delattr with a computed attribute name"),
    ("ok = hasattr(sys, ''.join(['set', 'trace']))", 1, "calls hasattr with a computed attribute name"),
    ("g = getattr\nx = g(sys, 'modules')", 1, "uses getattr other than by calling it"),
    ("reader = functools.partial(getattr, sys)", 1, "uses getattr other than by calling it"),
    ("f = getattr(*args)", 1, "calls getattr without a plain object and name"),
    ("x = getattr(frame, 'f_globals')", 1, "an attribute of a frame"),
    ("setattr(torch.Tensor, '__eq__', lambda a, b: True)", 1, "a special attribute"),
    ("import operator\nf = operator.attrgetter(name)", 2, "calls operator.attrgetter with a computed name"),
    ("import operator\nf = operator.attrgetter('tb_frame.f_back')", 2, "an attribute of a traceback"),
    ("from operator import methodcaller\nf = methodcaller('__subclasses__')", 2, "a special attribute"),
    ("import operator\nget = operator.attrgetter", 2, "other than by calling it"),
    ("d = model.__dict__['_parameters']", 1, "uses an object's __dict__ other than to list it"),
    ("model.__dict__.update(weights)", 1, "uses an object's __dict__ other than to list it"),
    ("fields = vars(obj)\nfields['x'] = 1", 1, "uses vars(...) other than to list it"),
    # Underscore attributes and modules.
    ("C = torch._C", 1, "uses torch._C, a private attribute"),
    ("f = sys._getframe(1)", 1, "uses sys._getframe, a private attribute"),
    ("frames = sys._current_frames()", 1, "a private attribute"),
    ("class A:\n    def __init__(self):\n        self._C = 1\n    def c(self):\n        return self._C", 5,
     "uses self._C, a private attribute"),
    ("class A:\n    def __init__(self):\n        self._python_dispatch = None\nu = torch.utils\n"
     "m = u._python_dispatch", 5, "uses u._python_dispatch, a private attribute"),
    ("g = f.__globals__", 1, "uses f.__globals__, a special attribute"),
    ("cls = x.__class__.__base__", 1, "a special attribute"),
    ("x.__class__ = Liar", 1, "writes x.__class__, a special attribute"),
    ("torch.Tensor.__eq__ = lambda a, b: True", 1, "writes torch.Tensor.__eq__"),
    ("import _thread", 1, "imports _thread"),
    ("from torch.utils._python_dispatch import TorchDispatchMode", 1, "imports from torch.utils._python_dispatch"),
    ("import torch._dynamo", 1, "imports torch._dynamo"),
    ("from torch.utils._pytree import dataclasses", 1, "only the tree_* functions"),
    # Special methods a fix never defines.
    ("class T(torch.Tensor):\n    @classmethod\n    def __torch_function__(cls, f, t, a=(), k=None):\n"
     "        return True", 3, "defines the special method __torch_function__"),
    ("class Lie(float):\n    def __mul__(self, other):\n        return 0.0", 2, "defines the special method __mul__"),
    ("class Later:\n    def __del__(self):\n        pass", 2, "defines the special method __del__"),
    ("class E(Exception):\n    def __str__(self):\n        raise RuntimeError", 2,
     "defines the special method __str__"),
    ("class A:\n    __eq__ = lambda a, b: True", 2, "sets the name __eq__"),
    ("Liar = type('Liar', (torch.Tensor,), {'__eq__': eq})", 1, "builds a class with type(name, bases, namespace)"),
    ("class A(metaclass=Meta):\n    pass", 1, "gives the class A a metaclass"),
    ("Liar = type(int)('Liar', (torch.Tensor,), ns)", 1, "builds a class with type(int)(name, bases, namespace)"),
    ("import abc\nLiar = abc.ABCMeta('Liar', (float,), ns)", 2, "builds a class with abc.ABCMeta"),
    ("ns = {'__mul__': lambda a, b: 0.0}", 1, "puts the special method __mul__ in a dictionary"),
    ("ns = dict(__torch_function__=f)", 1, "passes the special name __torch_function__ as a keyword"),
    ("import dataclasses\nC = dataclasses.make_dataclass('C', [], namespace=ns)", 2,
     "uses dataclasses.make_dataclass"),
    ("class A(**{'meta' + 'class': Meta}):\n    pass", 1, "gives the class A a metaclass"),
    # Builtins that reach every name or run strings.
    ("g = globals()", 1, "uses globals"), ("l = locals()", 1, "uses locals"),
    ("b = __builtins__", 1, "uses __builtins__"), ("m = __import__('grader.engine.expect')", 1, "uses __import__"),
    ("exec('x = 1')", 1, "uses exec"), ("y = eval('1')", 1, "uses eval"),
    ("c = compile('1', 'f', 'eval')", 1, "uses compile"), ("breakpoint()", 1, "uses breakpoint"),
    ("each = map(vars, modules_list)", 1, "uses vars"),
    ("def f(x: \"__import__('grader')\"):\n    pass", 1, "uses __import__"),
    # Frames, tracebacks, code objects, generators, cells.
    ("try:\n    1 / 0\nexcept Exception as e:\n    f = e.__traceback__", 4, "a special attribute"),
    ("tb = sys.exc_info()[2]\nf = tb.tb_frame", 2, "uses tb.tb_frame, an attribute of a traceback"),
    ("nxt = tb.tb_next", 1, "an attribute of a traceback"),
    ("up = frame.f_back", 1, "uses frame.f_back, an attribute of a frame"),
    ("g = frame.f_globals['submission']", 1, "an attribute of a frame"),
    ("l = frame.f_locals", 1, "an attribute of a frame"), ("b = frame.f_builtins", 1, "an attribute of a frame"),
    ("c = frame.f_code", 1, "an attribute of a frame"),
    ("gen = (i for i in [])\nf = gen.gi_frame", 2, "an attribute of a generator or coroutine"),
    ("f = coro.cr_frame", 1, "an attribute of a generator or coroutine"),
    ("f = agen.ag_frame", 1, "an attribute of a generator or coroutine"),
    ("c = gen.gi_code", 1, "an attribute of a generator or coroutine"),
    ("raw = code.co_code", 1, "an attribute of a code object"),
    ("v = cell.cell_contents", 1, "an attribute of a closure cell"),
    ("match frame:\n    case object(f_back=up):\n        pass", 2,
     "matches object(f_back=...), an attribute of a frame"),
    # The interpreter's machinery, on whatever object.
    ("mods = sys.modules", 1, "uses sys.modules"), ("mods = torch.sys.modules", 1, "uses torch.sys.modules"),
    ("from sys import modules", 1, "imports sys.modules"),
    ("sys.meta_path.insert(0, finder)", 1, "uses sys.meta_path"),
    ("sys.settrace(tracer)", 1, "uses sys.settrace"), ("sys.setprofile(profiler)", 1, "uses sys.setprofile"),
    ("sys.addaudithook(hook)", 1, "uses sys.addaudithook"),
    ("gc.callbacks.append(after_collect)", 1, "uses gc.callbacks"), ("from gc import callbacks", 1, "imports gc"),
    ("sys.setrecursionlimit(60)", 1, "uses sys.setrecursionlimit"),
    ("sys.setswitchinterval(1e-6)", 1, "uses sys.setswitchinterval"),
    ("everything = gc.get_objects()", 1, "uses gc.get_objects"),
    ("who = gc.get_referrers(x)", 1, "uses gc.get_referrers"), ("what = gc.get_referents(x)", 1, "get_referents"),
    ("tool = sys.monitoring", 1, "uses sys.monitoring"),
    ("gc.set_debug(gc.DEBUG_SAVEALL)\nkept = gc.garbage", 2, "uses gc.garbage"),
    ("gc.set_debug(gc.DEBUG_SAVEALL)", 1, "uses gc.set_debug"),
    ("torch.nn.modules.module.register_module_forward_hook(lambda m, i, o: o * 0)", 1,
     "a global hook"),
    ("torch.optim.optimizer.register_optimizer_step_pre_hook(lambda o, a, k: None)", 1, "a global hook"),
    ("m = torch.ops.import_module('grader.engine.expect')", 1, "uses torch.ops.import_module"),
    ("rt = torch.cuda.cudart()", 1, "uses torch.cuda.cudart"),
    ("help('grader.engine.expect')", 1, "uses help"),
    ("for k, v in sys.__dict__.items():\n    pass", 1, "lists the namespace of the module sys"),
    ("for k in vars(torch.Tensor):\n    pass", 1, "lists the namespace of the class torch.Tensor"),
    ("bases = type.mro(cls)", 1, "uses type.mro"),
    ("sys.path.insert(0, '/tmp')", 1, "uses sys.path.insert"),
    ("os.system('python -c pass')", 1, "uses os.system"), ("os.execv('/bin/sh', ['sh'])", 1, "uses os.execv"),
    ("os.register_at_fork(after_in_child=f)", 1, "uses os.register_at_fork"),
    ("c = torch.ctypes", 1, "uses torch.ctypes, a module outside the allowed ones"),
    ("import enum\nenum.bltns.exec('x = 1')", 2, "uses enum.bltns.exec, which is the builtin exec"),
    ("from enum import bltns", 1, "imports enum.bltns"),
    ("import torch.fx.graph as g\nb = g.builtins", 2, "uses g.builtins"),
    ("s = os.st", 1, "uses os.st, which is the module stat"),  # a module under another name, found by what it is
    ("e = torch.builtins.eval", 1, "which is the builtin eval"),
    ("m = enum\nb = m.bltns", 2, "uses m.bltns, a module outside the allowed ones"),
    ("f = typing.pkgutil.resolve_name('grader.engine.expect:fail')", 1, "a module outside the allowed ones"),
    ("p = torch.unittest.mock.patch('grader.engine.expect.fail')", 1, "a module outside the allowed ones"),
    ("class M(torch.overrides.TorchFunctionMode):\n    pass", 1, "TorchFunctionMode"),
    ("import typing\nhints = typing.get_type_hints(f)", 2, "uses typing.get_type_hints"),
    # Imports a device fix never needs.
    ("import grader.engine.expect", 1, "imports grader.engine.expect"), ("from grader.engine import expect", 1, "imports from grader"),
    ("import pytest", 1, "imports pytest"), ("from _pytest import outcomes", 1, "imports from _pytest"),
    ("import pluggy", 1, "imports pluggy"), ("import inspect", 1, "imports inspect"),
    ("import ctypes", 1, "imports ctypes"), ("import builtins", 1, "imports builtins"),
    ("import importlib", 1, "imports importlib"), ("import signal", 1, "imports signal"),
    ("import faulthandler", 1, "imports faulthandler"), ("import threading", 1, "imports threading"),
    ("from concurrent.futures import ThreadPoolExecutor", 1, "imports from concurrent.futures"),
    ("import subprocess", 1, "imports subprocess"), ("import pickle", 1, "imports pickle"),
    ("from multiprocessing.dummy import Pool", 1, "imports from multiprocessing.dummy"),
    ("from multiprocessing.pool import ThreadPool", 1, "imports multiprocessing.pool.ThreadPool"),
    ("import torch.multiprocessing as mp\np = mp.pool.ThreadPool(2)", 2, "ThreadPool"),
    ("future = torch.jit.fork(step, x)", 1, "uses torch.jit.fork"),
    ("from torch.distributed import rpc", 1, "imports torch.distributed.rpc"),
    ("import types", 1, "imports types"), ("import weakref", 1, "imports weakref"),
    ("from torch.overrides import TorchFunctionMode", 1, "imports from torch.overrides"),
    ("import torch.library", 1, "imports torch.library"),
    ("from torch.utils import backend_registration", 1, "imports torch.utils.backend_registration"),
    ("from torch.utils.cpp_extension import load_inline", 1, "imports from torch.utils.cpp_extension"),
    ("import torch.hub", 1, "imports torch.hub"),
    ("from torch.utils.benchmark import Timer", 1, "imports from torch.utils.benchmark"),
    ("import timeit\nt = timeit.timeit('x = 1')", 2, "uses timeit.timeit"),
    ("from numpy.lib.stride_tricks import as_strided", 1, "imports from numpy.lib.stride_tricks"),
    ("from os import *", 1, "imports * from os"),
    ("__name__ = 'grader.checks'\nfrom . import conftest", 1, "sets the name __name__"),
    ("__name__ = 'grader.checks'\nfrom . import conftest", 2, "imports ., a relative import"),
    ("from ..grader import expect", 1, "imports ..grader, a relative import"),
    ("__package__ = 'grader'", 1, "sets the name __package__"),
    # The simulated accelerator and the grader's own markers.
    ("on_sim = x.device.type == 'sim'", 1, "names the simulated accelerator ('sim')"),
    ("d = torch.device('sim:1')", 1, "names the simulated accelerator ('sim:1')"),
    ("torch.sim.synchronize()", 1, "names the simulated accelerator (torch.sim)"),
    ("t = 'PrivateUseOne'", 1, "names the simulated accelerator"),
    ("torch.utils.rename_privateuse1_backend('x')", 1, "names the simulated accelerator"),
    ("grading = 'PYTEST_CURRENT_TEST' in os.environ", 1, "mentions 'PYTEST_CURRENT_TEST'"),
]
PRELUDE = "import functools\nimport gc\nimport os\nimport sys\n\nimport torch\n"


@pytest.mark.parametrize("source, line, found", ATTACKS, ids=[a[0].split("\n")[-1][:50] for a in ATTACKS])
def test_each_construct_is_refused_on_its_line(source, line, found):
    findings = integrity.scan(PRELUDE + source + "\n")
    at = line + PRELUDE.count("\n")
    assert any(f.startswith(f"line {at}: ") and found in f for f in findings), findings


def test_a_finding_says_what_and_why_on_one_line():
    for source, _, _ in ATTACKS:
        for finding in integrity.scan(PRELUDE + source + "\n"):
            assert re.fullmatch(r"line \d+: [^\n]+: [^\n]+", finding), finding


def test_findings_come_in_line_order_once_each():
    src = "import pytest\n" + "x = 1\n" * 9 + "import inspect\nimport pytest\ny = eval; z = eval\n"
    lines = [int(f.split()[1].rstrip(":")) for f in integrity.scan(src)]
    assert lines == [1, 11, 12, 13]
    assert integrity.scan("def (:") == []  # the loader reports syntax errors in its own words


def test_the_allowed_modules_are_importable_and_none_is_a_way_in():
    # The allow-list names real modules, and none of those that the policy refuses by attribute.
    for name in policy.ALLOWED_MODULES:
        __import__(name)
    assert not policy.ALLOWED_MODULES & policy.DENIED_MODULE_ATTRIBUTES


# ---------------------------------------------------------------------------------------------- end to end
EX = dataclasses.replace(course.get("masked_mean"), timeout=4)
FIX = """import os
import sys
import torch


def _right(x, lengths):
    T = x.shape[1]
    mask = (torch.arange(T, device=x.device)[None, :] < lengths[:, None]).to(x.dtype).unsqueeze(-1)
    return (x * mask).sum(1) / lengths[:, None].to(x.dtype)


def masked_mean(x, lengths):
"""
ISSUE_BYPASSES = [
    "    os.sys.modules['grader.engine.expect'].fail = print",
    "    getattr(sys, 'set' + 'trace')(None)",
    "    print.__self__.exec('pass')",
    "    vars()['__builtins__']['exec']('pass')",
    "    vars(os)['__builtins__']['ex' + 'ec']('cGFzcw==')",
    "    [c for c in type.__subclasses__(object) if c.__name__ == 'Skipped']",
]


@pytest.mark.parametrize("line", ISSUE_BYPASSES)
def test_the_issues_bypasses_are_not_graded(tmp_path, line):
    f = tmp_path / "attempt.py"
    f.write_text(FIX + line + "\n    return _right(x, lengths)\n")
    g = runner.grade(EX, f, device="cpu")
    assert not g.passed
    text = "\n".join(r.message for r in g.failures)
    assert "was not graded" in text and f"line {FIX.count(chr(10)) + 1}: " in text, text


def test_a_right_fix_is_graded_as_before(tmp_path):
    f = tmp_path / "attempt.py"
    f.write_text(FIX + "    return _right(x, lengths)\n")
    assert runner.grade(EX, f, device="cpu").passed
