"""A CPU tensor among device tensors, or a tensor of the other GPU, operator by operator: the simulator says what
CUDA said.

tests/simulated/mix_sweep.py runs every OpInfo sample with one argument left on the CPU (as a 0-dim tensor, or
whole), two as 0-dim CPU tensors, or one on the second device (whole or 0-dim); its CUDA outcomes are committed
(grader/simulated/cpu_mixes_sweep_cuda.json, recorded on 2 x H100 with torch 2.11, tools/GPU_RUNS.md).

- The first run found 245 outcomes that differed, 67 of them a call CUDA refuses and the simulator ran (F.mse_loss
  of a device prediction and a 0-dim CPU target, torch.addcdiv, logical_and, nn.Embedding of a 0-dim CPU
  index...): the simulator now raises what CUDA raised for the same operator and CPU arguments
  (grader/simulated/recorded_mixes.py).
- The run with the second GPU (thirteenth session) found 318 of 2322 outcomes that differed. Among them, calls
  CUDA runs and the simulator refused: torch.where and index_fill with a 0-dim tensor of the other GPU, x[i] = v
  with i on the other GPU, linspace between tensors of two GPUs; and other words for refusals: a convolution's
  weight on the other GPU (cuDNN's check), block_diag, cholesky_solve, rsub. The simulator now follows CUDA
  there (grader/simulated/placement.py, other_device_allowed).

KNOWN lists, by OpInfo operator, what still differs and why; it is strict: an entry that no longer differs
fails, so that it is removed."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("expecttest")  # PyTorch's OpInfo database imports it (a dev requirement)

import torch  # noqa: E402

from grader.simulated import recorded_mixes  # noqa: E402

SWEEP = Path(__file__).with_name("mix_sweep.py")
CUDA = Path(recorded_mixes.__file__).with_name("cpu_mixes_sweep_cuda.json")

_SHAPE_FIRST = "CUDA meets a shape error first (a 0-dim tensor where the op needs dimensions); the simulator " \
               "checks devices first: both refuse the call"
_INTERNAL = "an internal operator (underscored, not called by learner code) whose CUDA kernel checks in its own order"
_BATCH_NORM = "called directly, CUDA's own kernel names itself; through F.batch_norm CUDA picks cuDNN's, which the " \
              "simulator names, since it sees the same operator both ways: both refuse"
_COMPOSITE = "LIMITS['copy_composites']: CUDA runs it as a clone and a copy_, with any devices; the simulator refuses"
KNOWN = {
    "_native_batch_norm_legit.": _BATCH_NORM,
    "native_batch_norm.": _BATCH_NORM,
    "_segment_reduce.lengths": _INTERNAL,
    "_segment_reduce.offsets": _INTERNAL,
    "_unsafe_masked_index.": _INTERNAL,
    "_unsafe_masked_index_put_accumulate.": _INTERNAL,
    "as_strided_scatter.": _COMPOSITE,
    "diagonal_scatter.": _COMPOSITE,
    "select_scatter.": _COMPOSITE,
    "slice_scatter.": _COMPOSITE,
    "resize_as_.": _COMPOSITE,
    "cumulative_trapezoid.": _SHAPE_FIRST,
    "trapezoid.": _SHAPE_FIRST,
    "trapz.": _SHAPE_FIRST,
    "nn.functional.soft_margin_loss.": _SHAPE_FIRST,
    "nn.functional.conv1d.": _SHAPE_FIRST + " (0-dim weight and bias)",
    "nn.functional.conv2d.": _SHAPE_FIRST + " (0-dim weight and bias)",
    "nn.functional.conv_transpose1d.": _SHAPE_FIRST + " (0-dim weight and bias)",
    "nn.functional.conv_transpose2d.": _SHAPE_FIRST + " (0-dim weight and bias)",
    "expand_as.": _SHAPE_FIRST + "; the message names the tensor's type",
    "index_put.": "0-dim CPU tensors as the indexed tensor or as indices: CUDA asserts inside its index kernel (and "
                  "with a 0-dim index on the other GPU, in another assert's words)",
    "index_fill.": "a 0-dim CPU tensor filled at a 0-dim CPU index: CUDA runs it on the CPU",
    "masked_fill.": "the in-place masked_fill_ of a 0-dim CPU tensor: CUDA's kernel refuses in words of its own",
    "nn.functional.ctc_loss.": "which kernel CUDA runs (cuDNN's or its own, each with its checks) depends on the "
                               "lengths' devices and dtypes; the fidelity suite's ctc_loss cases agree",
    "nn.functional.bilinear.": "the simulator sees _trilinear, which CUDA runs as bmm: both refuse, in other words "
                               "(and CUDA runs an empty batch)",
    "nn.functional.rms_norm.": "the simulator sees rms_norm's decomposition, CUDA its fused kernel: both refuse, in "
                               "other words",
    "nn.functional.conv3d.": "a CPU input with a device weight: CUDA goes to its slow 3-D kernels, whose words "
                             "differ; the simulator uses cuDNN's: both refuse",
    "nn.functional.conv_transpose3d.": "as conv3d",
    "nn.functional.grid_sample.": "two GPUs: CUDA's grid_sample picks cuDNN's kernel above the grid_sampler_2d the "
                                  "simulator sees (and names): both refuse, in other words",
    "nn.functional.embedding.": _SHAPE_FIRST + " (a 0-dim weight on the other GPU)",
    "mv.": _SHAPE_FIRST + " (a 0-dim matrix on the other GPU)",
}


@pytest.fixture(scope="module")
def outcomes():
    done = subprocess.run([sys.executable, str(SWEEP), "sim"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    cuda = json.loads(CUDA.read_text())["results"]
    return cuda, json.loads(done.stdout.strip().splitlines()[-1])["results"]


def test_the_simulator_says_what_cuda_said(outcomes):
    cuda, sim = outcomes
    shared = cuda.keys() & sim.keys()
    assert len(shared) > 3000, "the sweep no longer meets the recorded samples (another torch's OpInfo?)"
    differ = {k for k in shared if cuda[k] != sim[k]}
    unexplained = sorted(k for k in differ if k.split("|")[0] not in KNOWN)
    assert not unexplained, [(k, cuda[k], sim[k]) for k in unexplained[:10]]
    stale = sorted(op for op in KNOWN if not any(k.split("|")[0] == op for k in differ))
    assert not stale, f"these agree now: remove them from KNOWN: {stale}"


def test_refused_as_on_cuda_where_a_0_dim_cpu_tensor_is_not_a_scalar():
    # CUDA takes a 0-dim CPU tensor beside device tensors only where TensorIterator allows one (x * t), not
    # in mse_loss, addcdiv or an embedding lookup.
    device = torch.device("sim", 1)
    pred = torch.tensor(0.3, device=device)
    assert (pred * torch.tensor(2.0)).device == device
    with pytest.raises(RuntimeError, match=r"found at least two devices, sim:1 and cpu!"):
        torch.nn.functional.mse_loss(pred, torch.tensor(1.0))
    with pytest.raises(RuntimeError, match=r"CPU Scalar support for tensor1 argument is not supported when calling "
                                           r"addcmul on SIM tensors"):
        torch.addcmul(torch.ones(3, device=device), torch.tensor(2.0), torch.ones(3, device=device))
    with pytest.raises(RuntimeError, match=r"got index is on cpu, different from other tensors on sim:1 \(when "
                                           r"checking argument in method wrapper_SIM__index_select\)"):
        torch.nn.Embedding(5, 2).to(device)(torch.tensor(3))
