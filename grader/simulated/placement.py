"""CUDA's placement rules and their messages, with ``sim`` in place of ``cuda``.

Where CUDA checks devices decides the message, so each rule says which CUDA code it mirrors:

* TensorIterator ops (add, mul, copy_, ...): ``Expected all tensors to be on the same device, but found at
  least two devices, A and B!`` -- A is the device of the op (the first device tensor), B the odd one.
  A 0-dim CPU tensor is a scalar and mixes with device tensors; a 1-element 1-dim one does not.
* Ops whose CUDA kernels check devices in generated code (mm, addmm, index_select, nll_loss, layer_norm, ...;
  the table is generated from PyTorch's code generator): ``... but got <arg> is on X, different from other
  tensors on Y (when checking argument in method wrapper_CUDA_<op>)``. These refuse 0-dim CPU tensors too.
* Convolutions: cuDNN compares tensor *types* (``Input type (torch.cuda.FloatTensor) and weight type
  (torch.FloatTensor) should be the same``); a CPU input with a device weight goes to the CPU kernel torch
  selects for the input, which refuses it in its own words: generated-code messages for the slow kernels, the
  type comparison for mkldnn's, "Could not run" for slow_conv3d, which CUDA lacks.
* Indexing: CPU indices may index a device tensor; device indices into a CPU tensor fail; the values written
  through indices (``x[i] = v``) must be on the device unless 0-dim.
* Composite ops that CUDA runs through another kernel say what that kernel says (``mv`` is ``addmv_``).
* Generators: a random op on the device takes only a generator of that device type.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import torch

from .config import DEVICE_TYPE

# Ops whose CUDA kernels check devices in generated code: operator -> [wrapper name after "wrapper_CUDA_",
# the tensor arguments checked, in order]. Generated from PyTorch's own code generator by
# tools/codegen_device_checks.py; read on first use (an error, or a 0-dim CPU tensor given to a device op).
CODEGEN_TABLE = Path(__file__).with_name("codegen_checks.json")


@functools.cache
def _table() -> dict:
    return json.loads(CODEGEN_TABLE.read_text())


def _codegen_checks() -> dict:
    return _table()["ops"]


def ops_without_a_cuda_kernel() -> list[str]:
    """Operators with a CPU kernel and none for CUDA (torch.histogram): NotImplementedError on CUDA."""
    return _table()["cpu_only"]


@functools.cache
def op_key(func) -> str:
    """`name.overload` (or `name`), as PyTorch's tables name an operator."""
    schema = func._schema
    name = schema.name.split("::", 1)[-1]
    return f"{name}.{schema.overload_name}" if schema.overload_name else name


def codegen_checked(func):
    """(wrapper suffix, checked argument names) when CUDA's generated code checks this op's devices, else None."""
    return _codegen_checks().get(op_key(func))


# ops whose CUDA kernels check the mask's device themselves
MASK_CHECKED = {"masked_fill", "masked_fill_"}

# ops that legitimately see CPU and device tensors together
MIXED_OK = {"_has_compatible_shallow_copy_type", "is_same_size", "set_"}
INDEX_OPS = {"index", "index_put", "index_put_", "_index_put_impl_", "_unsafe_index", "_unsafe_index_put"}
INDEX_PUT_OPS = {"index_put", "index_put_", "_index_put_impl_", "_unsafe_index_put"}


def same_device_error(a, b) -> RuntimeError:
    return RuntimeError(
        "Expected all tensors to be on the same device, but found at least two "
        f"devices, {a} and {b}!"
    )


def argument_values(func, args, kwargs) -> dict:
    """The op's arguments by schema name (positional ones as passed, keyword-only ones such as out= by name)."""
    values = dict(kwargs or {})
    for i, arg in enumerate(func._schema.arguments):
        if i < len(args) and not arg.kwarg_only:
            values[arg.name] = args[i]
    return values


def codegen_check(func, args, kwargs, checked) -> None:
    """CUDA's generated check: each checked argument (a tensor list element by element, under the list's name)
    against the device of the first one; no exception for 0-dim CPU tensors."""
    suffix, names = checked
    values = argument_values(func, args, kwargs)
    _same_device_as_first([(name, values.get(name)) for name in names], suffix)


