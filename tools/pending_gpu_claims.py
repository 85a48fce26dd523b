"""Claims of the book that no record of it can show yet (issue 28), and the code that would show each.

Two kinds:
- claims a chapter review found true in PyTorch's source but that need more GPUs than a recording had; the
  reviewed prose no longer states them. Once a run prints what they say, add the code to the chapter, record
  the page and put the sentence back with its marker and ledger entry;
- claims that need hardware the book is never recorded on (an Apple Silicon Mac, an AMD or Intel GPU, an
  Ascend NPU). They stay in the prose, marked; their ledger entries `await` that hardware and quote the source
  line that makes the behaviour (tests/book/claims.toml), and each names the ids it backs here (`backs`), which
  tests/book/test_claims.py checks. Run this file there and compare what it prints with the claims.

Usage, on a machine with the hardware each needs: python tools/pending_gpu_claims.py
"""

import os
import subprocess
import sys
import textwrap
import time
import warnings
from dataclasses import dataclass
from typing import Callable

import torch


@dataclass
class Pending:
    chapter: str
    gpus: int                 # CUDA GPUs it needs; 0 where it needs other hardware (it checks for it itself)
    claim: str
    show: Callable[[], None]
    backs: tuple[str, ...]    # ledger ids of the claims it would show


PENDING: dict[str, Pending] = {}


def pending(chapter: str, gpus: int, claim: str, backs: tuple[str, ...] = ()):
    def register(show):
        PENDING[show.__name__] = Pending(chapter, gpus, claim, show, backs)
        return show
    return register


def _outcome(attempt: Callable[[], object]) -> str:
    try:
        result = attempt()
    except Exception as err:  # noqa: BLE001 - the type and text are what the claim is about
        return f"{type(err).__name__}: {str(err).splitlines()[0][:200]}"
    return f"no error ({result})"


def _in_a_fresh_python(code: str, **env: str) -> str:
    """Output of `code` in a Python of its own, with `env` set before it starts (and so before torch loads)."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=600)
    return (done.stdout + done.stderr).strip()


# The two-GPU claims of tensors-and-devices and device-mismatch (an explicit index inside torch.cuda.device(1),
# set_device per thread, a 0-dim tensor on another GPU) are now shown by the last cell of multi-gpu.md,
# and their sentences are back in those chapters.


@pending("multi-gpu", 2, "a CUDA event is not made on the current device: it is created at its first record(), on the "
         "device of the stream it records on (the current stream of the current device when none is given)")
def event_created_at_first_record():
    event = torch.cuda.Event()                         # made while cuda:0 is current
    with torch.cuda.device(1):
        side = torch.cuda.Stream()
    event.record(side)                                 # created now, on cuda:1
    print("  an event made under cuda:0, recorded on a cuda:1 stream, is on:", getattr(event, "device", "?"))


# mps-and-accelerators.md: claims about the MPS device that no record of the book can show (the book is recorded
# on Linux); run on an Apple Silicon Mac. gpus=0: they need MPS, not CUDA.

def _no_mps() -> bool:
    if torch.backends.mps.is_available():
        return False
    print("  needs an Apple Silicon Mac with MPS available; here: is_built", torch.backends.mps.is_built(),
          "| the error an MPS tensor gives:", _outcome(lambda: torch.ones(1, device="mps")))
    return True


@pending("mps-and-accelerators", 0, "one MPS device: 'mps' and 'mps:0' tensors report mps:0; .to('mps') copies; "
         "mps and cpu do not mix; float64 is refused with 'Cannot convert a MPS Tensor to float64 dtype ...'",
         backs=("mps-single-device", "mps-to-copies", "mps-cpu-do-not-mix", "mps-float64-refused"))
def mps_device_rules():
    if _no_mps():
        return
    host = torch.ones(3)
    on_mps = host.to("mps")
    host.add_(1)                                       # a copy does not see later writes to its source
    print("  device_count:", torch.mps.device_count(), "| devices:", torch.zeros(1, device="mps").device,
          torch.zeros(1, device="mps:0").device, "| a copy:", on_mps.cpu().tolist() == [1.0, 1.0, 1.0])
    print("  mps + cpu:", _outcome(lambda: on_mps + host))
    print("  float64 to mps:", _outcome(lambda: torch.ones(2, dtype=torch.float64).to("mps")))
    print("  float64 made on mps:", _outcome(lambda: torch.ones(2, dtype=torch.float64, device="mps")))



@pending("data-loading", 0, "a pin_memory=True DataLoader on MPS warns that pinning is not supported and gives "
         "unpinned batches", backs=("loader-pin-not-on-mps",))
def mps_loader_does_not_pin():
    if _no_mps():
        return
    from torch.utils.data import DataLoader, TensorDataset
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        batch, = next(iter(DataLoader(TensorDataset(torch.randn(4, 2)), batch_size=2, pin_memory=True)))
    print("  warnings:", [str(w.message)[:80] for w in seen], "| batch pinned:", batch.is_pinned())

@pending("mps-and-accelerators", 0, "MPS is unavailable without a usable Metal GPU or with a macOS older than 14; "
         "an MPS tensor then fails with 'RuntimeError: The MPS backend is supported on MacOS ...'",
         backs=("mps-unavailable-reasons", "mps-unavailable-error"))
def mps_unavailable():
    import platform
    print("  macOS", platform.mac_ver()[0] or "(not macOS)", "| is_built:", torch.backends.mps.is_built(),
          "| is_available:", torch.backends.mps.is_available())
    print("  an MPS tensor:", _outcome(lambda: torch.ones(1, device="mps")),
          "(run also in a VM or a sandbox that hides the GPU: the same RuntimeError names a macOS version)")


@pending("mps-and-accelerators", 0, "an MPS operation returns before the GPU has run it; torch.mps.synchronize() waits",
         backs=("mps-asynchronous",))
def mps_asynchronous():
    if _no_mps():
        return
    a = torch.randn(4096, 4096, device="mps")
    (a @ a).sum()
    torch.mps.synchronize()                            # warm up: the first call builds the graph
    start = time.perf_counter()
    for _ in range(20):
        a = a @ a / 4096
    queued = time.perf_counter() - start
    torch.mps.synchronize()
    finished = time.perf_counter() - start
    print(f"  20 matmuls queued in {queued * 1e3:.1f} ms, finished after {finished * 1e3:.1f} ms")


_MISSING_CANDIDATES = """
    import torch
    x = torch.randn(8, 8, device="mps")
    for name, call in [("linalg.eig", lambda: torch.linalg.eig(x)), ("linalg.eigvals", lambda: torch.linalg.eigvals(x)),
                       ("special.airy_ai", lambda: torch.special.airy_ai(x)), ("nanmedian(dim)", lambda: x.nanmedian(0)),
                       ("linalg.householder_product", lambda: torch.linalg.householder_product(x, x[:, 0]))]:
        try:
            call()
        except NotImplementedError as err:
            print("MISSING", name, "|", str(err).splitlines()[0][:300])
