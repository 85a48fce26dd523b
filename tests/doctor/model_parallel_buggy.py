"""One training step of a model split across two accelerators (pipeline style), device-agnostic."""
import torch
from torch import nn

accelerator = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else None
if accelerator is None or torch.accelerator.device_count() < 2:
    raise SystemExit("this script needs two accelerators")
first, second = torch.device(accelerator.type, 0), torch.device(accelerator.type, 1)
torch.manual_seed(0)


class TwoStage(nn.Module):
    def __init__(self):
        super().__init__()
        self.stage1 = nn.Sequential(nn.Linear(32, 64), nn.ReLU()).to(first)
        self.stage2 = nn.Linear(64, 4).to(second)

    def forward(self, x):
        h = self.stage1(x.to(first))
        h = h.to(accelerator.type)  # BUG: lost-index
        return self.stage2(h)


model = TwoStage()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    x = torch.randn(16, 32)
    y = torch.randint(0, 4, (16,), device=second)
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
