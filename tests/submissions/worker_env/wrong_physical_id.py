# expect: invalid device ordinal
def worker_env(rank, gpu_ids, base_env):
    env = dict(base_env)
    env["CUDA_VISIBLE_DEVICES"] = str(gpu_ids[rank])
    env["RANK"] = str(rank)
    return env


def worker_device(env):
    return f"cuda:{env['CUDA_VISIBLE_DEVICES']}"     # the GPU's own number
