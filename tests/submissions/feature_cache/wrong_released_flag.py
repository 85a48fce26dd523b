# expect: must be usable again
"""Drops the references but sets a flag that makes later puts no-ops."""
import torch


class FeatureCache:
    def __init__(self):
        self.store = {}
        self.released = False

    def put(self, key, features):
        if not self.released:
            self.store[key] = features

    def get(self, key):
        return self.store.get(key)

    def release(self):
        self.store.clear()
        self.released = True
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
