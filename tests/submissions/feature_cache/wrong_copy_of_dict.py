# expect: still alive
"""Clears a copy of the dictionary; the cache's own dictionary keeps every tensor."""
import torch


class FeatureCache:
    def __init__(self):
        self.store = {}

    def put(self, key, features):
        self.store[key] = features

    def get(self, key):
        return self.store.get(key)

    def release(self):
        store = dict(self.store)
        store.clear()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
