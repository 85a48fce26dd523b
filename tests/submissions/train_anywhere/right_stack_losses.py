import torch
import torch.nn.functional as F


def train(model, loader, epochs, device):
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    history = []
    for _ in range(epochs):
        model.train()
        losses = []
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        history.append(torch.stack(losses).mean().item())
    return history
