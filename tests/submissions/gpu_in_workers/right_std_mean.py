"""torch.std_mean on the CPU in the Dataset (device argument accepted, unused); the step moves the batch."""
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Standardized(Dataset):
    def __init__(self, images, labels, device=None):
        self.images, self.labels = images, labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        image = self.images[i]
        std, mean = torch.std_mean(image)
        return (image - mean) / (std + 1e-6), self.labels[i]


def make_loader(images, labels, device, batch_size=16):
    return DataLoader(Standardized(images, labels), batch_size=batch_size, num_workers=2)


def train_step(model, optimizer, batch, device):
    device = torch.device(device)
    x, y = [t.to(device) for t in batch]
    optimizer.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.detach()
