# expect: RANK
"""Drops RANK from the worker's environment, since worker_device no longer needs it."""


def worker_env(rank, gpu_ids, base_env):
    env = dict(base_env)
    env["CUDA_VISIBLE_DEVICES"] = str(gpu_ids[rank])
    return env


def worker_device(env):
    return "cuda:0"
