# expect: invalid device ordinal
"""Uses LOCAL_RANK if set, else falls back to RANK, which the launcher sets: back to cuda:<rank>."""


def worker_env(rank, gpu_ids, base_env):
    env = dict(base_env)
    env["CUDA_VISIBLE_DEVICES"] = str(gpu_ids[rank])
    env["RANK"] = str(rank)
    return env


def worker_device(env):
    return f"cuda:{env.get('LOCAL_RANK', env['RANK'])}"
