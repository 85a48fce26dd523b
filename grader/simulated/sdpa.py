"""Which kernel CUDA's scaled_dot_product_attention runs, so that the simulator refuses a mask on the wrong
device in that kernel's words.

The simulator computes attention with the math composite, made of ops it checks one by one. On CUDA,
``_fused_sdp_choice`` first picks a fused kernel from the inputs' dtype, shapes and strides (cuDNN, flash,
memory-efficient; math where none applies), and a fused kernel checks the devices of all its tensors at
once: a causal mask built on the CPU fails there with "got attn_bias is on cpu ... (when checking argument
in method wrapper_CUDA___scaled_dot_product_efficient_attention)", not with the math path's message.

The rule below is what a real H100 chose over a grid of inputs (tools/sdpa_choices.py, recorded in
sdpa_choices_cuda.json; tests/simulated/test_sdpa.py holds the rule to that table): for float16 and
bfloat16, cuDNN, then flash, then memory-efficient attention; for float32, memory-efficient attention.
"""

from __future__ import annotations

import functools

import torch

from . import placement

MATH, FLASH, EFFICIENT, CUDNN = 0, 1, 2, 3
HALF = (torch.float16, torch.bfloat16)
#: The fused kernels whose generated code checks the mask beside query, key and value.
MASK_CHECKED_BY = {CUDNN: "_scaled_dot_product_cudnn_attention", EFFICIENT: "_scaled_dot_product_efficient_attention"}


def _dense_ok(query, key, value, enable_gqa) -> bool:
    """What every fused kernel needs: 4-D inputs, the last dimension contiguous, no empty sequence, one batch
    size and (without grouped-query attention) one number of heads."""
    if not all(t.dim() == 4 for t in (query, key, value)):
        return False
    if any(t.stride(-1) != 1 for t in (query, key, value)) or 0 in (query.size(2), key.size(2)):
        return False
    if not query.size(0) == key.size(0) == value.size(0) or key.size(1) != value.size(1):
        return False
    return query.size(1) == key.size(1) or (enable_gqa and query.size(1) % key.size(1) == 0)


def cuda_choice(query, key, value, attn_mask=None, enable_gqa=False) -> int:
    """The kernel CUDA (sm90) picks for these inputs: MATH, FLASH, EFFICIENT or CUDNN (dropout and is_causal
    did not change it over the recorded grid)."""
    if not _dense_ok(query, key, value, enable_gqa):
        return MATH
    head, grouped = query.size(-1), query.size(1) != key.size(1)
    if query.dtype in HALF:
        if head % 8 == 0 and head <= 256:
            return CUDNN
        if attn_mask is None and head <= 256:
            return FLASH
    if query.dtype in (*HALF, torch.float32) and not grouped:
        alignment = 8 if query.dtype in HALF else 4
        if head % alignment == 0 and value.size(-1) % alignment == 0:
            return EFFICIENT
    return MATH


def check_mask_device(query, key, value, attn_mask=None, is_causal=False, enable_gqa=False):
    """Raise what CUDA's chosen kernel raises for a mask on another device than the inputs; else nothing
    (the math path, which the simulator runs, then checks its own ops)."""
    if not isinstance(attn_mask, torch.Tensor) or attn_mask.device == query.device or is_causal:
        return
    if not all(isinstance(t, torch.Tensor) and t.device == query.device and t.dtype == query.dtype
               for t in (key, value)) or not (attn_mask.dtype is torch.bool or attn_mask.is_floating_point()):
        return  # the composite's own validation speaks first
    kernel = MASK_CHECKED_BY.get(cuda_choice(query, key, value, attn_mask, enable_gqa))
    if kernel is not None:
        op = getattr(torch.ops.aten, kernel).default
        placement.codegen_check(op, (query, key, value, attn_mask), {}, placement.codegen_checked(op))


def with_cuda_kernel_checks(fn):
    """torch.nn.functional.scaled_dot_product_attention, refusing what CUDA's fused kernels refuse."""

    @functools.wraps(fn)
    def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                     scale=None, enable_gqa=False):
        if isinstance(query, torch.Tensor) and query.device.type == placement.DEVICE_TYPE:
            check_mask_device(query, key, value, attn_mask, is_causal, enable_gqa)
        return fn(query, key, value, attn_mask, dropout_p, is_causal, scale=scale, enable_gqa=enable_gqa)

    return scaled_dot_product_attention
