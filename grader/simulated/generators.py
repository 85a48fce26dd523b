"""Device generators: ``torch.Generator(device='sim')``, ``torch.sim.manual_seed`` and the default
generator of each simulated device.

PyTorch's Python backend API cannot create a generator of the PrivateUse1 device: ``getDefaultGenerator``
and ``getNewGenerator`` of its Python hooks are not overridable from Python (torch/csrc/acc/Module.cpp,
"TODO(qihqi): these is not supported from python yet"), so ``torch._C.Generator(device='sim')`` raises
NotImplementedError.  The simulator works around it in Python:

* ``SimGenerator`` is a CPU generator (the device's data are CPU tensors) that reports ``device`` sim:N;
* ``torch.Generator`` is replaced by a stand-in class whose construction with a ``sim`` device returns a
  SimGenerator and otherwise the real ``torch._C.Generator`` (``isinstance(g, torch.Generator)`` holds for
  both);
* a random op on a sim tensor gets the device's default generator when none is given (so the device's
  random stream is its own, seeded by ``torch.manual_seed`` / ``torch.sim.manual_seed``, as on CUDA), and a
  CPU generator is refused with CUDA's message.  Generators come back from C++ as new Python wrappers, so
  they are recognised by their C++ address (``_cdata``).

* a sim generator given to a random op of the CPU is refused with CUDA's message ("Expected a 'cpu' device
  type for generator but found 'cuda'", as a DataLoader or random_split given torch.Generator(device='cuda')
  says). CPU ops never reach the simulator, so the Python functions that take a generator check it
  (``_CPU_RANDOM_FUNCTIONS``, ``_CPU_RANDOM_METHODS``).
"""

from __future__ import annotations

import functools
import weakref

import torch
from torch.utils._device import _device_constructors

from . import config
from .placement import generator_device_error

_CGenerator = torch._C.Generator
DEFAULT_SEED = 67280421310721  # c10::default_rng_seed_val, the initial seed of CUDA's default generators

_by_cdata: "weakref.WeakValueDictionary[int, SimGenerator]" = weakref.WeakValueDictionary()
defaults: list = []


class SimGenerator(_CGenerator):
    """A generator of a simulated device (a CPU generator underneath)."""

    def __new__(cls, idx=0, indexed=True):
        g = _CGenerator.__new__(cls)
        g._sim_idx = idx
        g._sim_indexed = indexed
        _by_cdata[g._cdata] = g
        return g

    def __init__(self, idx=0, indexed=True):
        pass

    @property
    def device(self):
        # As CUDA's: a generator made for 'cuda' reports device(type='cuda'), one made for 'cuda:1' cuda:1.
        return config.dev(self._sim_idx) if self._sim_indexed else torch.device(config.DEVICE_TYPE)

    def __reduce__(self):
        return (_rebuild, (self._sim_idx, self.get_state()))

    def __repr__(self):
        return f"<torch.Generator object on {self.device}>"


def _rebuild(idx, state):
    g = SimGenerator(idx)
    g.set_state(state)
    return g


def reset_defaults(count):
    defaults.clear()
    for i in range(count):
        g = SimGenerator(i)
        g.manual_seed(DEFAULT_SEED)
        defaults.append(g)


def default(idx):
    return defaults[idx]


def resolve(gen, idx):
    """The CPU generator to run a random op of device ``idx`` with (``gen`` as passed by the caller)."""
    if gen is None:
        return defaults[idx]
    sg = _by_cdata.get(gen._cdata)
    if sg is None:
        raise generator_device_error(str(gen.device.type))
    return gen


class _GeneratorMeta(type(_CGenerator)):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _CGenerator)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, _CGenerator)

    def __call__(cls, device="cpu"):
        dv = torch.device(device) if not isinstance(device, torch.device) else device
        if dv.type == config.DEVICE_TYPE:
            idx = config.index(dv)
            config.check_index(idx)
            return SimGenerator(idx, indexed=dv.index is not None)
        return _CGenerator(device)


class Generator(_CGenerator, metaclass=_GeneratorMeta):
    __doc__ = _CGenerator.__doc__


# name -> where the generator argument is when not passed by name (None: by name only)
_CPU_RANDOM_FUNCTIONS = {"randperm": None, "rand": None, "randn": None, "randint": None, "normal": None,
                         "bernoulli": None, "multinomial": None, "poisson": 1}
_CPU_RANDOM_METHODS = ("random_", "uniform_", "normal_", "bernoulli_", "exponential_", "geometric_", "cauchy_",
                       "log_normal_", "bernoulli", "multinomial")


def _runs_on_cpu(args, kwargs) -> bool:
    """Whether a random op runs on the CPU: that of its first tensor argument, else (a factory) its device."""
    for a in (*args, *kwargs.values()):
        if isinstance(a, torch.Tensor):
            return a.device.type == "cpu"
    device = kwargs.get("device") or config.default_device()
    return device is None or torch.device(device).type == "cpu"


def _refuses_device_generators(fn, position=None):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        g = kwargs.get("generator", args[position] if position is not None and len(args) > position else None)
        if g is not None and _by_cdata.get(getattr(g, "_cdata", None)) is not None and _runs_on_cpu(args, kwargs):
            raise RuntimeError(f"Expected a 'cpu' device type for generator but found '{config.DEVICE_TYPE}'")
        return fn(*args, **kwargs)

    return wrapper


def install():
    torch.Generator = Generator
    originals = set()
    for name, position in _CPU_RANDOM_FUNCTIONS.items():
        originals.add(getattr(torch, name))
        setattr(torch, name, _refuses_device_generators(getattr(torch, name), position))
    for name in _CPU_RANDOM_METHODS:
        setattr(torch.Tensor, name, _refuses_device_generators(getattr(torch.Tensor, name)))
    from torch.utils.data import dataset

    dataset.randperm = torch.randperm  # random_split's own reference, taken when torch was imported
    # torch.set_default_device fills in the device of these factories, which C++ names by the original builtins
    _device_constructors().update(originals)


# --- random-op plumbing used by the dispatcher ------------------------------------------------
_GEN_ARG: dict = {}


def gen_arg(func):
    """(position, name) of the Generator argument of ``func``, or None (cached)."""
    info = _GEN_ARG.get(func, 0)
    if info == 0:
        info = None
        for i, a in enumerate(func._schema.arguments):
            if "Generator" in str(a.type):
                info = (i, a.name, a.kwarg_only)
                break
        _GEN_ARG[func] = info
    return info


def fix_generator(info, args, kwargs, idx):
    """Put the device's generator into (args, kwargs) of a random op; returns new (args, kwargs)."""
    pos, name, kwarg_only = info
    if not kwarg_only and len(args) > pos:
        g = resolve(args[pos], idx)
        args = list(args)
        args[pos] = g
        return args, kwargs
    kwargs = dict(kwargs) if kwargs else {}
    kwargs[name] = resolve(kwargs.get(name), idx)
    return args, kwargs
