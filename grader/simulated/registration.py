"""Process-wide registration of the simulated device (called once, by ``install``).

What it changes in the process, and why each is needed:

* the PrivateUse1 slot is renamed ``sim``, with torch.sim (device_module.py), the Python hooks and device
  guard, and PrivateUse1 kernels for ``empty``/``empty_strided``/copies/``_local_scalar_dense`` (tensor.py);
* the CPU kernels of ``is_pinned`` / ``_pin_memory``, and the factories that take ``pin_memory=True``
  (``torch.empty``, ``torch.zeros``, ``x.new_empty``...), which would ask C++ for the pinned allocator that a
  Python backend cannot register (pinned.py);
* ``torch.Generator`` / ``torch.Stream`` / ``torch.Event`` become stand-ins that return sim objects for a
  sim device (generators.py, streams.py) and the real classes otherwise;
* ``torch._C._accelerator_*`` serve the sim (accelerator.py), autocast kernels on AutocastPrivateUse1
  (autocast.py);
* a first (CPU) backward runs before the device guard exists, so that the engine starts no device thread
  (forked children can still run backward);
* every backward runs with autograd multithreading off: the Python device guard reports one device, so
  the engine has a device queue for sim:0 only and would assert on sim:1 (and on sim:0 when the first
  backward of the process ran before install).  Without device threads, backward runs on the calling
  thread -- also safe across fork;
* ``Module._apply`` keeps parameter identity when moving between the CPU and sim (as ``param.data = ...`` does
  on CUDA): wrapper tensors cannot share a TensorImpl type with CPU tensors, so without this ``model.to('sim')``
  would create new Parameter objects and an optimizer built before the move would silently update the
  old CPU ones.  Parameters are swapped in place (``torch.utils.swap_tensors``) instead, and so are tensors
  whose ``.data`` is set to a tensor of the other kind (``p.data = p.data.to('sim')``), whose ``.grad`` stays on
  the device it was on, as on CUDA (grad_left_behind.py). A move to or from meta makes new Parameter objects,
  as on CUDA (meta shares a TensorImpl type with neither). A TorchScript module's
  parameters, which its C++ module holds too, are replaced instead (LIMITS['script_module_identity']);
* a hook of a device tensor that raises during backward stops it with its exception (hook_errors.py);
* a TorchScript module's call puts back the message of an error raised inside it (script_errors.py);
* ``Tensor.to`` / ``torch.tensor`` / ``torch.as_tensor`` give an index-less ``sim`` the current device
  (C++ would fill in the guard's answer, always 0); ``x.new_tensor(data)`` lands on ``x.device`` (C++ sets
  a device guard to x's device there); ``torch.set_default_device`` still fills in their device;
* ``torch.ctc_loss`` reads length tensors into lists, as it does for any tensor but a subclass;
* ``F.scaled_dot_product_attention`` refuses a mask on another device as the fused kernel CUDA would pick
  does (sdpa.py);
* ``torch.load`` with a ``map_location`` naming sim keeps storages on the CPU and moves the tensors
  (serialization.py): the Python backend cannot allocate device storages;
* a fork hook (``os.register_at_fork``) marks a child forked after this process made a device tensor as a
  "bad fork", as torch.cuda does: device factories and copies to the device raise CUDA's "Cannot
  re-initialize ... in forked subprocess" there (a DataLoader worker re-raises it in the parent).  A child
  forked on purpose (the grader's workers) calls ``grader.simulated.reset_after_fork()``;
* ``torch.nn.parallel.comm``'s scatter, gather and broadcasts (and ``torch.cuda.comm``'s) handle sim tensors
  (comm.py): CUDA's are C++ for CUDA tensors, so ``nn.DataParallel`` could not run on two sim devices;
* ``SimTensor`` joins the optimizers' foreach-supported tensor types (a CUDA parameter's type is
  Parameter, a sim parameter's is SimTensor), so optimizers pick the same foreach path as on CUDA and
  fail the same way on state left on the CPU.
"""

from __future__ import annotations

import functools
import os
import re
import warnings

import torch
import torch.nn.functional as F
from torch.utils._device import _device_constructors

from . import (accelerator, autocast, comm, config, generators, grad_left_behind, gradients, half_fft, hook_errors,
               pinned, races, script_errors, sdpa, serialization, streams)
