# expect: the model's parameters are on cpu
import torch
import torch.nn.functional as F


def train(model, loader, epochs, device):
    model.cpu()            # "safe everywhere"
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    history = []
    for epoch in range(epochs):
        model.train()
        total, batches = 0.0, 0
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        history.append(total / batches)
    return history
