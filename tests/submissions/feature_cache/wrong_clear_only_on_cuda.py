# expect: still alive
# on cuda: passes (it knows only CUDA; the simulator stands for any other accelerator, where it fails, as on MPS)
"""Moves the clear() under the CUDA test: on any other device (or the CPU) nothing is released."""
import torch


class FeatureCache:
    def __init__(self):
        self.store = {}

    def put(self, key, features):
        self.store[key] = features

    def get(self, key):
        return self.store.get(key)

    def release(self):
        if torch.cuda.is_available():
            self.store.clear()
            torch.cuda.empty_cache()