from .clock import clock
from .device_module import _DeviceModule
from .pinned import is_pinned_kernel, pin_memory_kernel
from .tensor import (
    COMPUTED_FACTORIES,
    SimTensor,
    computed_factory,
    copy_from_and_resize_kernel,
    copy_from_kernel,
    empty_memory_format,
    efficientzerotensor,
    empty_strided,
    local_scalar_dense_kernel,
    reset_allocators,
)

_LIBS = []


class _Hooks(torch._C._acc.PrivateUse1Hooks):
    def is_available(self):
        return config.USABLE[0]

    def has_primary_context(self, dev_id):
        return True

    def is_built(self):
        return True


class _Guard(torch._C._acc.DeviceGuard):
    def type_(self):
        return torch._C._autograd.DeviceType.PrivateUse1


def _single_threaded_backward(run):
    @functools.wraps(run)
    def wrapper(*args, **kwargs):
        prev = torch._C._is_multithreading_enabled() if hasattr(torch._C, "_is_multithreading_enabled") else True
        torch._C._set_multithreading_enabled(False)
        try:
            result = run(*args, **kwargs)
        except BaseException as exc:
            raised_by_hook = hook_errors.take_pending()  # the engine stopped at a hook or kernel (hook_errors.py)
            if raised_by_hook is not None:
                raise raised_by_hook from None
            if isinstance(exc, RuntimeError):
                _name_tensor_types_as_cuda_does(exc)
            raise
        finally:
            torch._C._set_multithreading_enabled(prev)
        deferred = hook_errors.take_pending()  # a kernel whose result the dispatcher ignores (an op returning None)
        if deferred is not None:
            raise deferred
        return result

    return wrapper


_CXX_TYPE_NAME = re.compile(rf"\b{config.DEVICE_TYPE}(\w+?)Type\b")


def _name_tensor_types_as_cuda_does(exc: RuntimeError) -> None:
    """C++ names a PrivateUse1 tensor's type "simFloatType" where it names a CUDA one "torch.cuda.FloatTensor" (a
    backward hook that changed a gradient's type, say)."""
    if exc.args and isinstance(exc.args[0], str):
        text = _CXX_TYPE_NAME.sub(rf"torch.{config.DEVICE_TYPE}.\1Tensor", exc.args[0])
        exc.args = (text, *exc.args[1:])


def _patch_autograd():
    torch._C._set_multithreading_enabled(False)  # this thread, for direct engine calls
    import torch.autograd as ag

    ag._engine_run_backward = _single_threaded_backward(ag._engine_run_backward)


def _patch_module_apply():
    import torch.nn.modules.module as mm
    from torch.utils import _python_dispatch as pd

    orig = pd.is_traceable_wrapper_subclass
    moved_from = [None]  # the device type of the tensor Module._apply last gave fn

    def is_traceable_wrapper_subclass(t):
        # Module._apply swaps a parameter in place when the new tensor "is a wrapper subclass". On CUDA it keeps
        # the Parameter object (set_data) where the old and new tensors share a TensorImpl type: between cpu and
        # the device, both ways. meta shares it with neither, so a move to or from meta makes new Parameter
        # objects there (compute_should_use_set_data), as it does here when this answers False.
        if type(t) is SimTensor or moved_from[0] == config.DEVICE_TYPE:
            return t.device.type != "meta" and moved_from[0] != "meta"
        return orig(t)

    mm.is_traceable_wrapper_subclass = is_traceable_wrapper_subclass
    orig_apply = torch.nn.Module._apply

    @functools.wraps(orig_apply)
    def _apply(self, fn, recurse=True):
        if isinstance(self, torch.jit.ScriptModule):
            # TorchScript's C++ module holds each parameter too, so none can be swapped: replace them by new
            # Parameter objects, as Module._apply does without swapping (LIMITS['script_module_identity'])
            mm.is_traceable_wrapper_subclass = orig
            try:
                return orig_apply(self, fn, recurse)
            finally:
                mm.is_traceable_wrapper_subclass = is_traceable_wrapper_subclass

        def remembering(t):
            moved_from[0] = t.device.type
            return fn(t)

        try:
            return orig_apply(self, remembering, recurse)
        finally:
            moved_from[0] = None

    torch.nn.Module._apply = _apply


