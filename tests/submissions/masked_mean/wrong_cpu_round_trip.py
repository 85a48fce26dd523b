# expect: makes Python wait
import torch


def masked_mean(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    device = x.device
    x, lengths = x.cpu(), lengths.cpu()                # compute where the mask is...
    B, T, D = x.shape
    mask = (torch.arange(T)[None, :] < lengths[:, None]).to(x.dtype).unsqueeze(-1)
    out = (x * mask).sum(dim=1) / lengths[:, None].to(x.dtype)
    return out.to(device)                              # ...and send the answer back
