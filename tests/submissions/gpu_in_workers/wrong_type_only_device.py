# expect: raised
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
"""CPU workers, but train_step moves the batch to torch.device(device).type (the current device)."""
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Standardized(Dataset):
    def __init__(self, images, labels, device):
        self.images, self.labels = images, labels

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        x = self.images[i]
        return (x - x.mean()) / (x.std() + 1e-6), self.labels[i]


def make_loader(images, labels, device, batch_size=16):
    return DataLoader(Standardized(images, labels, device), batch_size=batch_size, num_workers=2)


def train_step(model, optimizer, batch, device):
    kind = torch.device(device).type
    x, y = (t.to(kind) for t in batch)
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach()
