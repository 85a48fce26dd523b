import torch


def produce(model, batches, queue, consumer_done) -> None:
    device = next(model.parameters()).device
    with torch.no_grad():
        outputs = [model(b.to(device)) for b in batches]
    for out in outputs:
        queue.put(out)
    while not consumer_done.wait(timeout=1.0):
        pass