def _same_device_as_first(named, suffix, key=None) -> None:
    """`key`: the dispatch key in the wrapper's name (CUDA's, by default)."""
    common = None
    for argname, value in named:
        for a in value if isinstance(value, (list, tuple)) else (value,):
            if not isinstance(a, torch.Tensor):
                continue
            d = a.device
            if common is None:
                common = d
            elif d != common:
                raise RuntimeError(
                    "Expected all tensors to be on the same device, but got "
                    f"{argname} is on {d}, different from other tensors on {common} "
                    f"(when checking argument in method wrapper_{key or DEVICE_TYPE.upper()}_{suffix})"
                )


# An op that meets a sparse COO tensor, on any device, dispatches to CUDA's sparse kernels (key SparseCUDA),
# whose generated checks name that key. op -> the tensor arguments checked (recorded: the fidelity suite's
# sparse cases; _sparse_addmm is torch.sparse.mm's composite, which runs addmm).
SPARSE_CODEGEN = {"mm": ("mm", ("self", "mat2")), "addmm": ("addmm", ("self", "mat1", "mat2")),
                  "_sparse_addmm": ("addmm", ("self", "mat1", "mat2")),
                  "_sparse_coo_tensor_with_dims_and_tensors": ("_sparse_coo_tensor_with_dims_and_tensors",
                                                               ("indices", "values"))}
SPARSE_ADDS = {"add", "add_"}


def _is_sparse(a) -> bool:
    return isinstance(a, torch.Tensor) and a.layout is torch.sparse_coo


def sparse_check(func, name, args, kwargs) -> None:
    """CUDA's checks where a mix of devices meets its sparse kernels."""
    if name in SPARSE_CODEGEN and (name.startswith("_sparse_coo") or any(map(_is_sparse, args))):
        wrapper, names = SPARSE_CODEGEN[name]
        values = argument_values(func, args, kwargs)
        _same_device_as_first([(n, values.get(n)) for n in names], f"_{wrapper}", key=f"Sparse{DEVICE_TYPE.upper()}")
    if name in SPARSE_ADDS and len(args) > 1 and (_is_sparse(args[0]) or _is_sparse(args[1])):
        # add_out_sparse_cuda, and add_out_dense_sparse_cuda for a dense self (read in PyTorch's source; the
        # sparse + sparse case recorded)
        kind = DEVICE_TYPE.upper()
        self, other = args[0], args[1]
        if _is_sparse(self):
            if not _is_sparse(other):
                raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
            for argname, t in (("self", self), ("other", other)):
                if t.device.type == "cpu":
                    raise RuntimeError(f"add: expected '{argname}' to be {kind}, but got CPU")
        for argname, t in (("self", self), ("other", other)):
            if t.device.type == "cpu":
                raise RuntimeError(f"add: expected '{argname}' to be a {kind} tensor, but got a CPU tensor")


def mv_check(args) -> None:
    # CUDA has no mv kernel: its composite one calls addmv_(result, mat, vec) with result made like vec
    mat, vec = args[0], args[1]
    _same_device_as_first([("self", vec), ("mat", mat), ("vec", vec)], "addmv_")


def index_put_check(args, common_dev) -> None:
    # CPU indices are fine, CPU values are not (unless 0-dim): TensorIterator then meets the CPU tensor; with
    # accumulate=True, CUDA's sorting kernel checks the values first.
    values = args[2] if len(args) > 2 else None
    if isinstance(values, torch.Tensor) and values.device.type == "cpu" and values.dim() != 0:
        if len(args) > 3 and args[3]:
            raise RuntimeError(f"expected device {common_dev} but got device cpu for value tensor")
        raise same_device_error(common_dev, torch.device("cpu"))


def mask_check(args) -> None:
    self, mask = args[0], args[1]
    if isinstance(mask, torch.Tensor) and mask.device != self.device:
        raise RuntimeError(f"expected self and mask to be on the same device, but got mask on {mask.device} and "
                           f"self on {self.device}")


def embedding_check(args) -> None:
    if args[0].device != args[1].device:
        # CUDA's embedding runs index_select(weight, 0, indices)
        raise RuntimeError(
            "Expected all tensors to be on the same device, but got index is on "
            f"{args[1].device}, different from other tensors on {args[0].device} "
            f"(when checking argument in method wrapper_{DEVICE_TYPE.upper()}__index_select)"
        )


