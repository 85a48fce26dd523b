# expect: multiprocessing_context='spawn'
"""Follows the error message's advice: spawned workers, each with its own CUDA context."""

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Standardized(Dataset):
    def __init__(self, images, labels, device):
        self.images, self.labels, self.device = images, labels, device

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        x = self.images[i].to(self.device)
        x = (x - x.mean()) / (x.std() + 1e-6)
        return x, self.labels[i].to(self.device)


def make_loader(images, labels, device, batch_size=16):
    return DataLoader(Standardized(images, labels, device), batch_size=batch_size, num_workers=2,
                      multiprocessing_context="spawn")


def train_step(model, optimizer, batch, device):
    x, y = (t.to(device) for t in batch)
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach()
