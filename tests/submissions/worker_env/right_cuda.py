def worker_env(rank, gpu_ids, base_env):
    return {**base_env, "CUDA_VISIBLE_DEVICES": f"{gpu_ids[rank]}", "RANK": f"{rank}"}


def worker_device(env):
    return "cuda"          # the current device of a fresh process: the one GPU it sees
