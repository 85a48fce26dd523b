"""An image-like classifier trained with a DataLoader, on whichever accelerator there is."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
torch.manual_seed(0)
images = torch.randn(256, 1, 8, 8)
labels = torch.randint(0, 4, (256,))
loader = DataLoader(TensorDataset(images, labels), batch_size=32, shuffle=True, pin_memory=True)

model = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
class_weights = torch.tensor([1.0, 2.0, 1.0, 0.5], device=device)
history = []

for epoch in range(2):
    correct = torch.zeros((), device=device, dtype=torch.long)
    for x, y in loader:
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, y, weight=class_weights)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append(loss.detach())
        correct += (logits.argmax(1) == y).sum()
    print(f"epoch {epoch}: accuracy {correct.item() / len(images):.3f}")
