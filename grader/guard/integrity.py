"""Keep a submission from grading itself.

The learner's code runs in the grading process, so it could replace what a check relies on (the grader's
helpers, pytest, `torch.allclose`, a builtin), or look for the grader and behave differently there. Three
layers make the easy ways fail, each with a message that says what was found:

* `scan(source)` reads the submission before it runs and refuses, by construct (grader/guard/policy.py), what a device
  fix never needs: the interpreter's machinery (frames, `sys.modules`, trace hooks, `gc.get_objects`), names built
  at run time, code run from strings, imports outside an allow-list, the simulated accelerator's name.
* `Baseline` remembers every function and class of the modules the checks use, taken before the submission
  is loaded; `Baseline.changed()` names those replaced since. The plugin calls it after every check.
* `guard_processes()` (in the grading worker) limits the processes learner code may start, across all its
  descendants, so a fork loop cannot take the machine down.

What this does not do: code in the same process can always, with enough effort (walking frames, writing to
file descriptors, native code), lie about its result. README's instructors' section says which deployment
closes that gap.
"""

from __future__ import annotations

import builtins
import contextlib
import mmap
import operator
import os
import struct
import sys
import types
import warnings

from grader.guard import policy

#: Modules the checks rely on; their functions and classes must stay as they were.
GUARDED_PREFIXES = ("grader", "pytest", "_pytest", "pluggy", "pytest_timeout")


class IntegrityError(Exception):
    """The submission tried to change how it is graded; the message says what was found."""


def scan(source: str, filename: str = "<submission>") -> list[str]:
    """What in the source the source policy (grader/guard/policy.py) refuses, one line each ('line N: what: why')."""
    return [str(f) for f in policy.findings(source, filename)]


def check_source(source: str, display_name: str) -> None:
    found = scan(source, display_name)
    if found:
        raise IntegrityError(
            f"{display_name} was not graded: the grader does not run these constructs (it runs learner code "
            "inside its own process, so it allows only what it can check):\n  " + "\n  ".join(found)
            + "\nWrite these lines another way; print() and the error messages are all a device bug needs.")


def _guarded_namespaces() -> list[tuple[str, object]]:
    import gc
    import json
    import signal
    import threading
    import time

    import torch
    import torch.nn.functional
    import torch.overrides
    import torch.utils._python_dispatch as python_dispatch

    spaces: list[tuple[str, object]] = [
        ("torch", torch), ("torch.Tensor", torch.Tensor), ("torch.Tensor", torch._C.TensorBase),
        ("torch.nn.functional", torch.nn.functional), ("torch.nn.Module", torch.nn.Module),
        ("torch.cuda", torch.cuda), ("torch.accelerator", torch.accelerator), ("torch.testing", torch.testing),
        ("builtins", builtins), ("os", os), ("sys", sys),
        # what the instruments and the plugin build on: modes, the C functions they call, clocks, the channel
        ("torch._C", torch._C), ("torch.overrides", torch.overrides),
        ("torch.utils._python_dispatch", python_dispatch),
        ("TorchDispatchMode", python_dispatch.TorchDispatchMode), ("TorchFunctionMode", torch.overrides.TorchFunctionMode),
        ("threading", threading), ("time", time), ("json", json), ("gc", gc), ("signal", signal),
    ]
    for name, mod in list(sys.modules.items()):
        if isinstance(mod, types.ModuleType) and name.split(".")[0] in GUARDED_PREFIXES:
            spaces.append((name, mod))
            for attr, value in list(vars(mod).items()):
                if isinstance(value, type) and getattr(value, "__module__", None) == name:
                    spaces.append((f"{name}.{attr}", value))
    return spaces


#: Namespaces whose public classes' methods the checks' reference computations run (nn.Linear.forward,
#: SGD.step, DataLoader.__iter__): besides the modules' functions, those classes are guarded too.
CLASSES_OF = ("torch.nn", "torch.optim", "torch.utils.data")