#: How the CPU kernel of a convolution refuses a device weight on CUDA (the kernel is picked by the input: a CPU
#: input with a device weight meets a CPU kernel, dispatched under CUDA's key): the name its generated device check
#: ends with, or None for a kernel CUDA lacks altogether (fidelity cases "...: a cpu input, the weight on the
#: device", recorded on H200s). Mkldnn and the others fall through to the type comparison (conv_check).
_CPU_KERNEL_CHECKS = {
    "Slow2d": "__slow_conv2d_forward",
    "SlowDilated2d": "_slow_conv_dilated2d",
    "SlowDilated3d": "_slow_conv_dilated3d",
    "SlowTranspose2d": "slow_conv_transpose2d",
    "SlowTranspose3d": "_slow_conv_transpose3d",
    "Slow3d": None,
}


def _cpu_conv_backend(x, w, args) -> str:
    """The kernel PyTorch picks for a convolution of a CPU input, asked of torch itself
    (at::native::select_conv_backend: by dtype, dilation, dimensions, threads, mkldnn's flags): "Slow2d",
    "SlowDilated2d", "Mkldnn", ..."""
    stride, padding, dilation, transposed, output_padding, groups = args[3:9]
    try:
        chosen = torch._C._select_conv_backend(x, w.to("meta"), None, stride, padding, dilation, transposed,
                                               output_padding, groups, None)
    except (RuntimeError, TypeError):  # shapes or arguments no kernel takes: the convolution's checks refuse them
        return "Empty"
    return "MkldnnTranspose" if int(chosen) == 9 else chosen.name  # the binding leaves 9 unnamed ('???')


def conv_check(args, forward: bool = True) -> None:
    x, w = args[0], args[1]
    b = args[2] if len(args) > 2 else None
    if forward and x.device.type == w.device.type == DEVICE_TYPE and torch.backends.cudnn.enabled \
            and not _conv_shapes_refused(w, b):
        # Two GPUs: the types agree (torch.cuda.FloatTensor both), so cuDNN's generated check speaks, and a
        # bias on another GPU meets the input in the add after it.
        suffix = "_cudnn_convolution_transpose" if len(args) > 6 and args[6] is True else "_cudnn_convolution"
        _same_device_as_first([("input", x), ("weight", w)], suffix)
        if isinstance(b, torch.Tensor) and b.device.type == DEVICE_TYPE and b.device != x.device:
            raise same_device_error(x.device, b.device)
    cpu_input = forward and x.device != w.device and x.device.type == "cpu"  # backward's arguments are others
    backend = _cpu_conv_backend(x, w, args) if cpu_input else None
    if backend == "Slow3d":
        raise NotImplementedError(f"Could not run 'aten::slow_conv3d_forward' with arguments from the "
                                  f"'{DEVICE_TYPE}' backend.")
    if backend in _CPU_KERNEL_CHECKS:
        raise RuntimeError(
            f"Expected all tensors to be on the same device, but got weight is on {w.device}, different from "
            f"other tensors on cpu (when checking argument in method "
            f"wrapper_{DEVICE_TYPE.upper()}_{_CPU_KERNEL_CHECKS[backend]})"
        )
    if x.device.type != w.device.type:  # the tensor types differ (torch.FloatTensor, torch.cuda.FloatTensor)
        tail = " or input should be a MKLDNN tensor and weight is a dense tensor" if x.device.type == "cpu" else ""
        raise RuntimeError(f"Input type ({x.type()}) and weight type ({w.type()}) should be the same{tail}")
    if isinstance(b, torch.Tensor) and b.device.type != x.device.type:
        tail = " or input should be a MKLDNN tensor and bias is a dense tensor" if x.device.type == "cpu" else ""
        raise RuntimeError(f"Input type ({x.type()}) and bias type ({b.type()}) should be the same{tail}")


def _conv_shapes_refused(w, b) -> bool:
    """Whether convolution's shape checks, which come before any device check, refuse this weight or bias."""
    return w.dim() < 3 or (isinstance(b, torch.Tensor) and b.dim() != 1)


def _check_as(kernel, values: dict) -> None:
    """The generated check of the kernel CUDA runs in place of this op, on the op's arguments by name."""
    suffix, names = codegen_checked(kernel)
    _same_device_as_first([(name, values.get(name)) for name in names], suffix)


