"""``torch.autocast(device_type='sim', dtype=...)``: CUDA's autocast policy on the AutocastPrivateUse1 key.

PyTorch registers autocast kernels for CUDA, CPU, XPU, MPS, ... but nothing for AutocastPrivateUse1, so
without this every op under ``torch.autocast('sim')`` fails ("Could not run 'aten::fill_.Scalar' with
arguments from the 'Autocastsim' backend").  Here: a fallthrough for all ops, and for the ops CUDA's
aten/src/ATen/autocast_mode.cpp lists, kernels that cast the floating device tensors the way CUDA does:

* ``lower``: matmuls, convolutions, linear, attention -> the autocast dtype (float64 is left alone);
* ``fp32``: numerically sensitive ops (softmax, norms, losses, exp/log/pow, ...) -> float32;
* ``promote``: ops of several inputs -> the widest floating dtype among them.

``binary_cross_entropy`` is refused with CUDA's message.  Not modelled: the cast cache for weights.
"""

from __future__ import annotations

import torch

from .config import DEVICE_TYPE

LOWER = [
    "_convolution", "_convolution.deprecated", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d",
    "conv_transpose2d.input", "conv_transpose3d.input", "convolution", "prelu", "addmm", "addmv", "addr",
    "matmul", "einsum", "mm", "mv", "linalg_vecdot", "linear", "addbmm", "baddbmm", "bmm", "chain_matmul",
    "linalg_multi_dot", "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell", "lstm_cell", "gru_cell",
    "rnn_tanh_cell", "rnn_relu_cell", "_scaled_dot_product_flash_attention", "scaled_dot_product_attention",
]
FP32 = [
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt",
    "sinh", "tan", "pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar", "softplus", "layer_norm",
    "native_layer_norm", "group_norm", "frobenius_norm.dim", "nuclear_norm", "nuclear_norm.dim",
    "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d",
    "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss",
    "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
    "multi_margin_loss", "binary_cross_entropy_with_logits", "dist", "pdist", "cdist", "renorm", "logsumexp",
    # fp32_set_opt_dtype: run in float32 when given lower-precision inputs and no dtype
    "prod", "prod.dim_int", "softmax.int", "log_softmax.int", "cumprod", "cumsum", "sum", "sum.dim_IntList",
    "linalg_vector_norm",
]
PROMOTE = ["addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sampler", "index_put",
           "scatter_add", "tensordot"]

BCE_MSG = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast."
)

_KS = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastPrivateUse1)
_LOW = (torch.float16, torch.bfloat16)
_LIBS = []


def _eligible(t):
    return isinstance(t, torch.Tensor) and t.device.type == DEVICE_TYPE and t.is_floating_point() \
        and t.dtype is not torch.float64


def _map(x, fn):
    if isinstance(x, torch.Tensor):
        return fn(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_map(y, fn) for y in x)
    return x


def _kernel(op, mode):
    def kernel(*args, **kwargs):
        with torch._C._ExcludeDispatchKeyGuard(_KS):
            if mode == "lower":
                dt = torch.get_autocast_dtype(DEVICE_TYPE)
                fn = lambda t: t.to(dt) if _eligible(t) and t.dtype is not dt else t  # noqa: E731
            elif mode == "fp32":
                fn = lambda t: t.float() if _eligible(t) and t.dtype in _LOW else t  # noqa: E731
            else:
                dts = []
                _map((args, kwargs), lambda t: dts.append(t.dtype) if _eligible(t) else None)
                widest = torch.float32 if torch.float32 in dts else (dts[0] if dts else None)
                fn = lambda t: t.to(widest) if widest is not None and _eligible(t) and t.dtype is not widest else t  # noqa: E731
            args = _map(args, fn)
            kwargs = {k: _map(v, fn) for k, v in kwargs.items()}
            return op(*args, **kwargs)

    return kernel


def _banned(*args, **kwargs):
    raise RuntimeError(BCE_MSG)


def install():
    fall = torch.library.Library("_", "IMPL")
    fall.fallback(torch.library.fallthrough_kernel, dispatch_key="AutocastPrivateUse1")
    lib = torch.library.Library("aten", "IMPL")
    for names, mode in ((LOWER, "lower"), (FP32, "fp32"), (PROMOTE, "promote")):
        for qual in names:
            name, _, overload = qual.partition(".")
            packet = getattr(torch.ops.aten, name, None)
            if packet is None:
                continue
            op = getattr(packet, overload or "default", None)
            if op is None:
                continue
            try:
                lib.impl(qual, _kernel(op, mode), "AutocastPrivateUse1")
            except RuntimeError:
                pass  # an op of this list that this torch release lacks or registers differently
    for qual in ("binary_cross_entropy", "binary_cross_entropy.out"):
        try:
            lib.impl(qual, _banned, "AutocastPrivateUse1")
        except RuntimeError:
            pass
    _LIBS.extend([fall, lib])
