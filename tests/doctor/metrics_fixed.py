"""Evaluating a trained detector-like model: accuracy, mean confidence and a histogram of scores."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
torch.manual_seed(0)
data = TensorDataset(torch.randn(200, 10), torch.randint(0, 2, (200,)))
loader = DataLoader(data, batch_size=25, pin_memory=True)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 1)).to(device).eval()

hits = torch.zeros((), dtype=torch.long, device=device)
confident = torch.zeros((), device=device)
histogram = torch.zeros(10, device=device)
seen = 0
with torch.no_grad():
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        scores = model(x).squeeze(1).sigmoid()
        confident += torch.where(scores > 0.9, scores, 0).sum()
        hits += ((scores > 0.5).long() == y).sum()
        seen += len(y)
        histogram += torch.histc(scores, bins=10, min=0, max=1)
print(f"accuracy {hits.item() / seen:.3f}, confident sum {confident.item():.1f}, histogram {histogram.tolist()}")
