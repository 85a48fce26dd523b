# expect: promises None for a key
"""Frees the features, but get() indexes the dict: a key that is not cached raises KeyError where the docstring
promises None (the grader asked only for keys it had put, before)."""


class FeatureCache:
    def __init__(self):
        self.store = {}

    def put(self, key, features):
        self.store[key] = features

    def get(self, key):
        return self.store[key]

    def release(self):
        self.store.clear()
