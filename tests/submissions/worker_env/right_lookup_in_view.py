"""Records the worker's physical GPU and finds its position in CUDA_VISIBLE_DEVICES (always 0 here)."""


def worker_env(rank, gpu_ids, base_env):
    env = {k: v for k, v in base_env.items()}
    env["CUDA_VISIBLE_DEVICES"] = str(gpu_ids[rank])
    env["RANK"] = str(rank)
    env["WORKER_GPU"] = str(gpu_ids[rank])
    return env


def worker_device(env):
    view = env["CUDA_VISIBLE_DEVICES"].split(",")
    return f"cuda:{view.index(env['WORKER_GPU'])}"
