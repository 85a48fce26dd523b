"""Evaluating a trained detector-like model: accuracy, mean confidence and a histogram of scores."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
torch.manual_seed(0)
data = TensorDataset(torch.randn(200, 10), torch.randint(0, 2, (200,)))
loader = DataLoader(data, batch_size=25, pin_memory=True)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 1)).to(device).eval()

hits, confident, seen = 0, 0.0, 0
histogram = torch.zeros(10)
with torch.no_grad():
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        scores = model(x).squeeze(1).sigmoid()
        torch.accelerator.synchronize()  # BUG: sync-per-step
        sure = scores[scores > 0.9]  # BUG: data-dependent-shape
        confident += sure.sum()
        hits += int(((scores > 0.5).long() == y).sum())  # BUG: host-read-per-step
        seen += len(y)
        scores_cpu = scores.to("cpu", non_blocking=True)
        histogram += torch.histc(scores_cpu, bins=10, min=0, max=1)  # BUG: early-read
print(f"accuracy {hits / seen:.3f}, confident sum {float(confident):.1f}, histogram {histogram.tolist()}")
