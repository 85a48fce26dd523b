# expect: parameter
"""Moves the batch in train_step, but dropped optimizer.zero_grad() while rewriting it: gradients accumulate."""
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
    x, y = batch[0].to(device), batch[1].to(device)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.detach()
