"""Grader for worker_env: with CUDA_VISIBLE_DEVICES showing one GPU, that GPU is cuda:0 in the worker.

Pure logic, the same on every machine (so the exercise runs on the CPU leg only): for fresh GPU
assignments (a random subset of 16 physical GPUs, in random order, one id of two digits; a launcher environment
that has its own CUDA_VISIBLE_DEVICES and RANK), the environment of each rank must be a
new dict of strings that keeps base_env, sets RANK, shows exactly the physical GPU gpu_ids[rank], and the device the
worker asks for must exist in that view (cuda:0, or 'cuda', which means it) and be that GPU."""

import random

from grader.engine.expect import fail, running

FIX = ("CUDA_VISIBLE_DEVICES renumbers the GPUs: a worker that sees one GPU calls it cuda:0, whatever its rank. "
       "Use cuda:0 in the worker.")


def assignment():
    """A node of 16 GPUs: a random subset, in random order, never GPU r for every rank r (then using the rank as the
    GPU would look right), with a two-digit id among them. The launcher's own environment already sets
    CUDA_VISIBLE_DEVICES (every GPU of the node) and RANK, which each worker's must replace."""
    while (gpus := random.sample(range(16), random.randint(2, 6))) == list(range(len(gpus))) or max(gpus) < 10:
        pass
    base = {"PATH": "/usr/bin", "HOME": "/home/learner", f"JOB_{random.randint(100, 999)}": "x",
            "CUDA_VISIBLE_DEVICES": ",".join(map(str, range(16))), "RANK": "0"}
    return gpus, base


OWN = ("CUDA_VISIBLE_DEVICES", "RANK")  # the keys worker_env sets: base_env's values of them are replaced


def env_for(submission, rank, gpus, base):
    before = dict(base)
    with running(f"worker_env({rank}, {gpus}, base_env)", submission):
        env = submission.worker_env(rank, list(gpus), base)
    if base != before:
        fail("worker_env changed base_env (the launcher's own environment): build a new dict for the worker.")
    if not isinstance(env, dict) or env is base:
        fail("worker_env should return a new dict, the worker's environment.")
    bad = [k for k, v in env.items() if not isinstance(k, str) or not isinstance(v, str)]
    if bad:
        fail(f"an environment holds strings only; worker_env returned non-strings for {bad[:3]}.")
    missing = [k for k in base if k not in OWN and env.get(k) != base[k]]
    if missing:
        fail(f"worker_env dropped or changed {missing[:3]} of base_env: the worker needs the launcher's environment.")
    if env.get("RANK") != str(rank):
        kept = (" base_env has its own RANK (the launcher's), which the worker's must replace: set the worker's keys "
                "after copying base_env." if env.get("RANK") == base.get("RANK") else "")
        fail(f"worker_env({rank}, ...) sets RANK={env.get('RANK')!r}; the worker's rank is {rank} (torch.distributed "
             f"reads it to tell the workers apart), whichever GPU it is given.{kept}")
    return env


def visible(env):
    value = env.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        fail("worker_env sets no CUDA_VISIBLE_DEVICES: the worker would see every GPU.")
    return [int(v) for v in value.split(",") if v.strip() != ""]


def test_each_worker_sees_its_own_gpu(submission, device):  # device: the CPU leg, on which this logic runs
    gpus, base = assignment()
    for rank in range(len(gpus)):
        seen = visible(env_for(submission, rank, gpus, base))
        if seen != [gpus[rank]]:
            kept = (" That is base_env's CUDA_VISIBLE_DEVICES (the launcher's), which the worker's must replace: set "
                    "the worker's keys after copying base_env." if len(seen) > 1 else "")
            fail(f"worker {rank} of gpu_ids={gpus} sees physical GPU(s) {seen}; it should see exactly "
                 f"[{gpus[rank]}], the entry of gpu_ids for its rank.{kept}")


def test_each_worker_uses_a_gpu_it_can_see(submission, device):
    gpus, base = assignment()
    for rank in range(len(gpus)):
        env = env_for(submission, rank, gpus, base)
        seen = visible(env)
        with running(f"worker_device(env of worker {rank})", submission):
            name = submission.worker_device(dict(env))
        if not isinstance(name, str):
            name = str(name)
        kind, _, index = name.partition(":")
        if kind != "cuda" or (index and not index.isdigit()):
            fail(f"worker_device returned {name!r}; the worker runs on a CUDA GPU ('cuda:N').")
        index = int(index or 0)  # 'cuda' means the current device, cuda:0 in a fresh process
        if index >= len(seen):
            fail(f"worker {rank} (CUDA_VISIBLE_DEVICES={env['CUDA_VISIBLE_DEVICES']!r}) asks for {name!r}, but it "
                 f"sees {len(seen)} GPU(s), numbered from cuda:0: invalid device ordinal. {FIX}")
        if seen[index] != gpus[rank]:
            fail(f"worker {rank} asks for {name!r}, which is physical GPU {seen[index]} in its view, not its own "
                 f"GPU {gpus[rank]}.")
