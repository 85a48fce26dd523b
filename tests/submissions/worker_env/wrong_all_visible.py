# expect: it should see exactly
def worker_env(rank, gpu_ids, base_env):
    env = dict(base_env)
    env["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in gpu_ids)
    env["RANK"] = str(rank)
    return env


def worker_device(env):
    return f"cuda:{env['RANK']}"
