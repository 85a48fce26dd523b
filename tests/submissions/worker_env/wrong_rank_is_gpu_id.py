# expect: RANK
"""Fixes the device but sets RANK to the physical GPU id, so ranks are wrong (and can exceed the world size)."""


def worker_env(rank, gpu_ids, base_env):
    env = dict(base_env)
    env["CUDA_VISIBLE_DEVICES"] = str(gpu_ids[rank])
    env["RANK"] = str(gpu_ids[rank])
    return env


def worker_device(env):
    return "cuda:0"
