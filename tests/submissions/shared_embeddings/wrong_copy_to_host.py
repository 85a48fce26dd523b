# expect: on the model's GPU
import torch


def produce(model, batches, queue, consumer_done):
    device = next(model.parameters()).device
    with torch.no_grad():
        for batch in batches:
            queue.put(model(batch.to(device)).cpu())
