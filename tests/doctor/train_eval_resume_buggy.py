"""Train a classifier with a fixed class prior, evaluate it, save a checkpoint, then resume training from it."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
torch.manual_seed(0)
CLASSES = 4


class PriorClassifier(nn.Module):
    def __init__(self, prior):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, CLASSES))
        self.log_prior = prior.log()  # BUG: left-behind

    def forward(self, x):
        return self.net(x) + self.log_prior


def make_loader(n, shuffle):
    x = torch.randn(n, 16)
    y = x[:, :CLASSES].argmax(1)
    return DataLoader(TensorDataset(x, y), batch_size=32, shuffle=shuffle, pin_memory=True)


def train(model, optimizer, loader, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            torch.accelerator.empty_cache()  # BUG: empty-cache-per-step
        print(f"epoch {epoch}: loss {loss.item():.3f}")


def evaluate(model, loader):
    model.eval()
    val_loss, correct = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        logits = model(x)
        val_loss += nn.functional.cross_entropy(logits, y)  # BUG: graph-kept
        correct += (logits.argmax(1) == y).sum()
    model.train()
    return val_loss.item() / len(loader), correct.item() / len(loader.dataset)


prior = torch.tensor([0.4, 0.3, 0.2, 0.1])
model = PriorClassifier(prior).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
train(model, optimizer, make_loader(512, shuffle=True), epochs=2)
print("validation loss and accuracy:", evaluate(model, make_loader(256, shuffle=False)))
torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, "checkpoint.pt")

resumed = PriorClassifier(prior).to(device)
checkpoint = torch.load("checkpoint.pt")  # BUG: load-without-map-location
resumed.load_state_dict(checkpoint["model"])
resumed_optimizer = torch.optim.AdamW(resumed.parameters(), lr=1e-3)
resumed_optimizer.load_state_dict(checkpoint["optimizer"])
train(resumed, resumed_optimizer, make_loader(512, shuffle=True), epochs=1)
print("after resuming:", evaluate(resumed, make_loader(256, shuffle=False)))
