import subprocess
import sys
import textwrap

import pytest
import torch

import grader.simulated as gs

ROOT = __file__.rsplit("/tests/", 1)[0]


def _py(code, timeout=120):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout)


def test_installed_and_idempotent():
    assert gs.DEVICE_TYPE == "sim"
    assert gs.is_supported() and gs.is_installed()
    gs.install(count=2, profile="cuda")  # same args: no-op


def test_the_graders_tell_the_simulated_device_by_its_type_and_profile(monkeypatch):
    from grader.engine import legs

    assert legs.simulated_profile("sim") == "cuda"
    assert legs.simulated_profile("cuda") is None and legs.simulated_profile("cpu") is None
    monkeypatch.setattr(gs.config, "PROFILE", "mps")
    assert legs.simulated_profile("sim") == "mps"
    monkeypatch.delitem(sys.modules, "grader.simulated.config")  # a process without the simulator
    assert legs.simulated_profile("sim") is None


def test_reinstall_with_other_args_raises():
    with pytest.raises(RuntimeError, match="already installed"):
        gs.install(count=3)
    with pytest.raises(RuntimeError, match="already installed"):
        gs.install(count=2, profile="mps")


def test_two_indices_and_device_module():
    assert torch.sim.device_count() == 2 and torch.sim.is_available()
    assert torch.sim.current_device() == 0
    a = torch.ones(2, device="sim:0")
    b = torch.ones(2, device="sim:1")
    assert a.device == torch.device("sim", 0) and b.device == torch.device("sim", 1)
    assert torch.ones(2, device="sim").device.index == 0
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.zeros(1, device="sim:2")
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.zeros(1).to("sim:5")


def test_accelerator_reports_sim():
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator() == torch.device("sim")


def test_count_configurable_in_subprocess():
    r = _py("""
        import torch, grader.simulated as gs
        gs.install(count=3)
        print(torch.sim.device_count(), torch.ones(1, device="sim:2").device)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["3", "sim:2"]


def test_old_torch_is_unsupported_without_crash():
    r = _py("""
        import torch
        torch.__version__ = "2.10.0"
        import grader.simulated as gs
        print(gs.is_supported())
        try:
            gs.install()
        except RuntimeError as e:
            print("RuntimeError", "2.11" in str(e))
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "RuntimeError", "True"]


def test_uninstalled_record_raises_in_subprocess():
    r = _py("""
        import grader.simulated as gs
        print(gs.is_installed())
        try:
            with gs.record():
                pass
        except RuntimeError:
            print("raised")
    """)
    assert r.stdout.split() == ["False", "raised"], r.stderr


def test_public_api_additions():
    for name in ("set_memory_capacity", "LIMITS", "limit_message", "install", "record", "host_time", "device_time"):
        assert name in gs.__all__ and hasattr(gs, name)
    assert all(lim.what and lim.why and lim.repro for lim in gs.LIMITS.values())
    gs.set_memory_capacity(2**30, device="sim:1")
    try:
        assert torch.sim.mem_get_info(1)[1] == 2**30
    finally:
        gs.set_memory_capacity("80GiB")
    assert torch.sim.mem_get_info(1)[1] == 80 * 2**30
    gs.install(count=2, profile="cuda")  # same args: still a no-op


def test_recorder_fields():
    with gs.record() as rec:
        pass
    assert rec.h2d == rec.d2h == rec.d2d == rec.syncs == rec.host_reads == rec.races == []
    assert rec.launches == 0 and rec.ops == {}


def test_import_alone_changes_nothing_but_the_load_hook_in_subprocess():
    r = _py("""
        import torch
        before = (torch.Generator, torch.Stream, torch.Event, torch.Tensor.to, torch.load)
        import grader.simulated as gs
        after = (torch.Generator, torch.Stream, torch.Event, torch.Tensor.to, torch.load)
        print(before == after, torch._C._get_privateuse1_backend_name(),
              torch._utils._rebuild_device_tensor_from_cpu_tensor.__module__)
    """)
    assert r.stdout.split() == ["True", "privateuseone", "torch._utils"], r.stderr
