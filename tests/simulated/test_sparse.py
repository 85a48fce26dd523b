"""Sparse COO tensors on the simulated device, as graph code uses them (an adjacency matrix times features).
CUDA's answers were recorded by the fidelity suite's sparse cases (grader/simulated/fidelity_cuda.json); these
tests pin the details around them: memory, copies, training, and the layouts the simulator cannot make."""

import pytest
import torch

import grader.simulated as gs

pytestmark = pytest.mark.filterwarnings("ignore:Sparse:UserWarning")


def adjacency(device=None):
    i = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    return torch.sparse_coo_tensor(i, torch.full((4,), 0.5), (3, 3), device=device)


def test_indices_and_values_each_hold_device_memory_until_the_tensor_dies():
    before = torch.sim.memory_allocated(1)
    a = adjacency("sim:1")
    assert (a.device, a.layout, a._indices().device, a._values().device) == (
        torch.device("sim:1"), torch.sparse_coo, torch.device("sim:1"), torch.device("sim:1"))
    assert torch.sim.memory_allocated(1) - before == 1024  # two 512-byte blocks, as CUDA's allocator gives
    del a
    assert torch.sim.memory_allocated(1) == before


def test_a_copy_to_the_cpu_is_a_device_to_host_copy_and_keeps_the_layout(rec):
    a = adjacency().to("sim")
    back = a.cpu()
    assert back.layout is torch.sparse_coo and back.device.type == "cpu"
    assert torch.equal(back.to_dense(), adjacency().to_dense())
    assert any(c.kind == "d2h" for c in rec.copies)


def test_graph_layer_trains_on_sim_1_with_its_gradient_there():
    x = torch.ones(3, 2, device="sim:1", requires_grad=True)
    torch.sparse.mm(adjacency().to("sim:1"), x).sum().backward()
    assert x.grad.device == torch.device("sim:1")
    assert x.grad.cpu().tolist() == [[0.5, 0.5], [1.0, 1.0], [0.5, 0.5]]


def test_sparse_embedding_with_sparse_adam_steps_on_the_device():
    emb = torch.nn.Embedding(10, 3, sparse=True).to("sim:1")
    opt = torch.optim.SparseAdam(emb.parameters())
    before = emb.weight.detach().cpu().clone()
    emb(torch.tensor([1, 2, 2], device="sim:1")).sum().backward()
    assert (emb.weight.grad.device, emb.weight.grad.layout) == (torch.device("sim:1"), torch.sparse_coo)
    opt.step()
    changed = (emb.weight.detach().cpu() != before).any(dim=1)
    assert changed.tolist() == [i in (1, 2) for i in range(10)]


@pytest.mark.parametrize("run, message", [
    (lambda: torch.sparse.mm(adjacency(), torch.ones(3, 2, device="sim")),
     "mat1 is on cpu, different from other tensors on sim:0 (when checking argument in method "
     "wrapper_SparseSIM__addmm)"),
    (lambda: adjacency().to("sim") @ torch.ones(3, 2),
     "mat2 is on cpu, different from other tensors on sim:0 (when checking argument in method wrapper_SparseSIM__mm)"),
    (lambda: adjacency().to("sim") + adjacency(), "add: expected 'other' to be SIM, but got CPU"),
    (lambda: adjacency() + adjacency().to("sim"), "add: expected 'self' to be SIM, but got CPU"),
    (lambda: torch.ones(3, 3, device="sim") + adjacency(),
     "add: expected 'other' to be a SIM tensor, but got a CPU tensor"),
])
def test_a_mix_of_devices_gets_cudas_sparse_kernel_message(run, message):
    with pytest.raises(RuntimeError) as exc:
        run()
    assert message in str(exc.value)


def test_a_compressed_layout_is_a_simulator_limit_not_a_learner_error():
    with pytest.raises(NotImplementedError) as exc:
        torch.eye(3, device="sim").to_sparse_csr()
    assert "simulator limit (sparse_layouts)" in gs.limit_message(exc.value)
