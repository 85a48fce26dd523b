# expect: to the CPU
"""Does the distances in NumPy, under inference_mode: a copy to the host and one back."""
import torch


@torch.inference_mode()
def assign(x, centroids):
    xs, cs = x.cpu().numpy(), centroids.cpu().numpy()
    d = ((xs[:, None, :] - cs[None, :, :]) ** 2).sum(-1)
    return torch.from_numpy(d.argmin(1)).to(x.device)
