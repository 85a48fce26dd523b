"""Makes the copy stream wait for the compute stream before each copy: a reused block is written only after the
model's earlier work has read it."""
import torch


@torch.no_grad()
def predict_all(model, batches):
    device = next(model.parameters()).device
    compute = torch.accelerator.current_stream(device)
    copy_stream = torch.Stream(device)

    def upload(batch):
        copy_stream.wait_stream(compute)
        with copy_stream:
            return batch.pin_memory().to(device, non_blocking=True)

    outputs = []
    next_x = upload(batches[0])
    for i in range(len(batches)):
        compute.wait_stream(copy_stream)
        x = next_x
        if i + 1 < len(batches):
            next_x = upload(batches[i + 1])
        outputs.append(model(x))
    return torch.cat(outputs)
