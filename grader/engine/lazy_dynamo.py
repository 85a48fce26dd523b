"""torch._dynamo, imported by a grading process only when learner code compiles.

Eager PyTorch asks torch._dynamo for two things: `disable(fn)` (every optimizer method is wrapped in
`torch._disable_dynamo`, which imports torch._dynamo at the first call) and `graph_break()` (each
`Optimizer.step`). Outside of torch.compile both change nothing: no frame is being traced, so a disabled
function runs as it is and a graph break is a no-op. Importing torch._dynamo for them costs 1.5 s on two cores,
as much as `import torch`, and so a learner's first check of an exercise that trains took twice as long as any
other first check.

`install()` (in the grading processes, right after `import torch`) puts a stand-in module in
`sys.modules["torch._dynamo"]`. It answers `disable` and `graph_break` as above while torch._dynamo is not
imported, and imports the real module the first time anything else is asked of it (`torch.compile`,
`torch._dynamo.config`, an import of a submodule); from then on every function it disabled is disabled by the
real `disable`, so code that compiles later behaves as if the real module had been there from the start.
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
import types

NAME = "torch._dynamo"
_lock = threading.RLock()
#: Submodules that the last import of the real package brought in (see _AlreadyImported).
_just_imported: set[str] = set()


class _StandIn(types.ModuleType):
    """torch._dynamo until something other than eager's two questions is asked of it."""

    def __getattr__(self, attr):  # only for what the stand-in does not define, __path__ included
        return getattr(_real(), attr)


def _real() -> types.ModuleType:
    """The real torch._dynamo, imported now if the stand-in is still in its place."""
    with _lock:
        current = sys.modules.get(NAME)
        if current is not None and not isinstance(current, _StandIn):
            return current
        before = set(sys.modules)
        sys.modules.pop(NAME, None)
        try:
            module = importlib.import_module(NAME)
        except BaseException:
            if current is not None:
                sys.modules[NAME] = current
            raise
        _just_imported.clear()
        _just_imported.update(n for n in set(sys.modules) - before if n.startswith(NAME + "."))
        return module


def _loaded() -> types.ModuleType | None:
    current = sys.modules.get(NAME)
    return None if isinstance(current, _StandIn) else current


def disable(fn=None, *args, **kwargs):
    """torch._dynamo.disable: a function to run as it is, unless torch._dynamo is imported by the time it runs."""
    real = _loaded()
    if real is not None or not isinstance(fn, types.FunctionType):  # a module, a class, a decorator call
        return (real or _real()).disable(fn, *args, **kwargs)
    disabled_by_real = []

    @functools.wraps(fn)
    def run(*a, **k):
        real = _loaded()
        if real is None:
            return fn(*a, **k)
        if not disabled_by_real:
            disabled_by_real.append(real.disable(fn, *args, **kwargs))
        return disabled_by_real[0](*a, **k)

    return run


def graph_break(*args, **kwargs) -> None:
    real = _loaded()
    if real is not None:
        real.graph_break(*args, **kwargs)


class _AlreadyImported(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """An import of a submodule with the stand-in as its parent reads the stand-in's __path__, which imports
    the real package, and with it, often, that very submodule. Python would then execute the submodule a
    second time, as a new module object; this finder gives the import system the one already there."""

    def find_spec(self, name, path, target=None):
        with _lock:
            if name not in _just_imported or name not in sys.modules:
                return None
            _just_imported.clear()  # the import that read __path__ comes right after it: only it is answered
            module = sys.modules[name]
            return importlib.machinery.ModuleSpec(name, self, loader_state=module.__spec__)

    def create_module(self, spec):
        return sys.modules[spec.name]

    def exec_module(self, module):
        spec = vars(module).get("__spec__")
        if spec is not None and spec.loader is self:  # the import system put ours in place of the module's own
            vars(module)["__spec__"] = spec.loader_state  # (in its __dict__: a config module refuses setattr)


def install() -> None:
    """Put the stand-in in place, unless torch._dynamo is already imported (then nothing is to be saved)."""
    import torch  # noqa: F401 - the stand-in's package

    with _lock:
        if NAME in sys.modules:
            return
        spec = importlib.util.find_spec(NAME)  # where it is, without running it
        stand_in = _StandIn(NAME, __doc__.split("\n")[0])
        stand_in.disable, stand_in.graph_break = disable, graph_break
        # What tools read from every module in sys.modules (inspect.getmodule, for one) must not import it.
        stand_in.__spec__, stand_in.__file__, stand_in.__package__ = spec, spec.origin, NAME
        sys.modules[NAME] = stand_in
        if not any(isinstance(f, _AlreadyImported) for f in sys.meta_path):
            sys.meta_path.insert(0, _AlreadyImported())


def stand_in_active() -> bool:
    return isinstance(sys.modules.get(NAME), _StandIn)
