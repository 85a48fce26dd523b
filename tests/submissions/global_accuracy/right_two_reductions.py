import torch
import torch.distributed as dist


def global_accuracy(logits: torch.Tensor, labels: torch.Tensor) -> float:
    correct = (logits.argmax(1) == labels).sum().double()
    total = torch.full((), float(len(labels)), dtype=torch.float64, device=logits.device)
    dist.all_reduce(correct)
    dist.all_reduce(total)
    return (correct / total).item()
