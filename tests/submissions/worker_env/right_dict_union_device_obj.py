"""Builds the env with dict union and returns torch.device('cuda', 0) formatted as a string."""
import torch


def worker_env(rank, gpu_ids, base_env):
    return base_env | {"CUDA_VISIBLE_DEVICES": str(gpu_ids[rank]), "RANK": str(rank)}


def worker_device(env):
    return str(torch.device("cuda", 0))
