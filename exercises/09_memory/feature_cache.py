"""A cache whose release() frees nothing.

FeatureCache keeps the backbone features of images by id during the first phase of a two-phase job,
so that they are not recomputed. Before the second phase (fine-tuning, which needs the GPU memory) the
job calls cache.release(), which should give back the memory the features hold. Afterwards the cache is
empty and may be filled again.

    cache = FeatureCache()
    cache.put("img-0", features)   # features: a tensor on the device
    cache.get("img-0")             # the tensor, or None when it is not cached
    cache.release()                # drop every cached tensor and give the memory back

After release(), nvidia-smi shows the memory still used and torch.cuda.memory_allocated() has not moved;
fine-tuning runs out of memory. Fix release().

Check your fix with:  devcourse check feature_cache
"""

import torch


class FeatureCache:
    def __init__(self):
        self.store = {}

    def put(self, key: str, features: torch.Tensor) -> None:
        self.store[key] = features

    def get(self, key: str):
        return self.store.get(key)

    def release(self) -> None:
        if torch.cuda.is_available():
            torch.cuda.empty_cache()        # give the GPU memory back
