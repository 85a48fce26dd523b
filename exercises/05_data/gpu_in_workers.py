"""Standardising images on the GPU, inside the DataLoader's workers.

A small image classifier is trained from a DataLoader with two worker processes:

    Standardized(images, labels, device)   a Dataset: example i is (image i standardised to mean 0 and
                                            standard deviation 1, label i)
    make_loader(images, labels, device)    the DataLoader: batches of 16, in order, num_workers=2
    train_step(model, optimizer, batch, device)
                                            one SGD step on a batch (x, y) from the loader; returns the loss

    images  float tensor (N, H, W) on the CPU;  labels  int64 tensor (N,) on the CPU

Someone moved the standardisation to the GPU "because it is faster". On the CPU everything works; on a GPU
the first batch fails: the DataLoader's worker processes are forked from the main process, which has
already used CUDA, and CUDA cannot be used in a forked process ("Cannot re-initialize CUDA in forked
subprocess"). Fix it so that the workers only do CPU work and the training step moves each batch to the
device, keeping the two workers.

Check your fix with:  devcourse check gpu_in_workers
"""

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Standardized(Dataset):
    def __init__(self, images, labels, device):
        self.images, self.labels, self.device = images, labels, device

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        x = self.images[i].to(self.device)                 # standardise on the GPU
        x = (x - x.mean()) / (x.std() + 1e-6)
        return x, self.labels[i].to(self.device)


def make_loader(images, labels, device, batch_size=16):
    return DataLoader(Standardized(images, labels, device), batch_size=batch_size, num_workers=2)


def train_step(model, optimizer, batch, device):
    x, y = batch
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach()
