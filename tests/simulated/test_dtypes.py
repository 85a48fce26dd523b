"""Dtypes where the CPU's kernels and CUDA's differ (the simulator runs the CPU's): CUDA's answers were recorded
by the fidelity suite's dtype cases; these tests pin what the simulator does around them."""

import pytest
import torch
import torch.nn.functional as F

import grader.simulated as gs


def test_cuda_words_are_used_for_device_ops_only():
    with pytest.raises(RuntimeError, match="^expected mat1 and mat2 to have the same dtype"):
        torch.ones(2, 2, device="sim") @ torch.ones(2, 2, dtype=torch.float64, device="sim")
    with pytest.raises(RuntimeError, match="^expected m1 and m2 to have the same dtype"):  # the CPU's own words
        torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64)
    with pytest.raises(RuntimeError, match=r"but got torch\.sim\.FloatTensor instead"):
        torch.nn.Embedding(4, 2).to("sim:1")(torch.tensor([1.0], device="sim:1"))


def test_float16_rrelu_runs_as_on_cuda_and_draws_its_noise():
    x = -torch.ones(1000, dtype=torch.float16, device="sim")
    out = F.rrelu(x, lower=0.1, upper=0.3, training=True)
    assert out.dtype is torch.float16 and out.device == x.device
    slopes = -out.float().cpu()
    assert slopes.min() >= 0.099 and slopes.max() <= 0.301 and slopes.std() > 0.01


@pytest.mark.parametrize("run, error", [
    (lambda: F.interpolate(torch.zeros(1, 1, 2, 2, dtype=torch.uint8, device="sim"), scale_factor=2, mode="bilinear"),
     "\"upsample_bilinear2d_out_frame\" not implemented for 'Byte'"),
    (lambda: F.conv2d(torch.zeros(1, 1, 3, 3, dtype=torch.uint8, device="sim"),
                      torch.ones(1, 1, 2, 2, dtype=torch.uint8, device="sim")),
     "GET was unable to find an engine to execute this computation"),
    (lambda: torch.cdist(torch.ones(2, 2, dtype=torch.float16, device="sim"),
                         torch.ones(2, 2, dtype=torch.float16, device="sim")),
     "\"cdist_sim\" not implemented for 'Half'"),
])
def test_kernels_cuda_lacks_are_refused_with_its_words(run, error):
    with pytest.raises(RuntimeError) as exc:
        run()
    assert str(exc.value) == error
    # the same code runs on the CPU, whose kernels have these dtypes
    assert torch.equal(F.interpolate(torch.zeros(1, 1, 2, 2, dtype=torch.uint8), scale_factor=2, mode="bilinear"),
                       torch.zeros(1, 1, 4, 4, dtype=torch.uint8))


def test_a_float16_fft_is_a_simulator_limit_and_other_ffts_run():
    with pytest.raises(NotImplementedError) as exc:
        torch.fft.rfft(torch.ones(16, dtype=torch.float16, device="sim"))
    assert "simulator limit (half_fft)" in gs.limit_message(exc.value)
    assert torch.fft.fft(torch.ones(16, device="sim")).device.type == "sim"
    with pytest.raises(RuntimeError, match="Unsupported dtype Half"):  # the CPU's refusal is left alone
        torch.fft.fft(torch.ones(16, dtype=torch.float16))
