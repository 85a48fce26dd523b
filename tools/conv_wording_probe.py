"""What a convolution of a CPU input with weights on the device says, on a real GPU and on the simulator, for the
cases where PyTorch picks a slow CPU kernel (dilated, 3-D, transposed, float64): the simulator's placement
words for convolutions (grader/simulated/placement.py, conv_check) must be CUDA's.

    python tools/conv_wording_probe.py cuda       # on a GPU machine: CUDA's messages, as JSON lines
    python tools/conv_wording_probe.py sim        # the simulator's, to compare
"""

import json
import sys

import torch
import torch.nn.functional as F

CASES = {  # name: (function, input shape, weight shape, dtype, keyword arguments, mkldnn enabled)
    "conv2d_dilated_f64": (F.conv2d, (1, 2, 9, 9), (3, 2, 3, 3), torch.float64, {"dilation": 2}, True),
    "conv2d_dilated_f32_no_mkldnn": (F.conv2d, (1, 2, 9, 9), (3, 2, 3, 3), torch.float32, {"dilation": 2}, False),
    "conv2d_f64": (F.conv2d, (1, 2, 9, 9), (3, 2, 3, 3), torch.float64, {}, True),
    "conv1d_dilated_f64": (F.conv1d, (1, 2, 9), (3, 2, 3), torch.float64, {"dilation": 2}, True),
    "conv3d_f32": (F.conv3d, (1, 2, 5, 5, 5), (3, 2, 3, 3, 3), torch.float32, {}, True),
    "conv3d_dilated_f64": (F.conv3d, (1, 2, 7, 7, 7), (3, 2, 3, 3, 3), torch.float64, {"dilation": 2}, True),
    "conv_transpose2d_dilated_f64": (F.conv_transpose2d, (1, 2, 5, 5), (2, 3, 3, 3), torch.float64,
                                     {"dilation": 2}, True),
    "conv_transpose3d_f64": (F.conv_transpose3d, (1, 2, 4, 4, 4), (2, 3, 3, 3, 3), torch.float64, {}, True),
}


def main(device: str) -> None:
    if device == "sim":
        import grader.simulated as gs
        gs.install()
        device = gs.config.DEVICE_TYPE
    for name, (fn, xs, ws, dtype, kw, mkldnn) in CASES.items():
        x = torch.randn(xs, dtype=dtype)
        w = torch.randn(ws, dtype=dtype, device=device)
        with torch.backends.mkldnn.flags(enabled=mkldnn):
            try:
                fn(x, w, **kw)
                said = None
            except Exception as exc:  # noqa: BLE001 (the message is what is recorded)
                said = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        print(json.dumps({"case": name, "device": device, "said": said}))


if __name__ == "__main__":
    main(sys.argv[1])
