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
        for features in self.store.values():
            del features                    # deletes the loop variable only
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
