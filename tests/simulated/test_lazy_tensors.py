"""Tensors PyTorch makes lazily: conjugate and negative views (a bit on the tensor, resolved when needed) and
autograd's zero gradients (no memory). An OpInfo sweep over every operator's samples with backward found both:
the bit lived on the simulated tensor's data but not on the tensor (printing the gradient of torch.fft.hfft
failed, and another sample aborted the process), and sgn's backward had no kernel."""

import pytest
import torch


def test_a_conjugate_view_is_one_on_the_device_too():
    x = torch.randn(4, dtype=torch.complex64)
    c = x.to("sim").conj()
    assert c.is_conj() and torch.equal(c.resolve_conj().cpu(), x.conj().resolve_conj())
    assert torch.equal(torch.view_as_real(c.resolve_conj()).cpu(), torch.view_as_real(x.conj().resolve_conj()))
    with pytest.raises(RuntimeError, match="view_as_real doesn't work on unresolved conjugated tensors"):
        torch.view_as_real(c)
    assert "device='sim:0'" in repr(c) and torch.equal((c + 1).cpu(), x.conj() + 1)


def test_gradients_through_fft_and_sgn():
    x = torch.randn(5, dtype=torch.complex64)
    s = x.to("sim").requires_grad_()
    torch.fft.hfft(s).sum().backward()
    c = x.clone().requires_grad_()
    torch.fft.hfft(c).sum().backward()
    assert torch.allclose(s.grad.cpu(), c.grad) and "device='sim:0'" in repr(s.grad)
    r = torch.randn(3, device="sim:1", requires_grad=True)
    torch.sgn(r).sum().backward()
    assert r.grad.device == torch.device("sim:1") and not r.grad.cpu().any()
