"""Keeps the per-item standardisation on the CPU and returns the loss as a Python float."""

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def standardize(image):
    return (image - image.mean()) / (image.std() + 1e-6)


class Standardized(Dataset):
    def __init__(self, images, labels, device):
        self.images, self.labels = images.cpu(), labels.cpu()

    def __len__(self):
        return self.images.shape[0]

    def __getitem__(self, i):
        return standardize(self.images[i]), self.labels[i]


def make_loader(images, labels, device, batch_size=16):
    return DataLoader(Standardized(images, labels, device), batch_size, shuffle=False, num_workers=2)


def train_step(model, optimizer, batch, device):
    x, y = (t.to(device) for t in batch)
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
