# expect: it should see exactly
"""Takes the first character of the id's text, as if GPU ids had one digit: a node of 16 GPUs has GPU 12."""


def worker_env(rank, gpu_ids, base_env):
    env = dict(base_env)
    env["CUDA_VISIBLE_DEVICES"] = str(gpu_ids[rank])[0]
    env["RANK"] = str(rank)
    return env


def worker_device(env):
    return "cuda:0"
