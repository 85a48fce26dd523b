"""What the simulator cannot mirror, and why -- so that a grader can say so instead of failing or
skipping silently.

``LIMITS`` maps a short key to a ``Limit`` (what differs from CUDA, why PyTorch's Python backend API
cannot do it, and the smallest reproduction).  ``limit_message(exc)`` returns a sentence for an exception
that comes from one of these limits (None otherwise), for graders to print next to the learner's error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Limit:
    what: str
    why: str
    repro: str


LIMITS: dict[str, Limit] = {
    "raw_device_generator": Limit(
        what="torch._C.Generator(device='sim') (the C++ class itself) raises NotImplementedError; "
             "torch.Generator(device='sim') works (a Python stand-in returns a SimGenerator).",
        why="the Python PrivateUse1 hooks (torch._C._acc.PrivateUse1Hooks, torch/csrc/acc/Module.cpp) expose only "
            "is_available/is_built/has_primary_context; getDefaultGenerator/getNewGenerator call the base class, "
            "which raises ('implement `getNewGenerator` ... for PrivateUse1').",
        repro="import torch, grader.simulated as gs; gs.install(); torch._C.Generator(device='sim')",
    ),
    "device_count_of_guard": Limit(
        what="the C++ device guard of the Python backend reports 1 device and device 0 as current; the simulator "
             "keeps its own current device (torch.sim.current_device) and runs backward without per-device "
             "autograd threads (autograd multithreading is switched off around every backward).",
        why="PythonDeviceGuard::deviceCount() returns 1 and getDevice() returns index 0 (torch/csrc/acc/Module.cpp); "
            "the autograd engine sizes its device queues from deviceCount() and asserts on sim:1 "
            "(engine.cpp: 'device.index() < device_ready_queues_.size()') unless multithreading is off.",
        repro="import torch, grader.simulated as gs; gs.install(); torch._C._set_multithreading_enabled(True); "
              "w = torch.ones(2, device='sim:1', requires_grad=True); "
              "torch.autograd.graph._engine_run_backward((w.sum(),), (torch.ones((), device='sim:1'),), False, "
              "False, (), allow_unreachable=True, accumulate_grad=True)  # INTERNAL ASSERT device_ready_queues_",
    ),
    "backward_on_the_calling_stream": Limit(
        what="backward runs every operation on the stream current when backward() is called; CUDA runs each on "
             "the stream of its forward operation. A forward pass on a side stream whose backward is called on "
             "another stream that did not wait for the side stream reads the forward's tensors as a race here "
             "(NaN), where CUDA orders it.",
        why="the autograd engine asks the device guard for each node's stream; the Python device guard "
            "(torch._C._acc.DeviceGuard) gives the engine no stream of its own to record or restore.",
        repro="with torch.Stream('sim'): loss = (w * 2).sum()\nloss.backward()  # runs on the default stream",
    ),
    "load_without_grader": Limit(
        what="a sim checkpoint loaded without map_location in a process that never imported grader.simulated "
             "fails with torch's device-string error instead of CUDA's 'Attempting to deserialize object on a "
             "... device but torch.....is_available() is False'.",
        why="the checkpoint can only name torch functions allowed by weights_only loading "
            "(_rebuild_device_tensor_from_cpu_tensor), whose text comes from torch.device('sim:0'); the CUDA-shaped "
            "text needs grader.simulated's load hook (installed on import).",
        repro="python -c \"import torch; torch.load('sim_checkpoint.pt')\"",
    ),
    "library_workspaces": Limit(
        what="memory counters omit what CUDA libraries take from the caching allocator (cuBLAS/cuBLASLt "
             "workspaces, ~32 MiB per thread and stream on Hopper at the first matmul) and the CUDA context.",
        why="they depend on the card, the library versions and the threads; the allocator rules themselves "
            "(512-byte rounding, 2 MiB small segments, 20 MiB buffers, 2 MiB rounding, splitting, empty_cache) "
            "are modelled exactly.",
        repro="torch.sim.memory_allocated() after the first nn.Linear forward: CUDA shows ~32 MiB more",
    ),
    "compile_runs_eager": Limit(
        what="torch.compile on sim tensors runs (dynamo falls back to eager at the device's ops), with no "
             "compiled kernels and no speed-up to measure. Dynamo cannot trace a sim tensor: it breaks the graph "
             "inside the simulator's tensor (whose storage_offset is a Python int), so the graphs, graph breaks "
             "and recompilations it reports for sim tensors are not CUDA's; graders count those on CPU tensors "
             "(compiled_normalize). A module whose compiled forward ran cannot then move between sim devices "
             "(\"_apply(): Couldn't swap\": Dynamo holds references to the parameters that the simulator swaps).",
        why="inductor has no code generator for a PrivateUse1 device defined in Python, and a Python wrapper "
            "subclass without __tensor_flatten__ is opaque to Dynamo.",
        repro="torch.compile(lambda x: x.sin())(torch.ones(3, device='sim'))",
    ),
    "h2d_race_window": Limit(
        what="a non_blocking copy from pinned memory is applied at the next op on its device or at a sync; a host "
             "write to the source after that op but before the copy's virtual completion time is detected "
             "(recorded as a race, later ops see the new data) but the ops already run saw the old data.",
        why="the simulator executes ops eagerly in Python; it cannot re-run ops when a later host write shows that "
            "the device would have read different data.",
        repro="b = torch.ones(4).pin_memory(); x = b.to('sim', non_blocking=True); y = x * 2; b.zero_(); "
              "torch.sim.synchronize()  # rec.races == 1, y computed from ones",
    ),
    "sparse_layouts": Limit(
        what="compressed sparse tensors (x.to_sparse_csr(), to_sparse_csc(), to_sparse_bsr(), to_sparse_bsc()) "
             "cannot be made on the simulated device; CUDA has them. Sparse COO tensors (torch.sparse_coo_tensor, "
             "x.to_sparse()) work.",
        why="a device tensor here is a wrapper subclass (torch.Tensor._make_wrapper_subclass), which PyTorch "
            "makes with a strided or COO layout only ('layout_impl is only implemented for TensorImpl "
            "subclasses').",
        repro="torch.randn(3, 3, device='sim').to_sparse_csr()",
    ),
    "half_fft": Limit(
        what="torch.fft of float16 data cannot run on the simulated device; CUDA computes it for sizes that are "
             "powers of two (cuFFT) and refuses other sizes.",
        why="PyTorch's fft front end accepts float16 only for CUDA tensors, before any dispatch reaches the "
            "simulator ('Unsupported dtype Half'); grader/simulated/half_fft.py says so instead.",
        repro="torch.fft.fft(torch.ones(16, dtype=torch.float16, device='sim'))",
    ),
    "script_module_identity": Limit(
        what="moving a TorchScript module (torch.jit.script or torch.jit.trace) to or from the simulated device "
             "makes new Parameter objects; CUDA moves each parameter in place. An optimizer built before the move "
             "keeps the old ones here. Moving a plain nn.Module keeps its parameters, as on CUDA.",
        why="CUDA's move sets param.data, which needs the same TensorImpl type on both sides; a simulated tensor "
            "is a wrapper subclass, so the simulator swaps parameters in place instead (torch.utils.swap_tensors), "
            "which refuses a parameter that TorchScript's C++ module also holds.",
        repro="m = torch.jit.script(torch.nn.Linear(3, 2)); w = m.weight; m.to('sim'); m.weight is w  # False",
    ),
    "attention_runs_math": Limit(
        what="scaled_dot_product_attention always runs the math composite: memory counters include the "
             "attention matrix that CUDA's fused kernels never store. Its device checks follow the kernel CUDA "
             "would pick (sdpa.py).",
        why="the fused kernels (flash, memory-efficient, cuDNN) are CUDA code; the Python backend can only run "
            "the CPU's kernels underneath.",
        repro="q = torch.randn(1, 8, 1024, 64, device='sim'); F.scaled_dot_product_attention(q, q, q)",
    ),
    "copy_composites": Limit(
        what="slice_scatter, select_scatter, diagonal_scatter, as_strided_scatter and resize_as_ with a CPU tensor "
             "and a device tensor are refused; CUDA runs them (the result on the first tensor's device), since they "
             "are a clone and a copy_ there. Rare in device code; tests/simulated/test_cpu_mixes.py lists them.",
        why="the simulator computes each operator from its arguments' CPU data and places the result by "
            "TensorIterator's rules; these five would need their CUDA composites reproduced one by one.",
        repro="torch.slice_scatter(torch.zeros(4), torch.ones(2, device='sim'), start=0, end=2)",
    ),
}

_PATTERNS = [
    (re.compile(r"getNewGenerator|getDefaultGenerator"), "raw_device_generator"),
    (re.compile(r"device type at start of device string: sim"), "load_without_grader"),
    (re.compile(r"Backend doesn't support"), "device_count_of_guard"),
    (re.compile(r"device_ready_queues_"), "device_count_of_guard"),
    (re.compile(r"has sparse COO tensors only"), "sparse_layouts"),
    (re.compile(r"the simulated device cannot compute torch\.fft\."), "half_fft"),
]


def limit_message(exc: BaseException) -> str | None:
    """A sentence naming the simulator limit behind ``exc``, or None when ``exc`` is not one of them."""
    text = f"{type(exc).__name__}: {exc}"
    for pat, key in _PATTERNS:
        if pat.search(text):
            lim = LIMITS[key]
            return f"simulator limit ({key}): {lim.what} Why: {lim.why}"
    return None
