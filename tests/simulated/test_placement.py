import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

MIX = "Expected all tensors to be on the same device, but found at least two devices, {} and {}!"


def test_device_plus_cpu_message_like_cuda():
    x, y = torch.ones(3, device="sim"), torch.ones(3)
    with pytest.raises(RuntimeError) as e:
        x + y
    assert str(e.value) == MIX.format("sim:0", "cpu")
    with pytest.raises(RuntimeError) as e:  # CUDA names the device first either way
        y + x
    assert str(e.value) == MIX.format("sim:0", "cpu")
    with pytest.raises(RuntimeError) as e:
        y.add_(x)
    assert str(e.value) == MIX.format("sim:0", "cpu")


def test_sim0_with_sim1():
    a, b = torch.ones(3, device="sim:0"), torch.ones(3, device="sim:1")
    with pytest.raises(RuntimeError) as e:
        a * b
    assert str(e.value) == MIX.format("sim:0", "sim:1")
    with pytest.raises(RuntimeError) as e:
        b * a
    assert str(e.value) == MIX.format("sim:1", "sim:0")


def test_zero_dim_cpu_scalar_mixes():
    out = torch.ones(3, device="sim") * torch.tensor(2.0)
    assert out.device.type == "sim" and out.cpu().tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="same device"):
        torch.ones(3, device="sim") * torch.tensor([2.0])


def test_codegen_style_messages():
    with pytest.raises(RuntimeError) as e:
        torch.ones(2, 3, device="sim") @ torch.ones(3, 2)
    assert "but got mat2 is on cpu, different from other tensors on sim:0" in str(e.value)
    with pytest.raises(RuntimeError) as e:
        nn.Linear(3, 2)(torch.ones(4, 3, device="sim"))
    assert "got mat1 is on sim:0, different from other tensors on cpu" in str(e.value)
    with pytest.raises(RuntimeError, match="got index is on cpu"):
        nn.Embedding(5, 2).to("sim")(torch.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="got target is on cpu"):
        F.cross_entropy(torch.zeros(2, 3, device="sim"), torch.tensor([0, 1]))


def test_conv_message_like_cuda():
    # Both texts as CUDA gives them with torch 2.11 (grader/simulated/fidelity_cuda.md).
    conv = nn.Conv2d(1, 2, 3).to("sim")
    with pytest.raises(RuntimeError) as e:
        conv(torch.ones(1, 1, 5, 5))
    assert str(e.value) == (
        "Expected all tensors to be on the same device, but got weight is on sim:0, different from other tensors "
        "on cpu (when checking argument in method wrapper_SIM___slow_conv2d_forward)"
    )
    with pytest.raises(RuntimeError) as e:
        nn.Conv2d(1, 2, 3)(torch.ones(1, 1, 5, 5, device="sim"))
    assert str(e.value) == "Input type (torch.sim.FloatTensor) and weight type (torch.FloatTensor) should be the same"


def test_cpu_index_into_device_ok_device_index_into_cpu_fails():
    x = torch.arange(5.0, device="sim")
    assert x[torch.tensor([1, 3])].cpu().tolist() == [1.0, 3.0]
    assert x[torch.tensor([True, False, True, False, False])].cpu().tolist() == [0.0, 2.0]
    x[torch.tensor([0])] = 7.0
    assert x[0].item() == 7.0
    with pytest.raises(RuntimeError) as e:
        torch.arange(5.0)[torch.tensor([1], device="sim")]
    assert str(e.value) == ("indices should be either on cpu or on the same device as the "
                            "indexed tensor (cpu)")


def test_numpy_on_device_tensor():
    with pytest.raises(TypeError) as e:
        torch.ones(2, device="sim").numpy()
    assert str(e.value) == ("can't convert sim:0 device type tensor to numpy. Use Tensor.cpu() "
                            "to copy the tensor to host memory first.")
    assert torch.ones(2, device="sim").cpu().numpy().tolist() == [1.0, 1.0]


def test_torch_tensor_of_device_scalars_is_cpu_via_item(rec):
    a, b = torch.tensor(1.5, device="sim"), torch.tensor(2.5, device="sim")
    n0 = rec.n_syncs
    t = torch.tensor([a, b])
    assert t.device.type == "cpu" and t.tolist() == [1.5, 2.5]
    assert rec.sync_reasons[n0:] == ["item", "item"]


def test_to_and_cpu_both_ways_and_between_indices(rec):
    x = torch.arange(4.0)
    s0 = x.to("sim")
    s1 = s0.to("sim:1")
    assert s1.device == torch.device("sim:1")
    back = s1.cpu()
    assert back.device.type == "cpu" and back.tolist() == x.tolist()
    assert s0.to(torch.float16).device == torch.device("sim:0")
    assert len(rec.h2d) == 1 and len(rec.d2d) == 1 and len(rec.d2h) == 1
    assert rec.h2d[0].nbytes == 16 and rec.h2d[0].dst == "sim:0"
    assert rec.d2d[0].src == "sim:0" and rec.d2d[0].dst == "sim:1"
    assert torch.zeros(3, device="sim").sim().device.type == "sim"
    assert torch.ones(2).sim(1).device == torch.device("sim:1")


