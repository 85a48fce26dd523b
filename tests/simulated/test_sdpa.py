"""The simulator's rule for which attention kernel CUDA runs, against what an H100 chose (tools/sdpa_choices.py
recorded the table), and the message it gives for a mask left on the CPU."""
import json
import sys
from pathlib import Path

import pytest
import torch

from grader.simulated import sdpa

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "grader" / "simulated" / "sdpa_choices_cuda.json"
sys.path.insert(0, str(ROOT / "tools"))
import sdpa_choices  # noqa: E402

ROWS = json.loads(TABLE.read_text())["rows"]


def test_the_table_covers_every_kernel():
    assert {r["choice"] for r in ROWS} == {sdpa.MATH, sdpa.FLASH, sdpa.EFFICIENT, sdpa.CUDNN}


@pytest.mark.parametrize("row", ROWS, ids=lambda r: json.dumps(r["config"], separators=(",", ":")))
def test_rule_picks_the_kernel_cuda_picked(row):
    q, k, v, mask, _dropout, _causal, gqa = sdpa_choices.make(row["config"], "cpu")
    assert sdpa.cuda_choice(q, k, v, mask, gqa) == row["choice"]


@pytest.mark.parametrize("dtype, kernel", [(torch.float32, "efficient"), (torch.bfloat16, "cudnn")])
def test_a_cpu_mask_is_refused_by_the_chosen_kernel(dtype, kernel):
    q = torch.randn(2, 2, 5, 64, device="sim:0", dtype=dtype)
    mask = torch.ones(5, 5, dtype=torch.bool).tril()
    with pytest.raises(RuntimeError, match=f"got attn_bias is on cpu, different from other tensors on sim:0 "
                                           rf"\(when checking argument in method wrapper_SIM___scaled_dot_product_"
                                           f"{kernel}_attention\\)"):
        torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask)


def test_the_math_path_keeps_its_own_message_and_a_device_mask_works():
    q = torch.randn(2, 2, 5, 6, device="sim:1")  # head size 6: no fused kernel
    with pytest.raises(RuntimeError, match="found at least two devices"):
        torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=torch.zeros(5, 5))
    q = torch.randn(2, 2, 5, 8, device="sim:1")
    out = torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=torch.zeros(5, 5, device="sim:1"))
    expected = torch.nn.functional.scaled_dot_product_attention(q.cpu(), q.cpu(), q.cpu())
    assert out.device == torch.device("sim:1") and torch.allclose(out.cpu(), expected, atol=1e-6)
