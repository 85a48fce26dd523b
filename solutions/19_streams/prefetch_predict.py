"""A prefetched batch freed while the model still reads it (solution).

Each batch is allocated on the copy stream and read on the compute stream. When the loop drops it (x = next_x),
the caching allocator returns its block to the copy stream's pool at once: it knows only the stream a block
was allocated on. The next upload, on the copy stream, gets that block and can overwrite it while the model's
queued work on the compute stream has not read it yet. x.record_stream(compute) tells the allocator that the
compute stream uses x: the block is reused only once the compute stream's work queued by then has ended.

Check your fix with:  devcourse check prefetch_predict
"""

import torch


@torch.no_grad()
def predict_all(model, batches):
    device = next(model.parameters()).device
    compute = torch.accelerator.current_stream(device)
    copy_stream = torch.Stream(device)

    def upload(batch):
        with copy_stream:
            return batch.pin_memory().to(device, non_blocking=True)

    outputs = []
    next_x = upload(batches[0])
    for i in range(len(batches)):
        compute.wait_stream(copy_stream)         # the batch has arrived
        x = next_x
        x.record_stream(compute)                 # and the compute stream uses it until its work is done
        if i + 1 < len(batches):
            next_x = upload(batches[i + 1])      # copied while the model runs on x
        outputs.append(model(x))
    return torch.cat(outputs)
