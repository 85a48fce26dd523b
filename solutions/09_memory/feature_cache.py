"""A cache whose release() frees nothing: the reference fix.

empty_cache() returns to the driver only the cached blocks that no tensor uses; it frees no live tensor.
The dictionary still references every feature tensor, so their memory stays allocated. Dropping the
references frees it (memory_allocated falls at once); empty_cache() afterwards hands the now unused
cached blocks back to the driver, so that nvidia-smi and other processes see the memory free too.
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
        self.store.clear()                  # drop the references: the tensors are freed
        if torch.cuda.is_available():
            torch.cuda.empty_cache()        # then give the cached blocks back to the driver
