"""Pops every key in a loop, then asks the accelerator's module to empty its cache."""
import torch


class FeatureCache:
    def __init__(self):
        self.store = {}

    def put(self, key, features):
        self.store[key] = features

    def get(self, key):
        return self.store.get(key)

    def release(self):
        for key in list(self.store):
            self.store.pop(key)
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