def _namespaces_the_checks_reach(check_modules) -> list[tuple[str, object]]:
    """The modules the hidden checks and the grader name (copy, random, math, numpy, linecache, torch.optim,
    torch.nn.functional...) besides _guarded_namespaces(), and the public classes of CLASSES_OF: a check's
    reference is `copy.deepcopy(model)` or `torch.optim.SGD(...)`, and replacing copy.deepcopy with the identity
    made the reference the learner's own model. Every module one step from a check module, the grader's modules
    or torch."""
    import importlib

    import torch

    roots = [*check_modules, torch, torch.nn, torch.utils,
             *(m for name, m in list(sys.modules.items()) if name.split(".")[0] == "grader"
               and isinstance(m, types.ModuleType))]
    modules: dict[int, types.ModuleType] = {}
    for root in roots:
        for value in list(vars(root).values()):
            if isinstance(value, types.ModuleType) and value.__name__.split(".")[0] not in GUARDED_PREFIXES:
                modules.setdefault(id(value), value)
    spaces: list[tuple[str, object]] = [(getattr(m, "__name__", "?"), m) for m in modules.values()]
    for name in CLASSES_OF:
        for attr, value in list(vars(importlib.import_module(name)).items()):
            if isinstance(value, type) and not attr.startswith("_"):
                spaces.append((f"{name}.{attr}", value))
    return spaces


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _callables(ns) -> dict[str, object]:
    with warnings.catch_warnings():  # callable() of a deprecated alias (torch.distributed.reduce_op) warns
        warnings.simplefilter("ignore")
        return {k: v for k, v in list(vars(ns).items())
                if callable(v) or isinstance(v, (types.ModuleType, property))}


class Baseline:
    """Functions, classes and modules of the guarded namespaces, as they were when it was taken."""

    def __init__(self, check_modules=()):
        # The objects themselves (so an id cannot be reused by a replacement), keys and values apart: the
        # check after every call of learner code compares each namespace's values at once, in C.
        self._entries = []
        self._names = {}  # every name a guarded class had (its private ones too), for a method added later
        self._public_only: set[int] = set()  # namespaces whose private names are torch's to rebind (dynamo's
        # first compile wraps every optimizer's _init_group)
        guarded = _guarded_namespaces()
        known = {id(ns) for _, ns in guarded}
        reached = [(label, ns) for label, ns in _namespaces_the_checks_reach(check_modules) if id(ns) not in known]
        for label, ns in guarded + reached:
            items = _callables(ns)
            if isinstance(ns, type):
                self._names[id(ns)] = set(vars(ns))
            if (label, ns) in reached:
                self._public_only.add(id(ns))
                # public names only: pytest swaps warnings._showwarnmsg_impl in each check, torch rebinds
                # SGD._init_group on first use, and the policy refuses a learner's underscore attributes
                items = {k: v for k, v in items.items() if not k.startswith("_") or _is_dunder(k)}
            self._entries.append((label, ns, tuple(items), tuple(items.values()), len(vars(ns))))
        self._contents = []  # (label, namespace, name, the object, a copy of what it held)
        for module in check_modules:  # the hidden checks: every global, helpers and cached values alike
            items = dict(vars(module))
            label = f"the check module {module.__name__}"
            self._entries.append((label, module, tuple(items), tuple(items.values()), len(items)))
            changes_itself = _changed_by_its_own_code(module)
            for name, value in items.items():
                kept = _copy_of_data(value)
                if kept is not _NOT_DATA and name not in changes_itself:
                    self._contents.append((label, vars(module), name, value, kept))
        self._flat = _Flat(self._entries)

    def hold_grader_state(self) -> None:
        """Add every global of the grader's modules, values included (`integrity.baseline`, `audit.interpreter`,
        the plugin's settings), as they are now: called once the grader has set them up, before learner code runs.
        Setting one to None (a baseline that is never compared) is then a change like a replaced function."""
        for name, mod in list(sys.modules.items()):
            if isinstance(mod, types.ModuleType) and name.split(".")[0] == "grader":
                items = {k: v for k, v in list(vars(mod).items()) if not _is_dunder(k) and k not in _REBOUND}
                self._entries.append((name, mod, tuple(items), tuple(items.values()), len(vars(mod))))
        self._flat = _Flat(self._entries)

    def sealed(self):
        """The compare (what `changed` does) for the plugin to hold, once the grader's state is added: a function
        that holds all it reads in its defaults (tuples, frozen sets, read-only views: nothing learner code can
        change in place, and defaults it may not read: grader.guard.audit_hooks) and runs on a private copy of this module's
        globals whose builtins and modules are copies taken now. A submission that reaches this module, the
        baseline or `builtins` under a plain name and changes one of the baseline's lists, the set of the grader's
        wrappers or `all` changes what this compare never reads. Kept by no object learner code can reach
        (a function's __globals__ raises no audit event)."""
        flat = self._flat
        state = (tuple(self._entries),
                 (tuple(flat.dicts), tuple(flat.dict_keys), tuple(flat.dict_values), tuple(flat.views),
                  tuple(flat.view_keys), tuple(flat.view_values), tuple(flat.classes), tuple(flat.class_sizes)),
                 types.MappingProxyType({k: frozenset(v) for k, v in self._names.items()}),
                 frozenset(self._public_only), tuple(self._contents))
        return types.FunctionType(_compare.__code__, _private_namespace(), "changed", state)

    def changed(self) -> list[str]:
        """What was replaced or changed since the baseline was taken (the plugin holds `sealed()`, which does the
        same where learner code cannot change what it reads)."""
        if self._flat.untouched():
            return self._contents_changed()  # the usual case, in one pass in C (below: which changed, and how)
        out = []
        for label, ns, keys, values, size in self._entries:
            now = vars(ns)
            if all(map(operator.is_, map(now.get, keys), values)) and (len(now) == size or not isinstance(ns, type)):
                continue  # untouched (the usual case)
            for key, obj in zip(keys, values):
                new = now.get(key, _MISSING)
                if new is not obj and not _torch_rewrapped(new, obj) and not _graders_own(new, obj):
                    out.append(f"{label}.{key}")
            if isinstance(ns, type):  # a class gains no methods at run time: a new one overrides a base's
                known = self._names.get(id(ns), set(keys))
                out += [f"{label}.{key}" for key, v in list(now.items())
                        if key not in known and callable(v) and not _graders_own(v)
                        and not _torch_rewrapped(v, _inherited(ns, key))
                        and not (id(ns) in self._public_only and key.startswith("_") and not _is_dunder(key))]
        return out + self._contents_changed()

    def _contents_changed(self) -> list[str]:
        return [f"{label}.{key} (what it holds)" for label, namespace, key, obj, kept in self._contents
                if namespace.get(key, _MISSING) is obj and not _same_data(obj, kept)]


