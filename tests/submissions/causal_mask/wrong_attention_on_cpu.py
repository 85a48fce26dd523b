# expect: makes Python wait
import torch


def causal_mask(size: int, device) -> torch.Tensor:
    return torch.ones(size, size, dtype=torch.bool, device=device).triu(diagonal=1)


def masked_attention(scores: torch.Tensor) -> torch.Tensor:
    # Does the masking where the mask used to be made, then sends the result back.
    cpu = scores.cpu()
    out = cpu.masked_fill(causal_mask(cpu.shape[-1], "cpu"), float("-inf")).softmax(dim=-1)
    return out.to(scores.device)
