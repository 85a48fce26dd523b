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
            del self.store[key]
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