_MISSING = object()
#: Globals of the grader that it rebinds itself while it grades: why the grading stopped (grader.guard.audit), set once.
_REBOUND = {"tainted"}


def _inherited(cls: type, name: str):
    """What `cls` had under `name` from its bases (torch's optimizers patch their step into the subclass, wrapping
    the inherited one, when the first is made: AdamW.step wraps Adam.step)."""
    for base in cls.__mro__[1:]:
        if name in vars(base):
            return vars(base)[name]
    return None


class _Flat:
    """Every (namespace, name, object) of a baseline in a few flat sequences, so that `untouched()` compares them
    all in C: the plugin calls changed() after every check and every call of learner code, and a loop over the
    baseline's five hundred namespaces in Python cost most of a millisecond each time. A namespace's own mapping
    (a module's __dict__, a live view of a class's) is taken once: neither can be replaced."""

    def __init__(self, entries):
        self.dicts, self.dict_keys, self.dict_values = [], [], []
        self.views, self.view_keys, self.view_values = [], [], []
        self.classes, self.class_sizes = [], []
        for _, ns, keys, values, size in entries:
            now = vars(ns)
            if type(now) is dict:
                self.dicts += [now] * len(keys)
                self.dict_keys += keys
                self.dict_values += values
            else:  # a class's mappingproxy
                self.views += [now] * len(keys)
                self.view_keys += keys
                self.view_values += values
            if isinstance(ns, type):  # a class gains no methods at run time
                self.classes.append(now)
                self.class_sizes.append(size)

    def untouched(self) -> bool:
        is_ = operator.is_
        return (all(map(is_, map(dict.get, self.dicts, self.dict_keys), self.dict_values))
                and all(map(is_, map(types.MappingProxyType.get, self.views, self.view_keys), self.view_values))
                and all(map(operator.eq, map(len, self.classes), self.class_sizes)))