def _patch_set_data():
    """``x.data = y``. Between two sim tensors, C++ re-points the wrapper and Python what it wraps. Between a CPU
    tensor and a sim one: CUDA and CPU tensors share one TensorImpl type, so C++
    re-points x at y's data (``p.data = p.data.to(device)`` moves a parameter in place); a wrapper tensor has
    another type, which C++ refuses ("incompatible tensor type"). Swap the contents instead, as Module._apply
    does here: x keeps its identity, its parameter-ness, requires_grad and .grad (which CUDA leaves where it
    was, and which moves with the data here when the .grad setter refuses the other device)."""
    base = torch._C.TensorBase.data
    get, set_ = base.__get__, base.__set__

    def set_data(self, value):
        if type(self) is SimTensor and type(value) is SimTensor:
            # C++ re-points the wrapper (shape, device); what it wraps is Python's to re-point: the data, the
            # device index and the allocator block (freed here when nothing else holds it, as on CUDA)
            set_(self, value)
            self._data, self._idx, self._mem = value._data, value._idx, value._mem
            return
        if not isinstance(value, torch.Tensor) or (type(self) is SimTensor) == (type(value) is SimTensor):
            return set_(self, value)
        new = value.detach()
        new = (torch.nn.Parameter(new, requires_grad=self.requires_grad) if isinstance(self, torch.nn.Parameter)
               else new.requires_grad_(self.requires_grad))
        grad, self.grad = self.grad, None  # a reference to self's data would stop the swap
        torch.utils.swap_tensors(self, new)
        if grad is not None:
            _restore_grad(self, grad)

    torch.Tensor.data = property(get, set_data, doc=base.__doc__)


def _restore_grad(tensor, grad):
    """Put back a .grad kept across a move of tensor's data: where it was, as set_data leaves it on CUDA."""
    try:
        tensor.grad = grad
    except RuntimeError:  # the device check of the .grad setter, which set_data does not make
        grad_left_behind.leave(tensor, grad)


def _patch_optim():
    from torch.optim import optimizer as opt_mod

    if SimTensor not in opt_mod._foreach_supported_types:
        opt_mod._foreach_supported_types.append(SimTensor)


def _with_current(d):
    if type(d) is str and d == config.DEVICE_TYPE:
        return config.dev(config.CURRENT[0])
    if type(d) is torch.device and d.type == config.DEVICE_TYPE and d.index is None:
        return config.dev(config.CURRENT[0])
    return d


