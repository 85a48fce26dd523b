# expect: dropped or changed
"""Starts the worker env from os.environ instead of base_env."""
import os


def worker_env(rank, gpu_ids, base_env):
    env = dict(os.environ)
    env["CUDA_VISIBLE_DEVICES"] = str(gpu_ids[rank])
    env["RANK"] = str(rank)
    return env


def worker_device(env):
    return "cuda:0"
