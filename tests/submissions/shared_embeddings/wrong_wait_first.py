# expect: waits for consumer_done before
import torch


def produce(model, batches, queue, consumer_done):
    device = next(model.parameters()).device
    with torch.no_grad():
        for i, batch in enumerate(batches):
            if i == len(batches) - 1:
                consumer_done.wait()
            queue.put(model(batch.to(device)))
