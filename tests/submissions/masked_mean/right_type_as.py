"""Float positions made with device= and dtype= from x, compared with lengths cast by type_as."""
import torch


def masked_mean(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    B, T, D = x.shape
    positions = torch.arange(T, device=x.device, dtype=x.dtype)
    weights = (positions < lengths.type_as(x)[:, None]).type_as(x)        # (B, T)
    return torch.bmm(weights.unsqueeze(1), x).squeeze(1) / lengths.type_as(x)[:, None]
