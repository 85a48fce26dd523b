"""What the learner's functions return is checked as what it is, never asked.

A check reads a result through torch's accessors (`t.device`, `t.is_pinned()`, `torch.allclose`) and Python's
operators. An object of the learner's own class could answer those itself: a Tensor subclass whose `device`
property lies or whose `__torch_function__` answers `allclose` with True, a `float` subclass whose `__mul__`
returns 0, a Module whose `parameters()` hides a parameter left on the CPU, a DataLoader subclass whose
`pin_memory` says True. So every value a learner function returns is vetted before any check sees it: tensors
must be of the exact types the leg produces (torch.Tensor, nn.Parameter, or the simulator's tensor on its
legs), numbers of Python's own types (NumPy's scalars are converted, as `float()` would), modules may not
override how torch lists their parameters, buffers and submodules (whose tensors are then vetted too), and a
DataLoader must be a DataLoader. Containers (tuple, list, dict) are vetted element by element.
"""

from __future__ import annotations

import itertools
import numbers
import os
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset


class UntrustedValue(Exception):
    """A returned value of a kind the grader does not take at its word; the message says which and why."""


#: Module methods through which checks (and torch) list a model's tensors: a class of the learner's may not
#: define its own.
_MODULE_LISTINGS = ("parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children",
                    "modules", "named_modules", "state_dict", "__getattr__", "__getattribute__", "__dir__",
                    "__class__")
_MAX_ITEMS = 100_000  # a result with more parts than this is vetted in its first ones only


def _tensor_types() -> tuple[type, ...]:
    types: list[type] = [torch.Tensor, torch.nn.Parameter]
    buffer = getattr(torch.nn, "Buffer", None)
    if isinstance(buffer, type):
        types.append(buffer)
    simulator = sys.modules.get("grader.simulated.tensor")  # loaded where the simulated legs run, and only there
    if simulator is not None:
        types.append(simulator.SimTensor)
    return tuple(types)


def vetted(value, what: str = "the returned value"):
    """`value` if the grader may read it with torch's and Python's own accessors (NumPy scalars become Python
    numbers); else UntrustedValue."""
    budget = [_MAX_ITEMS]
    return _vet(value, what, _tensor_types(), budget, set())


def _vet(value, what, tensor_types, budget, seen):
    budget[0] -= 1
    if budget[0] < 0:
        return value
    kind = type(value)
    if kind in (float, int, bool, str, bytes, complex, type(None), torch.device, torch.dtype):
        return value
    if isinstance(value, torch.Tensor):
        if kind not in tensor_types:
            raise UntrustedValue(f"{what} is a {kind.__qualname__}, a subclass of torch.Tensor: the grader takes "
                                 "plain tensors only, since a subclass can change what torch reports about it. "
                                 "Return the tensor itself.")
        return value
    if isinstance(value, numbers.Number):
        return _number(value, what)
    if isinstance(value, (str, bytes)):
        raise UntrustedValue(f"{what} is a {kind.__qualname__}, a class of your own that poses as text: return "
                             "a plain str.")
    if id(value) in seen:
        return value
    seen.add(id(value))
    if isinstance(value, (tuple, list)):
        _refuse_own_container(value, what)
        items = [_vet(v, f"{what}[{i}]", tensor_types, budget, seen)
                 for i, v in enumerate(tuple.__iter__(value) if isinstance(value, tuple) else list.__iter__(value))]
        if kind in (tuple, list) and any(a is not b for a, b in zip(items, value)):
            return kind(items)
        return value
    if isinstance(value, dict):
        _refuse_own_container(value, what)
        new = {k: _vet(v, f"{what}[{k!r}]", tensor_types, budget, seen) for k, v in list(dict.items(value))}
        if kind is dict and any(new[k] is not dict.__getitem__(value, k) for k in new):
            return new
        return value
    if isinstance(value, torch.nn.Module):
        _vet_module(value, what, tensor_types, budget, seen)
        return value
    if isinstance(value, DataLoader) and kind is not DataLoader:
        raise UntrustedValue(f"{what} is a {kind.__qualname__}, a subclass of DataLoader: return a "
                             "torch.utils.data.DataLoader itself, which the grader can inspect.")
    return value


#: What a container's own class may not redefine: how its items are reached and compared.
_CONTAINER_ACCESS = ("__getitem__", "__iter__", "__len__", "__eq__", "__ne__", "__contains__", "__getattribute__",
                     "__getattr__", "items", "values", "keys", "get", "__class__")


def _refuse_own_container(value, what) -> None:
    """A tuple, list or dict of a subclass (a namedtuple, torch's OrderedDict of a state_dict) is read like its
    base; a subclass that redefines how its items are read is the learner's word, not its contents."""
    redefined = _redefined_by_own_classes(value, _CONTAINER_ACCESS)
    if redefined:
        raise UntrustedValue(f"{what} is a {type(value).__qualname__} whose class redefines "
                             f"{', '.join(redefined)}: return a plain tuple, list or dict.")


def _redefined_by_own_classes(value, names) -> list[str]:
    """Which of `names` a class of the value's that torch or the standard library did not define (one of the
    learner's) defines itself, from the value's own class up."""
    for cls in type(value).__mro__:
        if not _torch_or_stdlib(cls):
            redefined = [name for name in names if name in vars(cls)]
            if redefined:
                return redefined
    return []


