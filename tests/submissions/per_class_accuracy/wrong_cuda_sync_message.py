# expect: waits for nothing on sim:0
# on cuda: passes (torch.cuda waits for CUDA; the simulator stands for MPS, XPU and the others, where it does not)
"""Guards a torch.cuda.synchronize() with torch.cuda.is_available(): on any other accelerator nothing waits, and
the message must say that torch.cuda covers CUDA only (issue 27), not only "synchronize the device"."""
import torch


def per_class_accuracy(logits, labels, num_classes):
    correct = (logits.argmax(dim=1) == labels).to(logits.dtype)
    hits = torch.zeros(num_classes, device=logits.device, dtype=logits.dtype).index_add_(0, labels, correct)
    seen = torch.zeros(num_classes, device=logits.device, dtype=logits.dtype).index_add_(
        0, labels, torch.ones_like(correct))
    on_host = (hits / seen.clamp(min=1)).to("cpu", non_blocking=True)
    if torch.cuda.is_available():
        torch.cuda.synchronize(logits.device)
    return on_host.tolist()
