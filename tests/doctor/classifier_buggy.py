"""An image-like classifier trained with a DataLoader, written for CUDA."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # BUG: cuda-only
torch.manual_seed(0)
images = torch.randn(256, 1, 8, 8)
labels = torch.randint(0, 4, (256,))
loader = DataLoader(TensorDataset(images, labels), batch_size=32, shuffle=True)

model = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
history = []

for epoch in range(2):
    correct = 0
    for x, y in loader:
        x = x.to(device, non_blocking=True)  # BUG: pageable-non-blocking
        y = y.to(device)
        class_weights = torch.tensor([1.0, 2.0, 1.0, 0.5]).to(device)  # BUG: helper-copied-per-step
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, y, weight=class_weights)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append(loss)  # BUG: memory-grows
        correct += (logits.argmax(1) == y).sum().item()  # BUG: host-read-per-step
    print(f"epoch {epoch}: accuracy {correct / len(images):.3f}")
