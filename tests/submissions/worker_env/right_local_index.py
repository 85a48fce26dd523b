def worker_env(rank, gpu_ids, base_env):
    env = base_env.copy()
    env.update(CUDA_VISIBLE_DEVICES=str(gpu_ids[rank]), RANK=str(rank), LOCAL_DEVICE="0")
    return env


def worker_device(env):
    return "cuda:" + env["LOCAL_DEVICE"]
