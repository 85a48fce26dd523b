"""A launcher whose second worker finds no GPU.

A job runs one worker process per GPU it was given. The launcher gives each worker an environment in
which it sees exactly one GPU, its own, through CUDA_VISIBLE_DEVICES; the worker then asks for the
device named by worker_device(env).

    worker_env(rank, gpu_ids, base_env)  the environment (a new dict of strings) for the worker of `rank`:
                                         base_env plus CUDA_VISIBLE_DEVICES showing physical GPU
                                         gpu_ids[rank] only, and RANK; base_env itself is not changed
    worker_device(env)                   inside the worker: the torch device string it should use

Worker 0 trains. Worker 1 dies with "CUDA error: invalid device ordinal". Fix it.

Check your fix with:  devcourse check worker_env
"""


def worker_env(rank: int, gpu_ids: list[int], base_env: dict[str, str]) -> dict[str, str]:
    env = dict(base_env)
    env["CUDA_VISIBLE_DEVICES"] = str(gpu_ids[rank])
    env["RANK"] = str(rank)
    return env


def worker_device(env: dict[str, str]) -> str:
    return f"cuda:{env['RANK']}"
