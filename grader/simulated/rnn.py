"""CUDA-only fused RNN cells.

``nn.LSTM`` / ``nn.GRU`` pick ``_thnn_fused_lstm_cell`` / ``_thnn_fused_gru_cell`` for non-CPU inputs, and
those ops have no CPU kernel; they are reimplemented here on the CPU data with the math of
aten/src/ATen/native/cuda/RNN.cu."""

from __future__ import annotations

import torch


def _lstm_cell_fwd(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    g = input_gates + hidden_gates
    if input_bias is not None:
        g = g + input_bias + hidden_bias
    i, f, c, o = g.chunk(4, 1)
    i, f, c, o = i.sigmoid(), f.sigmoid(), c.tanh(), o.sigmoid()
    cy = f * cx + i * c
    hy = o * cy.tanh()
    return hy, cy, torch.cat([i, f, c, o], 1)


def _lstm_cell_bwd(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    if grad_hy is None and grad_cy is None:
        return None, None, None
    i, f, c, o = workspace.chunk(4, 1)
    if grad_hy is None:
        grad_hy = torch.zeros_like(cy)
    if grad_cy is None:
        grad_cy = torch.zeros_like(cy)
    t = cy.tanh()
    gcx = grad_hy * o * (1 - t * t) + grad_cy
    gates = torch.cat([gcx * c * i * (1 - i), gcx * cx * f * (1 - f),
                       gcx * i * (1 - c * c), grad_hy * t * o * (1 - o)], 1)
    return gates, gcx * f, (gates.sum(0) if has_bias else None)


def _gru_cell_fwd(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    if input_bias is not None:
        input_gates = input_gates + input_bias
        hidden_gates = hidden_gates + hidden_bias
    ir, ii, in_ = input_gates.chunk(3, 1)
    hr, hi, hn = hidden_gates.chunk(3, 1)
    r = (ir + hr).sigmoid()
    z = (ii + hi).sigmoid()
    n = (in_ + r * hn).tanh()
    hy = n + z * (hx - n)
    return hy, torch.cat([r, z, n, hx, hn], 1)


def _gru_cell_bwd(grad_hy, workspace, has_bias):
    r, z, n, hx, hn = workspace.chunk(5, 1)
    gz = grad_hy * (hx - n) * (1 - z) * z
    ghx = grad_hy * z
    gn = grad_hy * (1 - z) * (1 - n * n)
    ghn = gn * r
    gr = gn * hn * (1 - r) * r
    gi = torch.cat([gr, gz, gn], 1)
    gh = torch.cat([gr, gz, ghn], 1)
    if has_bias:
        return gi, gh, ghx, gi.sum(0), gh.sum(0)
    return gi, gh, ghx, None, None


FUSED_RNN = {
    "_thnn_fused_lstm_cell": _lstm_cell_fwd,
    "_thnn_fused_lstm_cell_backward_impl": _lstm_cell_bwd,
    "_thnn_fused_gru_cell": _gru_cell_fwd,
    "_thnn_fused_gru_cell_backward": _gru_cell_bwd,
}