def _compare(entries, flat, names, public_only, contents) -> list[str]:
    """Baseline.changed once sealed (Baseline._seal: its arguments are the defaults it is made with)."""
    dicts, dict_keys, dict_values, views, view_keys, view_values, classes, class_sizes = flat
    is_ = operator.is_
    out = []
    if not (all(map(is_, map(dict.get, dicts, dict_keys), dict_values))
            and all(map(is_, map(types.MappingProxyType.get, views, view_keys), view_values))
            and all(map(operator.eq, map(len, classes), class_sizes))):
        for label, ns, keys, values, size in entries:
            now = vars(ns)
            if all(map(is_, map(now.get, keys), values)) and (len(now) == size or not isinstance(ns, type)):
                continue
            for key, obj in zip(keys, values):
                new = now.get(key, _MISSING)
                if new is not obj and not _torch_rewrapped(new, obj) and not _graders_own(new, obj):
                    out.append(f"{label}.{key}")
            if isinstance(ns, type):
                known = names.get(id(ns), frozenset(keys))
                out += [f"{label}.{key}" for key, v in list(now.items())
                        if key not in known and callable(v) and not _graders_own(v)
                        and not _torch_rewrapped(v, _inherited(ns, key))
                        and not (id(ns) in public_only and key.startswith("_") and not _is_dunder(key))]
    for label, namespace, key, obj, kept in contents:
        if namespace.get(key, _MISSING) is obj and not _same_data(obj, kept):
            out.append(f"{label}.{key} (what it holds)")
    return out


#: Types whose values hold no other object and cannot change; anything else in a check module's global is not
#: compared by content.
_ATOMS = (type(None), bool, int, float, complex, str, bytes, range, type(Ellipsis))


def _copy_of_data(value, depth: int = 0):
    """A copy of `value` to compare it with later, if it is data a check reads (numbers and strings, torch's dtypes
    and devices, tensors and NumPy arrays, in lists, tuples, sets and dicts) and holds something that can change
    in place; else _NOT_DATA."""
    import torch

    if depth > 4:
        return _NOT_DATA
    if isinstance(value, _ATOMS) or isinstance(value, (torch.dtype, torch.device)):
        return value
    if type(value) is torch.Tensor:
        return value.detach().clone() if value.device.type == "cpu" else _NOT_DATA
    if type(value) in (list, tuple, set, frozenset):
        items = [_copy_of_data(v, depth + 1) for v in value]
        return _NOT_DATA if any(v is _NOT_DATA for v in items) else type(value)(items)
    if type(value) is dict:
        pairs = [(_copy_of_data(k, depth + 1), _copy_of_data(v, depth + 1)) for k, v in value.items()]
        return _NOT_DATA if any(_NOT_DATA in (k, v) for k, v in pairs) else dict(pairs)
    return _NOT_DATA


def _same_data(now, kept) -> bool:
    import torch

    if type(now) is not type(kept):
        return False
    if type(now) is torch.Tensor:
        return now.dtype == kept.dtype and now.shape == kept.shape and bool(torch.equal(now, kept))
    if type(now) in (list, tuple):
        return len(now) == len(kept) and all(map(_same_data, now, kept))
    if type(now) is dict:
        return now.keys() == kept.keys() and all(_same_data(now[k], kept[k]) for k in kept)
    return now == kept


_NOT_DATA = object()
#: What a check module's own code changes in place (its caches, the readings it collects): compared by identity only.
_MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "pop", "popitem", "remove",
                       "discard", "clear", "sort", "reverse", "__setitem__", "__delitem__"})


