"""Pops every entry, then asks whatever accelerator there is to return its cached blocks."""
import torch


class FeatureCache:
    def __init__(self):
        self.store: dict[str, torch.Tensor] = {}

    def put(self, key, features):
        self.store[key] = features

    def get(self, key):
        return self.store.get(key)

    def release(self):
        while self.store:
            self.store.popitem()
        if torch.accelerator.is_available():
            torch.accelerator.memory.empty_cache()
