"""Grader for shared_embeddings: a producer that shares device tensors stays alive until the consumer is done.

The producer (the learner's produce) runs on the leg's device in this process; grader.simulated.processes hands
it a queue and the consumer's Event and plays the consumer, which reads as soon as the producer waits for it. The
producer must put each batch's embeddings on the model's device (no copy to the host: the statement asks to
share the GPU memory), with the reference values, and must not end before the consumer has read them, which is
what CUDA's "Producer process has been terminated before all shared CUDA tensors released" reports."""

import random

import torch
from torch import nn

from grader.engine.expect import expect_close, expect_device, fail, measure, running
from grader.simulated.processes import TERMINATED, Deadlock, Handoff

FIX = ("A device tensor sent through a torch.multiprocessing queue stays the producer's GPU memory, lent to the "
       "consumer: the producer must stay alive until the consumer has read it. End produce with "
       "consumer_done.wait().")


def test_the_consumer_reads_every_embedding_while_the_producer_lives(submission, device):
    features, width = random.randint(4, 12), random.randint(3, 8)
    model = nn.Sequential(nn.Linear(features, 16), nn.Tanh(), nn.Linear(16, width))
    batches = [torch.randn(random.randint(3, 9), features) for _ in range(random.randint(3, 6))]
    with torch.no_grad():
        want = [model(b) for b in batches]
    read = []
    handoff = Handoff(len(batches), read.extend)
    model = model.to(device)
    with measure(device) as m:
        with running("produce(model, batches, queue, consumer_done)", submission):
            try:
                submission.produce(model, [b.clone() for b in batches], handoff.queue, handoff.done)
            except Deadlock as exc:
                fail(f"produce waits for consumer_done before the consumer can finish: {exc}. Put every batch's "
                     "embeddings in the queue first, then wait.")
    handoff.producer_exits()
    if len(handoff.items) != len(batches):
        fail(f"produce put {len(handoff.items)} items in the queue for {len(batches)} batches: one per batch.")
    for i, (item, ref) in enumerate(zip(handoff.items, want)):
        if not isinstance(item, torch.Tensor):
            fail(f"item {i} of the queue is a {type(item).__name__}; produce promises each batch's embeddings, a "
                 "tensor.")
        expect_device(item, device, f"the embeddings of batch {i} in the queue",
                      "put them in the queue as they are, on the model's GPU: the statement asks to share GPU memory "
                      "with the consumer, not to copy it to the host.")
    if m.d2h:
        fail(f"produce copied {len(m.d2h)} tensors from {device} to the host: the statement asks to share the "
             "embeddings' GPU memory with the consumer, with no copy to the host.")
    if not handoff.consumed_while_alive:
        fail(f"produce returned, and its process ended, before the consumer had read the embeddings: on CUDA "
             f"\"{TERMINATED}\", and the consumer reads freed memory. {FIX} (A synchronize or a sleep does not "
             "do it: the one waits for the GPU, not the consumer; the other guesses how long the consumer takes.)")
    for i, (item, ref) in enumerate(zip(read, want)):
        expect_close(item.detach().cpu(), ref, f"the embeddings of batch {i}")
