"""Embeddings that vanish on their way to the other process.

An indexing service computes embeddings in one process and writes them to the index in another. The producer
process, started with the "spawn" method (a forked child cannot use CUDA), runs the model on its GPU and sends
each batch's embeddings through a torch.multiprocessing queue, as they are, on the GPU: torch.multiprocessing
shares their GPU memory with the consumer process instead of copying them. The consumer reads every embedding,
then sets the `consumer_done` event.

    produce(model, batches, queue, consumer_done)  in the producer process, the model on its GPU: puts
                                                   model(batch) for each batch of `batches` (CPU tensors) in
                                                   `queue`, in order, on the model's GPU (no copy to the host)

The service starts it as  ctx = torch.multiprocessing.get_context("spawn");  queue, done = ctx.Queue(), ctx.Event();
ctx.Process(target=produce, args=(model, batches, queue, done)).start(),  then reads len(batches) items from the
queue in the main process and calls done.set().

The consumer sometimes writes garbage to the index, and the producer's log ends with "[W CudaIPCTypes.cpp]
Producer process has been terminated before all shared CUDA tensors released. See Note [Sharing CUDA
tensors]". Fix it.

Check your fix with:  devcourse check shared_embeddings
"""

import torch


def produce(model, batches, queue, consumer_done) -> None:
    device = next(model.parameters()).device
    with torch.no_grad():
        for batch in batches:
            queue.put(model(batch.to(device)))
    # The embeddings are this process's GPU memory, lent to the consumer: stay alive until it has read them.
    consumer_done.wait()

