# expect: before the consumer had read the embeddings
import time

import torch


def produce(model, batches, queue, consumer_done):
    device = next(model.parameters()).device
    with torch.no_grad():
        for batch in batches:
            queue.put(model(batch.to(device)).clone())
    time.sleep(0.5)