def _changed_by_its_own_code(module) -> set[str]:
    """The module's globals its own source changes in place: `NAME.append(...)` and the like, `NAME[...] = ...`,
    `del NAME[...]`, an in-place tensor method (`NAME.add_(...)`), `global NAME`."""
    import ast

    try:
        with open(getattr(module, "__file__", None), encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, TypeError, ValueError):
        return set(vars(module))  # nothing known: identity only
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            found.update(node.names)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name):
            attr = node.func.attr
            if attr in _MUTATORS or (attr.endswith("_") and not attr.startswith("_")):
                found.add(node.func.value.id)
        elif isinstance(node, (ast.Subscript,)) and isinstance(node.ctx, (ast.Store, ast.Del)) and \
                isinstance(node.value, ast.Name):
            found.add(node.value.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            found.add(node.target.id)
    return found


def _torch_rewrapped(new, old) -> bool:
    """torch rebinds a few of its functions to wrappers of themselves when a part of it is first used (importing
    torch._dynamo wraps torch.manual_seed; its first compile, nn.Module.__init__ and __setstate__): a function
    whose code is torch's and which wraps the very object we knew (as __wrapped__, or in its closure) is not the
    learner's doing."""
    import torch

    code = getattr(new, "__code__", None)
    if code is None or not code.co_filename.startswith(os.path.dirname(torch.__file__)):
        return False
    return getattr(new, "__wrapped__", None) is old or any(_holds(cell, old) for cell in
                                                          getattr(new, "__closure__", None) or ())


def _holds(cell, obj) -> bool:
    try:
        return cell.cell_contents is obj
    except ValueError:  # an empty cell
        return False


def _graders_own(new, old=_MISSING, *, _wrappers=set()) -> bool:
    """Whether `new` is one of the wrappers the grader itself puts in place while it measures (grader.engine.instruments
    counts synchronize() calls and the copies of torch.tensor(list)), around the very object `old`. The set of
    them is held in this function's defaults, and stand_in's, which learner code may not read (grader.guard.audit_hooks)."""
    return new in _wrappers and (old is _MISSING or getattr(new, "__wrapped__", None) is old)


@contextlib.contextmanager
def stand_in(owner, name: str, wrapper, *, _wrappers=_graders_own.__kwdefaults__["_wrappers"]):
    """Put the grader's `wrapper` of owner.name (functools.wraps of it) in place for the block, then put the
    original back: not tampering, by the learner or the grader, for verify()."""
    original = getattr(owner, name)
    assert wrapper.__wrapped__ is original
    inherited = isinstance(owner, type) and name not in vars(owner)  # torch.Tensor.new_tensor is TensorBase's
    _wrappers.add(wrapper)
    setattr(owner, name, wrapper)
    try:
        yield
    finally:
        if inherited:
            delattr(owner, name)  # inherited again, as before: a class's own copy of it would be a new method
        else:
            setattr(owner, name, original)
        _wrappers.discard(wrapper)


_SEALED_FUNCTIONS = ("_compare", "_torch_rewrapped", "_holds", "_graders_own", "_inherited", "_is_dunder",
                     "_same_data")


def _private_namespace() -> dict:
    """A copy of this module's globals for Baseline.sealed's compare, its helpers copies bound to it, with builtins
    and the modules it calls as they are now."""
    private = dict(globals())
    snapshot = types.SimpleNamespace
    private.update(__builtins__=dict(vars(builtins)), operator=snapshot(**vars(operator)),
                   types=snapshot(**vars(types)), os=snapshot(**{**vars(os), "path": snapshot(**vars(os.path))}))
    for name in _SEALED_FUNCTIONS:
        original = private[name]
        copy = types.FunctionType(original.__code__, private, original.__name__, original.__defaults__)
        copy.__kwdefaults__ = original.__kwdefaults__  # _graders_own's: the very set stand_in fills
        private[name] = copy
    return private


#: Set by the plugin once the grader is loaded; checked after every call of learner code (the plugin holds the
#: sealed compare, Baseline.sealed, which it runs after every check).
baseline: Baseline | None = None


def verify() -> None:
    """Raise IntegrityError if anything guarded was replaced since the baseline was taken."""
    changed = baseline.changed() if baseline is not None else []
    if changed:
        raise IntegrityError(tamper_message(changed))


def tamper_message(changed: list[str]) -> str:
    shown = ", ".join(changed[:6]) + (f" and {len(changed) - 6} more" if len(changed) > 6 else "")
    return (f"your code replaced {shown}, which the grader relies on. A fix never changes torch, pytest, "
            "builtins or the grader: undo that and fix the device bug itself.")


# --------------------------------------------------------------------------------------------------------
# Processes: a shared budget for every descendant of the grading worker
# --------------------------------------------------------------------------------------------------------
MAX_PROCESSES = 64
_SPAWN_EVENTS = {"os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "subprocess.Popen", "os.system",
                 "os.exec", "pty.spawn"}


def guard_processes(limit: int = MAX_PROCESSES) -> None:
    """From now on, this process and all its descendants may start at most `limit` processes in all (one
    counter in shared memory), and may not signal the process that runs the grader. Audit hooks cannot be
    removed, so learner code cannot lift the limit."""
    counter = mmap.mmap(-1, 8)  # anonymous and shared: forked children count into the same place
    parent = os.getppid()
    pack, unpack = struct.pack_into, struct.unpack_from

    def hook(event, args):
        if event in _SPAWN_EVENTS:
            n = unpack("q", counter, 0)[0] + 1
            pack("q", counter, 0, n)
            if n > limit:
                raise RuntimeError(f"the grader stopped your code from starting more than {limit} processes "
                                   "(a loop that starts processes?)")
        elif event in ("os.kill", "os.killpg") and args and args[0] in (parent, -parent, 0):
            raise PermissionError("your code may not signal the grader's processes")

    sys.addaudithook(hook)
