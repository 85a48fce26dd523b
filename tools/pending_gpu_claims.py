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


if __name__ == "__main__":
    for name, (chapter, gpus, claim, show) in PENDING.items():
        print(f"{chapter}: {claim}")
        if torch.cuda.device_count() < gpus:
            print(f"  needs {gpus} GPUs, this machine has {torch.cuda.device_count()}")
            continue
        show()
