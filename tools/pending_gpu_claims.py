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


# asynchrony.md: cells written for the review (issue 28) whose recording failed on the one GPU call of the session
# (an event made without enable_timing raises ValueError, not RuntimeError, in torch 2.11); the chapter keeps its
# older cells and states these only where something else backs them.

def _queued_work(x):
    torch.cuda.synchronize()
    for _ in range(5):
        x @ x                                          # tens of milliseconds of queued work
    queued = torch.cuda.Event()
    queued.record()
    return queued


@pending("asynchrony", 1, "which calls wait for the GPU (and whether set_sync_debug_mode('warn') notices)")
def which_calls_wait():
    import io
    import warnings
    x, t, host = torch.randn(8192, 8192, device="cuda"), torch.randn(1000, device="cuda"), torch.randn(1000)
    host_pinned, side = host.pin_memory(), torch.cuda.Stream()
    calls = {"t * 2": lambda: t * 2, "t.sum().item()": lambda: t.sum().item(), "t.tolist()": t.tolist,
             "print(t)": lambda: print(t, file=io.StringIO()), "float(t[0])": lambda: float(t[0]),
             "if t[0] > 0:": lambda: bool(t[0] > 0), "t.cpu()": t.cpu,
             "t.to('cpu', non_blocking=True)": lambda: t.to("cpu", non_blocking=True),
             "host.to('cuda')": lambda: host.to("cuda"),
             "host_pinned.to('cuda', non_blocking=True)": lambda: host_pinned.to("cuda", non_blocking=True),
             "torch.tensor([1.0], device='cuda')": lambda: torch.tensor([1.0], device="cuda"),
             "torch.nonzero(t)": lambda: torch.nonzero(t), "t[t > 0]": lambda: t[t > 0],
             "torch.unique(t)": lambda: torch.unique(t), "Event().record()": lambda: torch.cuda.Event().record(),
             "side.wait_stream(current)": lambda: side.wait_stream(torch.cuda.current_stream()),
             "torch.cuda.synchronize()": torch.cuda.synchronize}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.cuda.set_sync_debug_mode("warn")
    try:
        for code, call in calls.items():
            queued = _queued_work(x)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                call()
            warned = any("synchronizing" in str(w.message) for w in caught)
            print(f"  {code:<42} waited: {queued.query()!s:5}  sync debug mode warned: {warned}")
    finally:
        torch.cuda.set_sync_debug_mode("default")


@pending("asynchrony", 1, "elapsed_time needs enable_timing=True (ValueError) and a completed end event (RuntimeError)")
def elapsed_time_errors():
    x = torch.randn(8192, 8192, device="cuda")
    start, untimed, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(), torch.cuda.Event(enable_timing=True)
    untimed.record()
    start.record()
    _queued_work(x)
    end.record()
    for code, ask in {"without enable_timing": lambda: untimed.elapsed_time(end),
                      "end not reached": lambda: start.elapsed_time(end)}.items():
        try:
            ask()
            print(f"  {code}: no error")
        except (ValueError, RuntimeError) as err:
            print(f"  {code}: {type(err).__name__}: {str(err).splitlines()[0]}")


@pending("asynchrony", 1, "a freed block read by a busy side stream is reused at once, unless record_stream was called")
def record_stream_delays_reuse():
    x, side, main = torch.randn(8192, 8192, device="cuda"), torch.cuda.Stream(), torch.cuda.current_stream()
    for record in (False, True):
        torch.cuda.synchronize()
        src = torch.empty(2**26, device="cuda")
        address = src.data_ptr()
        side.wait_stream(main)
        with torch.cuda.stream(side):
            busy = (x @ x).sum() + src.sum()  # noqa: F841
        if record:
            src.record_stream(side)
        del src
        print(f"  record_stream={record}: the next tensor got the freed block:",
              torch.empty(2**26, device="cuda").data_ptr() == address)


@pending("asynchrony", 1, "the first CUDA operation and the first matmul cost far more than later ones; a device-side "
         "assert makes later correct operations fail; CUDA_LAUNCH_BLOCKING set after the first CUDA call changes nothing")
def first_calls_and_poisoned_context():
    import subprocess
    import sys
    probe = ("import time, torch\nt0 = time.perf_counter(); x = torch.randn(8192, 8192, device='cuda'); "
             "torch.cuda.synchronize(); t1 = time.perf_counter(); x @ x; torch.cuda.synchronize(); t2 = time.perf_counter(); "
             "x @ x; torch.cuda.synchronize(); t3 = time.perf_counter()\n"
             "print(f'first op {1e3*(t1-t0):.0f} ms, first matmul {1e3*(t2-t1):.0f} ms, again {1e3*(t3-t2):.0f} ms')\n"
             "import os; os.environ['CUDA_LAUNCH_BLOCKING'] = '1'\n"
             "try:\n    torch.nn.Embedding(10, 4).cuda()(torch.tensor([12], device='cuda')); y = x + 1\n"
             "except RuntimeError:\n    print('the assert surfaced at the next launch despite the late variable')\n"
             "try:\n    (torch.ones(1, device='cuda') + 1).item()\nexcept RuntimeError as err:\n"
             "    print('a correct operation afterwards:', str(err).splitlines()[0])\n")
    print("  " + subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.replace("\n", "\n  "))


if __name__ == "__main__":
    for name, (chapter, gpus, claim, show) in PENDING.items():
        print(f"{chapter}: {claim}")
        if torch.cuda.device_count() < gpus:
            print(f"  needs {gpus} GPUs, this machine has {torch.cuda.device_count()}")
            continue
        show()
