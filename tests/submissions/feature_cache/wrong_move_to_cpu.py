# expect: still alive
import torch


class FeatureCache:
    def __init__(self):
        self.store = {}

    def put(self, key, features):
        self.store[key] = features

    def get(self, key):
        return self.store.get(key)

    def release(self):
        self.store = {k: v.cpu() for k, v in self.store.items()}   # off the GPU, kept for later
