"""Claims a chapter review found true in PyTorch's source but that no GPU record shows yet (issue 28), and the
code that would show each. The reviewed prose no longer states them; once a run prints what they say, add the
code to the chapter, record the page and put the sentence back with its marker and ledger entry.

Usage, on a machine with the GPUs each needs: python tools/pending_gpu_claims.py
"""

import torch

PENDING = {}


def pending(chapter: str, gpus: int, claim: str):
    def register(show):
        PENDING[show.__name__] = (chapter, gpus, claim, show)
        return show
    return register


# The two-GPU claims of tensors-and-devices and device-mismatch (an explicit index inside torch.cuda.device(1),
# set_device per thread, a 0-dim tensor on another GPU) are now shown by the last cell of multi-gpu.md,
# and their sentences are back in those chapters.


# mps-and-accelerators.md: claims about the MPS device that no record of the book can show (the book is recorded
# on Linux); run on an Apple Silicon Mac. gpus=0: they need MPS, not CUDA.

@pending("mps-and-accelerators", 0, "'mps' and 'mps:0' tensors report mps:0; .to('mps') copies; mps and cpu do not mix; "
         "float64 is refused with 'Cannot convert a MPS Tensor to float64 dtype ...'")
def mps_device_rules():
    if not torch.backends.mps.is_available():
        print("  needs an Apple Silicon Mac with MPS")
        return
    host = torch.ones(3)
    on_mps = host.to("mps")
    print("  devices:", torch.zeros(1, device="mps").device, torch.zeros(1, device="mps:0").device,
          "| a copy:", on_mps.data_ptr() != host.data_ptr())
    for label, attempt in {"mps + cpu": lambda: on_mps + host,
                           "float64 to mps": lambda: torch.ones(2, dtype=torch.float64).to("mps")}.items():
        try:
            attempt()
            print(f"  {label}: no error")
        except Exception as err:
            print(f"  {label}: {type(err).__name__}: {str(err).splitlines()[0]}")


if __name__ == "__main__":
    for name, (chapter, gpus, claim, show) in PENDING.items():
        print(f"{chapter}: {claim}")
        if gpus and torch.cuda.device_count() < gpus:
            print(f"  needs {gpus} GPUs, this machine has {torch.cuda.device_count()}")
            continue
        show()