def _torch_or_stdlib(cls) -> bool:
    """A class that torch or the standard library defines (not one of the learner's posing under its name)."""
    module = sys.modules.get(cls.__module__)
    if module is None or getattr(module, cls.__name__, None) is not cls:
        return False
    path = getattr(module, "__file__", None) or ""
    return cls.__module__ in sys.stdlib_module_names or cls.__module__.split(".")[0] in (
        "torch", "collections", "typing") or path.startswith(_TORCH_DIR)


_TORCH_DIR = os.path.dirname(torch.__file__)


def _number(value, what):
    """NumPy's scalars (np.float64 is even a float subclass) become the Python number they stand for; a class of
    the learner's that poses as a number is refused."""
    module = type(value).__module__ or ""
    if module == "numpy" or module.startswith("numpy."):
        return value.item()
    raise UntrustedValue(f"{what} is a {type(value).__qualname__}, a class of your own that poses as a number: "
                         "return a Python float or int (float(x)), which the grader can compare.")


def _vet_module(module, what, tensor_types, budget, seen):
    overridden = _redefined_by_own_classes(module, _MODULE_LISTINGS)
    if overridden:
        raise UntrustedValue(f"{what} is a {type(module).__qualname__} whose class defines "
                             f"{', '.join(overridden)}: torch lists a model's parameters, buffers and "
                             "submodules itself, and the grader reads them through it. Remove that method.")
    for name, tensor in list(torch.nn.Module.named_parameters(module)) + list(torch.nn.Module.named_buffers(module)):
        _vet(tensor, f"{what}'s {name}", tensor_types, budget, seen)


class CpuArguments:
    """The CPU tensors a learner function is given (directly, in tuples, lists and dicts at any depth, or in a
    DataLoader over a TensorDataset), as they were before the call. On the CPU leg the grader's reference inputs
    are those very tensors (`x.to("cpu")` returns x), and a loader's data is on the CPU on every leg, so a call
    that wrote into them (lengths.fill_(T), or through .numpy(), which no version counter sees) made the reference
    computed afterwards agree with a wrong result. The copies are made with the grader's counting modes off: they
    are not the learner's work."""

    MAX_TENSORS, MAX_BYTES = 256, 256 * 2**20

    def __init__(self, args, kwargs):
        from torch.utils._python_dispatch import _disable_current_modes

        self.kept: list[tuple[str, torch.Tensor, torch.Tensor]] = []
        found: list[tuple[str, torch.Tensor]] = []
        _cpu_tensors(list(args) + list(kwargs.values()), [f"argument {i + 1}" for i in range(len(args))]
                     + [f"argument {k}" for k in kwargs], found)
        budget = self.MAX_BYTES
        with _disable_current_modes(), torch.no_grad():
            for where, t in found[:self.MAX_TENSORS]:
                size = t.numel() * t.element_size()
                if size > budget:
                    break
                budget -= size
                self.kept.append((where, t, t.detach().clone()))

    def changed(self) -> str | None:
        """The first argument whose values changed since, in words; None if none did."""
        from torch.utils._python_dispatch import _disable_current_modes

        with _disable_current_modes(), torch.no_grad():
            for where, t, before in self.kept:
                if t.device != before.device:
                    continue  # moved off the CPU (t.data = t.data.to(device)): not the values the reference reads
                try:
                    same = _same(t.detach(), before)
                except Exception:  # a tensor that cannot be compared with what it was is not what it was
                    same = False
                if not same:
                    return where
        return None


def _cpu_tensors(values, names, found):
    """The CPU tensors in `values`, with where each was found: at any depth of tuples, lists and dicts (their
    subclasses too: a namedtuple, a state_dict's OrderedDict), and in a DataLoader over a TensorDataset. Containers
    are read through their base classes, so no method of a learner's class runs, and each once (a cycle ends)."""
    stack, seen, budget = list(zip(values, names))[::-1], set(), _MAX_ITEMS
    while stack and budget > 0 and len(found) < CpuArguments.MAX_TENSORS:
        value, where = stack.pop()
        budget -= 1
        if type(value) in (torch.Tensor, torch.nn.Parameter):
            if value.device.type == "cpu" and value.layout == torch.strided and not value.is_meta:
                found.append((where, value))
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, (tuple, list)):
            items = tuple.__iter__(value) if isinstance(value, tuple) else list.__iter__(value)
            parts = [(v, f"{where}[{i}]") for i, v in itertools.islice(enumerate(items), budget)]
        elif isinstance(value, dict):
            parts = [(v, f"{where}[{_key(k)}]") for k, v in itertools.islice(dict.items(value), budget)]
        elif type(value) is DataLoader:  # the grader's loader over its data, which its reference may read again
            parts = [(vars(value).get("dataset"), f"{where}.dataset")]
        elif type(value) is TensorDataset:
            parts = [(v, f"{where}.tensors[{i}]") for i, v in enumerate(vars(value).get("tensors", ()))]
        else:
            continue
        stack.extend(reversed(parts))


def _key(key) -> str:
    return repr(key) if type(key) in (str, int, float, bool, type(None)) else f"<a {type(key).__name__} key>"


def _same(now: torch.Tensor, before: torch.Tensor) -> bool:
    if now.shape != before.shape or now.dtype != before.dtype:
        return False
    if torch.equal(now, before):
        return True
    return bool(now.is_floating_point() or now.is_complex()) and torch.equal(now.isnan(), before.isnan()) and \
        torch.equal(now.nan_to_num(), before.nan_to_num())