def _current_device_wrapper(fn, device_pos, by_default=False):
    """`by_default`: fn is one of the constructors torch.set_default_device fills in, which it does with the
    index-less default ("sim") after this wrapper has run: use the current device's index here instead."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if config.CURRENT[0]:
            if "device" in kwargs:
                kwargs["device"] = _with_current(kwargs["device"])
            elif len(args) > device_pos:
                args = list(args)
                args[device_pos] = _with_current(args[device_pos])
            elif by_default and (default := config.default_device()) is not None:
                kwargs["device"] = _with_current(default)
        return fn(*args, **kwargs)

    return wrapper


def _new_tensor_on_self(fn):
    # x.new_tensor(data) runs under a device guard set to x's device (THPVariable_new_tensor), so its
    # index-less default lands on x.device; the Python backend's guard always answers 0 (sim:1 -> sim:0).
    # new_ones/new_zeros/new_full/new_empty are aten ops and need nothing.
    @functools.wraps(fn)
    def new_tensor(self, data, *args, **kwargs):
        d = kwargs.get("device")
        if d is None or _with_current(d) is not d:  # no device, or an index-less sim one
            if type(self) is SimTensor or isinstance(self, SimTensor):
                kwargs["device"] = self.device
            elif d is not None:
                kwargs["device"] = _with_current(d)
        return fn(self, data, *args, **kwargs)

    return new_tensor


def _patch_current_device():
    # C++ fills a missing device index from the device guard (ensure_has_index in TensorConversions.cpp,
    # tensor_new.cpp), and the Python backend's guard always answers 0: without this, x.to("sim"),
    # model.to("sim") and torch.tensor(..., device="sim") would ignore torch.sim.set_device(1).  The
    # wrappers only act while the current device is not 0.
    torch.Tensor.to = _current_device_wrapper(torch.Tensor.to, 1)
    torch.Tensor.new_tensor = _new_tensor_on_self(torch.Tensor.new_tensor)
    originals = {torch.tensor, torch.as_tensor}
    torch.tensor = _current_device_wrapper(torch.tensor, 99, by_default=True)
    torch.as_tensor = _current_device_wrapper(torch.as_tensor, 2, by_default=True)
    script_errors.keep_builtin(torch.tensor)
    script_errors.keep_builtin(torch.as_tensor)
    # torch.set_default_device fills in the device of the functions in this set (cached at its first use),
    # which C++ names by the original builtins.
    _device_constructors().update(originals)


def _ctc_loss_with_length_lists(fn):
    # For ordinary tensors, ctc_loss copies length tensors to the CPU and goes on with lists (LossCTC.cpp);
    # it keeps them as tensors only for tensor subclasses, such as this device's, on a path whose kernels
    # refuse CPU lengths beside device log_probs. Take the ordinary path: copy and read them as CUDA does.
    @functools.wraps(fn)
    def ctc_loss(log_probs, targets, input_lengths, target_lengths, *args, **kwargs):
        lengths = (input_lengths, target_lengths)
        if (any(isinstance(t, SimTensor) for t in (log_probs, targets, *lengths))
                and all(isinstance(t, torch.Tensor) and not t.is_floating_point() and not t.is_complex()
                        and t.dtype is not torch.bool for t in lengths)):
            input_lengths, target_lengths = (t.to("cpu", torch.long).tolist() for t in lengths)
        return fn(log_probs, targets, input_lengths, target_lengths, *args, **kwargs)

    return ctc_loss


def _start_autograd_engine():
    # The engine starts its device threads once, at the first backward of the process, one per device of
    # the device guards registered then.  Run that first backward before sim has a guard: with no other
    # accelerator, no device thread is started (sim's backward runs on the calling thread anyway), so a
    # process that ran backward on sim can still fork workers that run backward ("Unable to handle
    # autograd's threading in combination with fork-based multiprocessing" otherwise).
    x = torch.ones(1, requires_grad=True)
    x.sum().backward()


def register(count: int, profile: str, capacity=None) -> None:
    from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

    _start_autograd_engine()
    config.configure(count, profile)
    clock.reset(count)
    reset_allocators(count, capacity)
    generators.reset_defaults(count)
    streams.reset()
    races.reset()
    _setup_privateuseone_for_python_backend(
        rename=config.DEVICE_TYPE, backend_module=_DeviceModule(), hook=_Hooks(), device_guard=_Guard()
    )
    lib = torch.library.Library("aten", "IMPL")
    lib.impl("empty.memory_format", empty_memory_format, "PrivateUse1")
    lib.impl("empty_strided", empty_strided, "PrivateUse1")
    lib.impl("_efficientzerotensor", efficientzerotensor, "PrivateUse1")
    for op in COMPUTED_FACTORIES:
        lib.impl(op, computed_factory(op), "PrivateUse1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.impl("is_pinned", is_pinned_kernel, "CPU")
        lib.impl("_pin_memory", pin_memory_kernel, "CompositeExplicitAutograd")
    # Reached when the Python key is excluded: torch.tensor([sim_scalar, ...]) converts its items that
    # way (via item(), like on CUDA), and torch.tensor(data, device="sim") copies that way.
    lib.impl("_local_scalar_dense", local_scalar_dense_kernel, "PrivateUse1")
    lib.impl("_copy_from", copy_from_kernel, "PrivateUse1")
    lib.impl("_copy_from_and_resize", copy_from_and_resize_kernel, "PrivateUse1")
    _LIBS.append(lib)
    autocast.install()
    accelerator.install()
    generators.install()
    half_fft.install()
    streams.install()
    comm.install()
    _patch_autograd()
    gradients.install()
    _patch_module_apply()
    script_errors.install()
    _patch_set_data()
    grad_left_behind.answer_with_grad(SimTensor)
    hook_errors.install(SimTensor)
    _patch_optim()
    _patch_current_device()
    pinned.install()  # after _patch_current_device, which keeps torch.tensor's builtin for set_default_device
    torch.ctc_loss = _ctc_loss_with_length_lists(torch.ctc_loss)
    F.scaled_dot_product_attention = sdpa.with_cuda_kernel_checks(F.scaled_dot_product_attention)
    serialization.install_map_location()
    os.register_at_fork(after_in_child=config.after_fork_in_child)