"""


@pending("mps-and-accelerators", 0, "an operator without an MPS kernel raises NotImplementedError naming it and "
         "PYTORCH_ENABLE_MPS_FALLBACK=1; with the variable set before torch loads it runs on the CPU, copying its "
         "tensors, with one warning per process; set after the import it changes nothing",
         backs=("mps-missing-operator-error", "mps-fallback-env", "mps-fallback-copies", "mps-fallback-warns-once"))
def mps_fallback():
    if _no_mps():
        return
    print("  without the fallback:", _in_a_fresh_python(_MISSING_CANDIDATES) or "no missing operator among the candidates")
    print("  set after import torch:", _in_a_fresh_python(
        'import os, torch\nos.environ["PYTORCH_ENABLE_MPS_FALLBACK"] = "1"\n' + textwrap.dedent(_MISSING_CANDIDATES)))
    print("  set before, warnings of every candidate:", _in_a_fresh_python("""
        import warnings, torch
        warnings.simplefilter("always")
    """ + textwrap.dedent(_MISSING_CANDIDATES), PYTORCH_ENABLE_MPS_FALLBACK="1"))


# The same chapter's claims about other hardware: ROCm and XPU builds, torch_npu.

@pending("mps-and-accelerators", 0, "torch.accelerator reports the build's accelerator (mps, xpu, or cuda on ROCm); "
         "a build has at most one of CUDA, XPU, MPS; ROCm sets torch.version.hip and keeps the 'cuda' device type",
         backs=("accelerator-covers-every-backend", "one-accelerator-per-build", "rocm-presents-as-cuda"))
def accelerator_of_this_build():
    print("  current_accelerator:", torch.accelerator.current_accelerator(), "| is_available:",
          torch.accelerator.is_available(), "| cuda:", torch.cuda.is_available(), "| mps:",
          torch.backends.mps.is_available(), "| xpu:", torch.xpu.is_available())
    print("  torch.version.cuda:", torch.version.cuda, "| torch.version.hip:", torch.version.hip)
    if torch.version.hip and torch.cuda.is_available():
        print("  a tensor on the AMD GPU:", torch.ones(1, device="cuda").device)


@pending("mps-and-accelerators", 0, "import torch_npu renames PrivateUse1 'npu', which torch.accelerator then reports",
         backs=("torch-npu-is-privateuse1",))
def torch_npu_backend():
    try:
        import torch_npu  # noqa: F401
    except ImportError as err:
        print("  needs torch_npu on an Ascend NPU:", err)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        print("  privateuse1 name:", torch._C._get_privateuse1_backend_name(), "| current_accelerator:",
              torch.accelerator.current_accelerator())


if __name__ == "__main__":
    for name, item in PENDING.items():
        print(f"{item.chapter}: {item.claim}")
        if item.gpus and torch.cuda.device_count() < item.gpus:
            print(f"  needs {item.gpus} GPUs, this machine has {torch.cuda.device_count()}")
            continue
        item.show()
