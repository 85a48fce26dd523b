# expect: worker_env changed base_env
def worker_env(rank, gpu_ids, base_env):
    base_env["CUDA_VISIBLE_DEVICES"] = str(gpu_ids[rank])
    base_env["RANK"] = str(rank)
    return dict(base_env)


def worker_device(env):
    return "cuda:0"
