# expect: train_step should leave the model where it is
"""CPU workers; train_step avoids the mismatch by bringing the model to the batch, on the CPU."""
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
    x, y = batch
    model.to(x.device)
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach()
