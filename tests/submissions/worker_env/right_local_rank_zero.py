"""Sets LOCAL_RANK=0 (the index inside the one-GPU view) next to RANK and uses it for the device."""
import copy


def worker_env(rank, gpu_ids, base_env):
    env = copy.copy(base_env)
    env.update({"CUDA_VISIBLE_DEVICES": f"{gpu_ids[rank]:d}", "RANK": f"{rank:d}", "LOCAL_RANK": "0"})
    return env


def worker_device(env):
    return f"cuda:{int(env['LOCAL_RANK'])}"
