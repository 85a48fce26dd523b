"""Record which kernel CUDA's scaled_dot_product_attention picks, over a grid of inputs.

CUDA runs attention in one of several kernels (flash, memory-efficient, cuDNN, or the math composite), chosen
by `aten::_fused_sdp_choice` from the inputs' shapes, dtypes and strides, and each kernel checks devices in
its own words. The simulator runs the math composite and words its errors as the kernel CUDA would have
picked (grader/simulated/sdpa.py); tests/simulated/test_sdpa.py checks its rule against this table.

    python tools/sdpa_choices.py --out grader/simulated/sdpa_choices_cuda.json   # on a GPU machine
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import sys

import torch

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def grid() -> list[dict]:
    """The inputs to try: each a dict that `make` turns into tensors."""
    configs = []
    for dtype, head_dim, mask, grad in itertools.product(
            DTYPES, (4, 6, 8, 12, 16, 64, 96, 128, 192, 256, 320), ("none", "bool", "float"),
            (False, True)):
        configs.append({"dtype": dtype, "q": [2, 2, 5, head_dim], "kv": [2, 2, 5, head_dim], "mask": mask,
                        "grad": grad})
    for dtype, mask in itertools.product(DTYPES, ("none", "bool")):
        base = {"dtype": dtype, "mask": mask, "grad": False}
        configs += [
            {**base, "q": [2, 5, 16], "kv": [2, 5, 16]},  # 3-D (no batch)
            {**base, "q": [2, 2, 5, 16], "kv": [2, 2, 7, 16]},  # longer key sequence
            {**base, "q": [2, 2, 5, 16], "kv": [2, 2, 5, 16], "v_head_dim": 32},  # value head dim differs
            {**base, "q": [2, 2, 5, 16], "kv": [2, 2, 5, 16], "transposed": True},  # last dim not contiguous
            {**base, "q": [2, 2, 5, 16], "kv": [2, 2, 5, 16], "dropout": 0.1},
            {**base, "q": [1, 2, 5, 16], "kv": [2, 2, 5, 16]},  # batch broadcast
            {**base, "q": [2, 4, 5, 16], "kv": [2, 2, 5, 16], "gqa": True},
            {**base, "q": [2, 2, 0, 16], "kv": [2, 2, 5, 16]},  # empty query sequence
        ]
        if mask == "none":
            configs += [{**base, "q": [2, 2, 5, 16], "kv": [2, 2, 5, 16], "causal": True},
                        {**base, "q": [2, 2, 5, 16], "kv": [2, 2, 7, 16], "causal": True},
                        {**base, "q": [2, 2, 7, 16], "kv": [2, 2, 5, 16], "causal": True}]
    return configs


def make(config: dict, device: str):
    """(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa) for one configuration."""
    dtype = DTYPES[config["dtype"]]
    q_shape, kv_shape = config["q"], config["kv"]
    v_shape = kv_shape[:-1] + [config.get("v_head_dim", kv_shape[-1])]

    def tensor(shape):
        if config.get("transposed"):  # same shape, last two dims swapped in memory
            t = torch.randn(*shape[:-2], shape[-1], shape[-2], device=device, dtype=dtype).transpose(-1, -2)
        else:
            t = torch.randn(*shape, device=device, dtype=dtype)
        return t.requires_grad_(config["grad"])

    q, k, v = tensor(q_shape), tensor(kv_shape), tensor(v_shape)
    mask = None
    kind = config["mask"]
    if kind != "none":
        where = "cpu" if kind.endswith("_cpu") else device
        shape = (q_shape[-2], kv_shape[-2])
        mask = torch.ones(shape, dtype=torch.bool, device=where).tril()
        if kind.startswith("float"):
            mask = torch.zeros(shape, dtype=dtype, device=where)
    return q, k, v, mask, config.get("dropout", 0.0), config.get("causal", False), config.get("gqa", False)


def cuda_choices(configs: list[dict]) -> list[int]:
    choices = []
    for config in configs:
        q, k, v, mask, dropout, causal, gqa = make(config, "cuda")
        try:
            choices.append(torch.ops.aten._fused_sdp_choice(q, k, v, mask, dropout, causal, enable_gqa=gqa))
        except RuntimeError:
            choices.append(-1)  # no kernel: SDPBackend::error
    return choices


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    configs = grid()
    rows = [{"config": c, "choice": choice} for c, choice in zip(configs, cuda_choices(configs))]
    card = torch.cuda.get_device_name(0)
    meta = {"card": card, "capability": list(torch.cuda.get_device_capability(0)), "torch": torch.__version__,
            "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
            "python": sys.version.split()[0], "date": datetime.date.today().isoformat(),
            "choices": "0 math, 1 flash attention, 2 memory-efficient attention, 3 cuDNN attention, -1 none"}
    with open(args.out, "w") as f:
        json.dump({**meta, "rows": rows}, f, indent=1)
    counts = {c: sum(r["choice"] == c for r in rows) for c in sorted({r["choice"] for r in rows})}
    print(f"{len(rows)} inputs on {card}: {counts}")


if __name__ == "__main__":
    main()