def _cudnn_batch_norm_picked(v: dict) -> bool:
    """Whether CUDA runs a batch norm of these arguments (by name) with cuDNN (Normalization.cpp's
    _select_batch_norm_backend), whose generated check then speaks for it."""
    x, w, b, mean, var = (v.get(k) for k in ("input", "weight", "bias", "running_mean", "running_var"))
    training = bool(v.get("training", False))
    if not isinstance(x, torch.Tensor) or x.device.type != DEVICE_TYPE or w is None or b is None:
        return False
    return (x.dtype is not torch.bfloat16 and w.dtype is not torch.bfloat16
            and (x.dtype is not torch.float16 or w.dtype is torch.float32)
            and ((mean is not None and var is not None) or (mean is None and var is None and training))
            and x.dim() >= 3 and x.size(0) <= (880801 if training else 65535)
            and float(v.get("eps", 1e-5)) >= 1e-5 and torch.backends.cudnn.enabled and x.numel() < 2**31 - 1)


BATCH_NORMS = {"native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
               "_native_batch_norm_legit_functional"}


def check_mixed(func, name, args, kwargs, common_dev, bad_dev) -> None:
    """Raise CUDA's error for an op that met tensors of two devices (``bad_dev``) or a non-scalar CPU
    tensor (``bad_dev`` None)."""
    sparse_check(func, name, args, kwargs)
    if name in BATCH_NORMS and _cudnn_batch_norm_picked(values := argument_values(func, args, kwargs)):
        _check_as(torch.ops.aten.cudnn_batch_norm.default, values)
    if name == "stack":  # CUDA's stack is its cat kernel, writing into the stacked shape
        _check_as(torch.ops.aten.cat.default, {"tensors": args[0]})
    checked = codegen_checked(func)
    if checked is not None:
        codegen_check(func, args, kwargs, checked)
    if name == "embedding":
        embedding_check(args)
    if name in MASK_CHECKED:
        mask_check(args)
        if func in SCALAR_READERS and args[0].device == args[1].device and \
                argument_values(func, args, kwargs)["value"].dim() == 0:
            return  # the value is read on the host (value.item()), wherever it is
    if name == "convolution" or name == "convolution_backward":
        conv_check(args, forward=name == "convolution")
    if name == "mv":
        mv_check(args)
    if bad_dev is not None:
        if other_device_allowed(func, name, args, kwargs, common_dev):
            return
        first = FIRST_DEVICE_FROM.get(name)
        if first is not None and isinstance(t := argument_values(func, args, kwargs).get(first), torch.Tensor):
            common_dev, bad_dev = t.device, (bad_dev if t.device == common_dev else common_dev)
        raise same_device_error(common_dev, bad_dev)
    if name in INDEX_OPS:
        if name in INDEX_PUT_OPS:
            index_put_check(args, common_dev)
        return  # CPU indices may index a device tensor (as on CUDA)
    if name not in MIXED_OK:
        # a non-scalar CPU tensor (or a CPU tensor as output) meets a device tensor
        raise same_device_error(common_dev, torch.device("cpu"))


#: Ops that take 0-dim tensors of another device (recorded on two GPUs: tests/simulated/mix_sweep.py): `where`
#: moves each to its output's device (where_self_out), the others read them on the host (value.item(),
#: start.item()). Name -> the argument it applies to (None: any).
ZERO_DIM_FROM_ANYWHERE = {"where": None, "linspace": None, "logspace": None, "index_fill": "value",
                          "index_fill_": "value"}
#: Where CUDA's "found at least two devices, A and B" names first the device of this argument: its kernel
#: starts from it (rsub is other - self; bce_with_logits starts with 1 - target).
FIRST_DEVICE_FROM = {"rsub": "other", "binary_cross_entropy_with_logits": "target"}


def _off_device(values: dict, device) -> list:
    return [(k, t) for k, v in values.items() for t in (v if isinstance(v, (list, tuple)) else (v,))
            if isinstance(t, torch.Tensor) and t.device != device]


