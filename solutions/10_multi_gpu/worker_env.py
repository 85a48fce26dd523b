"""A launcher whose second worker finds no GPU: the reference fix.

CUDA_VISIBLE_DEVICES renumbers the GPUs a process sees: with CUDA_VISIBLE_DEVICES=3 the process has one
GPU, physical GPU 3, and calls it cuda:0. So a worker that sees one GPU always uses cuda:0, whatever its
rank; cuda:1 does not exist there ("invalid device ordinal").
"""


def worker_env(rank: int, gpu_ids: list[int], base_env: dict[str, str]) -> dict[str, str]:
    env = dict(base_env)
    env["CUDA_VISIBLE_DEVICES"] = str(gpu_ids[rank])
    env["RANK"] = str(rank)
    return env


def worker_device(env: dict[str, str]) -> str:
    return "cuda:0"      # the only GPU this worker sees
