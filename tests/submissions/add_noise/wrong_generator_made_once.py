# expect: gave other noise the second time
"""Makes one generator per device and seed, once, and keeps it: the second call goes on with its stream."""
import torch

_generators = {}


def add_noise(x: torch.Tensor, seed: int, std: float = 0.1) -> torch.Tensor:
    key = (x.device, seed)
    if key not in _generators:
        _generators[key] = torch.Generator(device=x.device).manual_seed(seed)
    return x + std * torch.randn(x.shape, generator=_generators[key], dtype=x.dtype, device=x.device)