def other_device_allowed(func, name, args, kwargs, common_dev) -> bool:
    """Whether CUDA runs an op that met tensors of two devices (raising its own error where it has one)."""
    values = argument_values(func, args, kwargs)
    off = _off_device(values, common_dev)
    if name in ZERO_DIM_FROM_ANYWHERE:
        only = ZERO_DIM_FROM_ANYWHERE[name]
        return all(t.dim() == 0 and (only is None or k == only) for k, t in off)
    if name in ("index", "_unsafe_index"):
        if all(k == "indices" for k, _ in off):
            # index's meta function: indices on the CPU or on self's device (a mask becomes indices first)
            raise RuntimeError("indices should be either on cpu or on the same device as the indexed tensor "
                               f"({values['self'].device})")
    if name in INDEX_PUT_OPS:
        # make_info moves the indices to self's device, index_put_ a 0-dim value; a 0-dim self has no room for
        # an index, which the op says itself
        return values["self"].dim() == 0 or all(k == "indices" or (k == "values" and t.dim() == 0) for k, t in off)
    if name == "convolution":
        return _conv_shapes_refused(values["weight"], values.get("bias"))
    if name == "block_diag":
        tensors = values["tensors"]
        i = next(i for i, t in enumerate(tensors) if t.device != tensors[0].device)
        raise RuntimeError("torch.block_diag: input tensors must all be on the same device. Input 0 is on device "
                           f"{tensors[0].device} and input {i} is on device {tensors[i].device}")
    if name == "cholesky_solve":
        b, a = values["self"], values["input2"]
        if b.dim() < 2 or a.dim() < 2:
            return True  # the op's own shape check speaks first
        raise RuntimeError(f"Expected b and A to be on the same device, but found b on {b.device} and A on "
                           f"{a.device} instead.")
    return False


def check_cpu_scalars(func, args, kwargs, common_dev) -> None:
    """A 0-dim CPU tensor mixes with device tensors where TensorIterator checks devices, but not where CUDA's
    generated code does (torch.clamp(x, min=torch.tensor(0.)) fails on CUDA). TensorIterator takes one such
    tensor, and as an input only: not as the output of an in-place op (a CPU running total += a device loss)."""
    _, checked, exempt, writes_first = _scalar_rule(func)
    if checked is not None:
        codegen_check(func, args, kwargs, checked)
        return
    if exempt:
        return
    if writes_first and args and isinstance(args[0], torch.Tensor) and args[0].device.type == "cpu":
        raise same_device_error(common_dev, torch.device("cpu"))
    scalars = sum(1 for a in args if isinstance(a, torch.Tensor) and a.device.type == "cpu")
    if scalars > 1:
        raise RuntimeError("Trying to pass too many CPU scalars to non-CPU kernel!")


#: Ops that read a 0-dim tensor argument on the host (value.item()) instead of passing it to a kernel.
SCALAR_READERS = {torch.ops.aten.masked_fill_.Tensor, torch.ops.aten.masked_fill.Tensor}
#: Ops that copy their 0-dim CPU arguments to the device before their kernel (where_self_out).
MOVES_CPU_SCALARS = {torch.ops.aten.where.self, torch.ops.aten.where.self_out}
# id(op) -> (op, its generated check or None, exempt from TensorIterator's rules, writes its first argument).
# Every `x * 2` meets a wrapped CPU scalar here: looked up once per op (an op's hash and schema are Python code).
_SCALAR_RULES: dict = {}


def _scalar_rule(func) -> tuple:
    rule = _SCALAR_RULES.get(id(func))
    if rule is None:
        first = func._schema.arguments[0] if func._schema.arguments else None
        rule = (func, codegen_checked(func), func in SCALAR_READERS or func in MOVES_CPU_SCALARS,
                first is not None and first.alias_info is not None and first.alias_info.is_write)
        _SCALAR_RULES[id(func)] = rule
    return rule


#: CUDA kernels with fewer dtypes than the CPU's, whose dispatch macro then names itself: op -> (kernel
#: name, argument checked, dtypes refused). An integer matmul runs on the CPU, not on CUDA; nor do int32 class
#: labels (from NumPy, say) or float ones in nll_loss, whose CUDA kernels take Byte and Long targets only.
_INTEGERS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.bool)
_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
CUDA_DTYPE_KERNELS = {  # CUDA's kernel names, with {} for the device where they name it
    "mm": ("addmm_{}", 0, _INTEGERS),
    "addmm": ("addmm_{}", 1, _INTEGERS),
    "bmm": ("baddbmm_{}", 0, _INTEGERS),
    "baddbmm": ("baddbmm_{}", 1, _INTEGERS),
    "nll_loss_forward": (None, 1, (torch.int32, torch.int16, torch.int8, *_FLOATS)),
    "native_layer_norm": (None, 0, ()),
    # the CPU interpolates uint8 images; CUDA's kernels take floating types only
    "upsample_bilinear2d": ("upsample_bilinear2d_out_frame", 0, (torch.uint8,)),
    "upsample_bicubic2d": ("upsample_bicubic2d_out_frame", 0, (torch.uint8,)),
    "convolution": (None, 0, (torch.uint8,)),
}
_DTYPE_NAMES = {torch.uint8: "Byte", torch.int8: "Char", torch.int16: "Short", torch.int32: "Int",
                torch.int64: "Long", torch.bool: "Bool", torch.float16: "Half", torch.bfloat16: "BFloat16",
                torch.float32: "Float", torch.float64: "Double"}


