"""record_stream right after the wait, in a while loop."""
import torch


@torch.no_grad()
def predict_all(model, batches):
    device = next(model.parameters()).device
    compute = torch.accelerator.current_stream(device)
    side = torch.Stream(device)
    todo = list(batches)
    with side:
        ahead = todo.pop(0).pin_memory().to(device, non_blocking=True)
    outputs = []
    while ahead is not None:
        compute.wait_stream(side)
        x, ahead = ahead, None
        x.record_stream(compute)
        if todo:
            with side:
                ahead = todo.pop(0).pin_memory().to(device, non_blocking=True)
        outputs.append(model(x))
    return torch.cat(outputs)
