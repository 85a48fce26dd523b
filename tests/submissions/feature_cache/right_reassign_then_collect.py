"""Replaces the dict, runs the garbage collector, then empties the device's cache whatever the accelerator."""
import gc

import torch


class FeatureCache:
    def __init__(self):
        self.store = {}

    def put(self, key, features):
        self.store[key] = features

    def get(self, key):
        return self.store.get(key)

    def release(self):
        self.store = {}
        gc.collect()
        if torch.accelerator.is_available():
            torch.accelerator.empty_cache() if hasattr(torch.accelerator, "empty_cache") else None
