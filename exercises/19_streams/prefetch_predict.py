"""A prefetched batch freed while the model still reads it.

predict_all(model, batches) runs `model` over a list of CPU batches and returns all its outputs, concatenated,
on the model's device.

    model    an nn.Module on an accelerator
    batches  list of float CPU tensors (n, features), n may differ between batches
    returns  float tensor (total rows, outputs) on the model's device

To hide the copies, each batch is copied to the device on a copy stream, one batch ahead of the model, which
runs on the current stream: the current stream waits for the copy stream before it uses a batch. Python must
not wait for the device: the function only queues work.

It has a device bug: on a GPU some outputs are wrong on some runs, never on the CPU. Fix it so the outputs are
always right, with the copies still on the copy stream.

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
        if i + 1 < len(batches):
            next_x = upload(batches[i + 1])      # copied while the model runs on x
        outputs.append(model(x))
    return torch.cat(outputs)
