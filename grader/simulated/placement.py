"""CUDA's placement rules and their messages, with ``sim`` in place of ``cuda``.

Where CUDA checks devices decides the message, so each rule says which CUDA code it mirrors:

* TensorIterator ops (add, mul, copy_, ...): ``Expected all tensors to be on the same device, but found at
  least two devices, A and B!`` -- A is the device of the op (the first device tensor), B the odd one.
  A 0-dim CPU tensor is a scalar and mixes with device tensors; a 1-element 1-dim one does not.
* Ops whose CUDA kernels check devices in generated code (mm, addmm, index_select, nll_loss, ...):
  ``... but got <arg> is on X, different from other tensors on Y (when checking argument in method
  wrapper_CUDA_<op>)``.
* Convolutions: cuDNN compares tensor *types* (``Input type (torch.cuda.FloatTensor) and weight type
  (torch.FloatTensor) should be the same``); a CPU input with a device weight goes to the slow conv2d
  kernel, which uses the generated-code message.
* Indexing: CPU indices may index a device tensor; device indices into a CPU tensor fail.
* Generators: a random op on the device takes only a generator of that device type.
"""

from __future__ import annotations

import torch

from .config import DEVICE_TYPE

# ops whose CUDA kernels check devices in codegen (message style differs), name -> wrapper suffix
CODEGEN_CHECKED = {
    "addmm": "addmm", "mm": "mm", "bmm": "bmm", "baddbmm": "baddbmm",
    "addmv": "addmv", "index_select": "_index_select", "dot": "_dot",
    "embedding_dense_backward": "_embedding_dense_backward",
    "nll_loss_forward": "nll_loss_forward", "nll_loss2d_forward": "nll_loss2d_forward",
    "gather": "gather", "scatter_add_": "scatter_add_", "index_add_": "index_add_", "clamp": "clamp_Tensor",
    "_cdist_forward": "__cdist_forward", "bucketize": "Tensor_bucketize", "cat": "cat",
}
# ops whose CUDA kernels check the mask's device themselves
MASK_CHECKED = {"masked_fill", "masked_fill_"}

# ops that legitimately see CPU and device tensors together
MIXED_OK = {"_has_compatible_shallow_copy_type", "is_same_size", "set_"}
INDEX_OPS = {"index", "index_put", "index_put_", "_index_put_impl_", "_unsafe_index", "_unsafe_index_put"}


def same_device_error(a, b) -> RuntimeError:
    return RuntimeError(
        "Expected all tensors to be on the same device, but found at least two "
        f"devices, {a} and {b}!"
    )


def codegen_check(func, args, name) -> None:
    common = None
    schema_args = func._schema.arguments
    for i, arg in enumerate(args):
        # a list argument (cat's tensors) is checked element by element, under the list's name
        for a in arg if isinstance(arg, (list, tuple)) else (arg,):
            if not isinstance(a, torch.Tensor):
                continue
            d = a.device
            if common is None:
                common = d
            elif d != common:
                argname = schema_args[i].name if i < len(schema_args) else f"arg{i}"
                raise RuntimeError(
                    "Expected all tensors to be on the same device, but got "
                    f"{argname} is on {d}, different from other tensors on {common} "
                    f"(when checking argument in method wrapper_{DEVICE_TYPE.upper()}_{name})"
                )


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


def conv_check(args) -> None:
    x, w = args[0], args[1]
    b = args[2] if len(args) > 2 else None
    if x.device != w.device and x.device.type == "cpu" and x.dim() == 4:
        # CUDA (torch 2.11) routes a CPU input with a device weight to its slow conv2d kernel, which says so
        raise RuntimeError(
            f"Expected all tensors to be on the same device, but got weight is on {w.device}, different from "
            f"other tensors on cpu (when checking argument in method wrapper_{DEVICE_TYPE.upper()}___slow_conv2d_forward)"
        )
    if x.device != w.device:
        tail = " or input should be a MKLDNN tensor and weight is a dense tensor" if x.device.type == "cpu" else ""
        raise RuntimeError(f"Input type ({x.type()}) and weight type ({w.type()}) should be the same{tail}")
    if isinstance(b, torch.Tensor) and b.device != x.device:
        tail = " or input should be a MKLDNN tensor and bias is a dense tensor" if x.device.type == "cpu" else ""
        raise RuntimeError(f"Input type ({x.type()}) and bias type ({b.type()}) should be the same{tail}")


def check_mixed(func, name, args, common_dev, bad_dev) -> None:
    """Raise CUDA's error for an op that met tensors of two devices (``bad_dev``) or a non-scalar CPU
    tensor (``bad_dev`` None)."""
    cg = CODEGEN_CHECKED.get(name)
    if cg is not None:
        codegen_check(func, args, cg)
    if name == "embedding":
        embedding_check(args)
    if name in MASK_CHECKED:
        mask_check(args)
    if name == "convolution" or name == "convolution_backward":
        conv_check(args)
    if bad_dev is not None:
        raise same_device_error(common_dev, bad_dev)
    if name in INDEX_OPS:
        return  # CPU indices may index a device tensor (as on CUDA)
    if name not in MIXED_OK:
        # a non-scalar CPU tensor (or a CPU tensor as output) meets a device tensor
        raise same_device_error(common_dev, torch.device("cpu"))


def index_into_cpu_error(self_device) -> RuntimeError:
    return RuntimeError(
        "indices should be either on cpu or on the same device as the indexed tensor " f"({self_device})"
    )


def generator_device_error(found: str) -> RuntimeError:
    # aten/src/ATen/core/Generator.h check_generator: "Expected a 'cuda' device type for generator but found 'cpu'"
    return RuntimeError(f"Expected a '{DEVICE_TYPE}' device type for generator but found '{found}'")
