"""Issue 11, item 4: device generators and seeding on the simulated device."""
import pickle

import pytest
import torch
import torch.nn.functional as F

import grader.simulated as gs


def test_torch_generator_with_sim_device():
    g = torch.Generator(device="sim")
    # As on CUDA (fidelity_cuda.json, recorded on H100s): a generator made for 'cuda' reports no index.
    assert g.device == torch.device("sim") and isinstance(g, torch.Generator)
    assert torch.Generator(device="sim:1").device == torch.device("sim:1")
    assert torch.Generator("sim").device.type == "sim"
    cpu = torch.Generator()
    assert type(cpu) is torch._C.Generator and cpu.device.type == "cpu" and isinstance(cpu, torch.Generator)
    assert issubclass(type(g), torch.Generator)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.Generator(device="sim:7")


def test_device_generator_drives_factories_and_in_place_random_ops():
    g = torch.Generator(device="sim")
    assert g.manual_seed(0) is g
    a = torch.randn(5, generator=g, device="sim")
    b = torch.empty(5, device="sim").uniform_(generator=g)
    g.manual_seed(0)
    assert torch.equal(a.cpu(), torch.randn(5, generator=g, device="sim").cpu())
    assert torch.equal(b.cpu(), torch.empty(5, device="sim").uniform_(generator=g).cpu())
    assert g.initial_seed() == 0
    st = g.get_state()
    x = torch.rand(3, generator=g, device="sim")
    g.set_state(st)
    assert torch.equal(x.cpu(), torch.rand(3, generator=g, device="sim").cpu())
    idx = torch.randperm(6, generator=g, device="sim")
    assert sorted(idx.tolist()) == list(range(6))


def test_device_default_generator_is_its_own_stream():
    torch.sim.manual_seed(1)
    a = torch.rand(4, device="sim")
    torch.rand(4)  # CPU draws do not move the device's stream
    torch.sim.manual_seed(1)
    torch.rand(100)
    assert torch.equal(a.cpu(), torch.rand(4, device="sim").cpu())
    torch.manual_seed(2)  # seeds every device too (torch.sim.manual_seed_all)
    b = F.dropout(torch.ones(64, device="sim"), 0.5)
    torch.manual_seed(2)
    assert torch.equal(b.cpu(), F.dropout(torch.ones(64, device="sim"), 0.5).cpu())
    assert torch.sim.initial_seed() == 2


def test_devices_have_separate_default_generators():
    torch.sim.manual_seed_all(5)
    a0 = torch.rand(3, device="sim:0")
    a1 = torch.rand(3, device="sim:1")
    assert torch.equal(a0.cpu(), a1.cpu())  # same seed, separate streams
    torch.sim.set_device(1)
    try:
        torch.sim.manual_seed(6)  # current device only
    finally:
        torch.sim.set_device(0)
    assert torch.sim.default_generator(1).initial_seed() == 6 and torch.sim.default_generator(0).initial_seed() == 5


def test_rng_state_functions_and_fork_rng():
    st = torch.sim.get_rng_state()
    a = torch.rand(3, device="sim")
    torch.sim.set_rng_state(st)
    assert torch.equal(a.cpu(), torch.rand(3, device="sim").cpu())
    assert len(torch.sim.get_rng_state_all()) == 2
    with torch.random.fork_rng(device_type="sim"):
        torch.rand(10, device="sim")
    b = torch.rand(3, device="sim")
    torch.sim.set_rng_state(st)
    torch.rand(3, device="sim")
    assert torch.equal(b.cpu(), torch.rand(3, device="sim").cpu())


def test_cpu_generator_for_a_device_op_raises_like_cuda():
    with pytest.raises(RuntimeError) as e:
        torch.randn(3, device="sim", generator=torch.Generator())
    assert str(e.value) == "Expected a 'sim' device type for generator but found 'cpu'"
    with pytest.raises(RuntimeError, match="Expected a 'sim' device type for generator but found 'cpu'"):
        torch.ones(3, device="sim").bernoulli_(0.5, generator=torch.Generator())


def test_device_generator_pickles():
    g = torch.Generator(device="sim:1")
    g.manual_seed(3)
    h = pickle.loads(pickle.dumps(g))
    assert h.device == torch.device("sim:1")
    assert torch.equal(torch.rand(2, generator=g, device="sim:1").cpu(), torch.rand(2, generator=h, device="sim:1").cpu())


def test_the_raw_c_generator_is_a_documented_limit():
    with pytest.raises(NotImplementedError) as e:
        torch._C.Generator(device="sim")
    msg = gs.limit_message(e.value)
    assert msg and "raw_device_generator" in msg and "getNewGenerator" in msg
    assert gs.LIMITS["raw_device_generator"].repro
    assert gs.limit_message(ValueError("unrelated")) is None
