# expect: holds strings only
"""Stores the GPU id and rank as ints in the environment."""


def worker_env(rank, gpu_ids, base_env):
    env = dict(base_env)
    env["CUDA_VISIBLE_DEVICES"] = gpu_ids[rank]
    env["RANK"] = rank
    return env


def worker_device(env):
    return "cuda:0"