def check_cuda_dtypes(name, args) -> None:
    """Refuse, as CUDA's dispatch macro does, a dtype this op's CUDA kernel was not built for."""
    kernel, position, refused = CUDA_DTYPE_KERNELS[name]
    if name == "native_layer_norm":  # CUDA's kernel takes a weight and bias of the input's dtype only
        x = args[0]
        for p in args[2:4]:
            if isinstance(p, torch.Tensor) and p.dtype != x.dtype and x.dtype in _DTYPE_NAMES:
                raise RuntimeError(f"expected scalar type {_DTYPE_NAMES[x.dtype]} but found "
                                   f"{_DTYPE_NAMES.get(p.dtype, p.dtype)}")
        return
    t = args[position] if len(args) > position else None
    if not isinstance(t, torch.Tensor) or t.dtype not in refused:
        return
    if name == "convolution":  # a uint8 image and uint8 weights reach cuDNN, which has no engine for them
        if isinstance(args[1], torch.Tensor) and args[1].dtype is torch.uint8:
            raise RuntimeError("GET was unable to find an engine to execute this computation")
        return
    if name == "nll_loss_forward":  # one kernel per input rank and reduction (LossNLL.cu)
        kind = ("reduce_{}_kernel_1d" if args[0].dim() <= 1 else
                "no_reduce_{}_kernel" if args[3] == 0 else "reduce_{}_kernel_2d")
        kernel = f"nll_loss_forward_{kind}_index"
    raise NotImplementedError(f'"{kernel.format(DEVICE_TYPE)}" not implemented for \'{_DTYPE_NAMES[t.dtype]}\'')


# Kernels that neither the CPU nor CUDA has for some dtype, by the CPU's name: CUDA's name ({} its device).
_CUDA_KERNEL_NAMES = {"cdist": "cdist_{}", "pdist": "pdist_{}", "avg_pool2d": "avg_pool2d_out_{}_frame"}
# The CPU kernel's words for a refusal that CUDA words otherwise (recorded: the fidelity suite's dtype cases).
_CPU_WORDING = [
    # mm: at::native's CPU check against CUDA's (Blas.cpp)
    (re.compile(r"^expected m1 and m2 to have the same dtype"), "expected mat1 and mat2 to have the same dtype"),
    (re.compile(rf'^"({"|".join(_CUDA_KERNEL_NAMES)})" not implemented for'),
     lambda m: m.group(0).replace(m.group(1), _CUDA_KERNEL_NAMES[m.group(1)].format(DEVICE_TYPE))),
    # a dtype check that names the tensor's type: the device's tensor types are torch.cuda.*Tensor
    (re.compile(r"but got torch\.(\w+Tensor) instead \(while checking arguments for"),
     lambda m: m.group(0).replace(f"torch.{m.group(1)}", f"torch.{DEVICE_TYPE}.{m.group(1)}")),
    (re.compile(r"^expand\(torch\.(\w+Tensor)\{"), lambda m: f"expand(torch.{DEVICE_TYPE}.{m.group(1)}{{"),
    # a dtype the kernel was not built for: kernels are named after their device (bitwise_and_cpu, _cuda)
    (re.compile(r'^"(\w+)_cpu" not implemented for'), lambda m: f'"{m.group(1)}_{DEVICE_TYPE}" not implemented for'),
]


def cuda_wording(exc: BaseException) -> BaseException | None:
    """CUDA's wording of the error a CPU kernel raised for an op on the device, or None where they agree."""
    if not isinstance(exc, RuntimeError) or not exc.args or not isinstance(exc.args[0], str):
        return None
    text = exc.args[0]
    for pattern, replacement in _CPU_WORDING:
        new = pattern.sub(replacement, text, count=1)
        if new != text:
            return type(exc)(new)
    return None


def index_into_cpu_error(self_device) -> RuntimeError:
    return RuntimeError(
        "indices should be either on cpu or on the same device as the indexed tensor " f"({self_device})"
    )


def generator_device_error(found: str) -> RuntimeError:
    # aten/src/ATen/core/Generator.h check_generator: "Expected a 'cuda' device type for generator but found 'cpu'"
    return RuntimeError(f"Expected a '{DEVICE_TYPE}' device type for generator but found '{found}'")
