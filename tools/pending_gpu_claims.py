"""Claims a chapter review found true in PyTorch's source but that no GPU record shows yet (issue 28), and the
code that would show each. The reviewed prose no longer states them; once a run prints what they say, add the
code to the chapter, record the page and put the sentence back with its marker and ledger entry.

Usage, on a machine with the GPUs each needs: python tools/pending_gpu_claims.py
"""

import threading

import torch

PENDING = {}


def pending(chapter: str, gpus: int, claim: str):
    def register(show):
        PENDING[show.__name__] = (chapter, gpus, claim, show)
        return show
    return register


@pending("tensors-and-devices", 2, "inside torch.cuda.device(1), an explicit 'cuda:0' still means cuda:0")
def explicit_index_inside_device_context():
    with torch.cuda.device(1):
        print("'cuda' ->", torch.zeros(1, device="cuda").device, "| 'cuda:0' ->", torch.zeros(1, device="cuda:0").device)


@pending("tensors-and-devices", 2, "torch.cuda.set_device changes the current device of the calling thread only")
def set_device_is_per_thread():
    torch.cuda.set_device(1)
    seen = []
    other = threading.Thread(target=lambda: seen.append(torch.cuda.current_device()))
    other.start()
    other.join()
    print("this thread:", torch.cuda.current_device(), "| a new thread:", seen[0])
    torch.cuda.set_device(0)


@pending("device-mismatch", 2, "a zero-dimensional tensor on one GPU does not mix with tensors on another GPU")
def zero_dim_on_another_gpu():
    try:
        torch.ones(3, device="cuda:0") * torch.tensor(2.0, device="cuda:1")
        print("works")
    except RuntimeError as err:
        print("RuntimeError:", str(err).splitlines()[0])


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
