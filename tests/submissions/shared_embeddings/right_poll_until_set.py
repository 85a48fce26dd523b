import time

import torch


def produce(model, batches, queue, consumer_done):
    device = next(model.parameters()).device
    kept = []
    with torch.inference_mode():
        for batch in batches:
            embeddings = model(batch.to(device, non_blocking=True))
            kept.append(embeddings)
            queue.put(embeddings)
    while not consumer_done.is_set():
        time.sleep(0.01)