def test_the_codegen_table_is_what_this_torch_generates():
    # grader/simulated/codegen_checks.json comes from PyTorch's own code generator (tools/codegen_device_checks.py)
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    table = json.loads((root / "grader" / "simulated" / "codegen_checks.json").read_text())
    if table["torch"] != torch.__version__.split("+")[0]:
        pytest.skip(f"the table is from torch {table['torch']}; this is {torch.__version__}")
    done = subprocess.run([sys.executable, "tools/codegen_device_checks.py", "--check"], cwd=root,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # the entries the fidelity suite confirmed on real GPUs before the table was generated
    assert table["ops"]["addmm"] == ["addmm", ["self", "mat1", "mat2"]]
    assert table["ops"]["index_select"] == ["_index_select", ["self", "index"]]
    assert table["ops"]["clamp.Tensor"] == ["clamp_Tensor", ["self", "min", "max"]]


def test_a_0_dim_cpu_tensor_is_refused_where_generated_code_checks_devices():
    x = torch.arange(3.0, device="sim")
    assert (x * torch.tensor(2.0)).device.type == "sim"  # TensorIterator: a scalar
    assert torch.where(x > 0, x, torch.tensor(-1.0)).device.type == "sim"
    with pytest.raises(RuntimeError) as e:
        x.clamp(min=torch.tensor(1.0))
    assert str(e.value) == ("Expected all tensors to be on the same device, but got min is on cpu, different from "
                            "other tensors on sim:0 (when checking argument in method wrapper_SIM_clamp_Tensor)")


def test_values_written_through_indices_must_be_on_the_device():
    x = torch.zeros(4, device="sim")
    x[torch.tensor([0, 2])] = torch.tensor(3.0)  # CPU indices and a 0-dim CPU value are fine
    x[x == 0] = torch.tensor(1.0)
    assert x.cpu().tolist() == [3.0, 1.0, 3.0, 1.0]
    with pytest.raises(RuntimeError) as e:
        x[torch.tensor([0, 2])] = torch.tensor([1.0, 2.0])
    assert str(e.value) == MIX.format("sim:0", "cpu")


def test_mv_speaks_as_the_addmv_kernel_cuda_runs():
    with pytest.raises(RuntimeError, match=r"but got mat is on sim:0, different from other tensors on cpu .*addmv_\)"):
        torch.mv(torch.ones(2, 3, device="sim"), torch.ones(3))
    with pytest.raises(RuntimeError, match=r"but got mat is on cpu, different from other tensors on sim:0"):
        torch.mv(torch.ones(2, 3), torch.ones(3, device="sim"))


def test_an_op_cuda_has_no_kernel_for_is_not_implemented_on_the_device():
    x = torch.arange(4.0)
    assert torch.histogram(x, bins=2).hist.tolist() == [2.0, 2.0]  # on the CPU it runs
    with pytest.raises(NotImplementedError,
                       match=r"^Could not run 'aten::histogram.bin_ct' with arguments from the 'sim' backend"):
        torch.histogram(x.to("sim"), bins=2)
    assert torch.histc(x.to("sim"), bins=2).device.type == "sim"  # the CUDA way to count


def test_a_composite_op_speaks_as_the_kernel_cuda_runs_it_with():
    # CUDA has no kernel of its own for complex or masked_scatter: their composites call complex.out and
    # masked_scatter_, whose generated checks word the error
    with pytest.raises(RuntimeError, match=r"but got imag is on cpu, .* wrapper_SIM_out_complex_out\)"):
        torch.complex(torch.ones(2, device="sim"), torch.zeros(2))
    x = torch.zeros(3, device="sim")
    with pytest.raises(RuntimeError, match=r"but got source is on cpu, .* wrapper_SIM__masked_scatter_\)"):
        x.masked_scatter(x == 0, torch.ones(3))


def test_a_device_mix_inside_a_torchscript_module_keeps_its_message():
    # TorchScript's interpreter drops the text of an error a Python kernel raises; CUDA's C++ error keeps it
    # (fidelity_cuda.json, "jit.trace on the cpu, then run on the device"): grader/simulated/script_errors.py.
    class AddsCpuZeros(torch.nn.Module):
        def forward(self, x):
            return x + torch.zeros(x.shape)

    for module in (torch.jit.trace(AddsCpuZeros(), torch.ones(2)), torch.jit.script(AddsCpuZeros())):
        with pytest.raises(RuntimeError) as e:
            module(torch.ones(2, device="sim"))
        assert str(e.value).startswith("The following operation failed in the TorchScript interpreter.")
        assert str(e.value).rstrip().endswith(
            "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, sim:0 and cpu!")
        assert module(torch.ones(2)).tolist() == [1.0, 1.0]  # and it still runs where it should
