# expect: the index is not the model's
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
import torch


def model_device(model):
    kind = next(model.parameters()).device.type
    if kind == "cpu":
        return torch.device("cpu")
    return torch.device(kind, torch.get_device_module(kind).current_device())


def predict(model, batch):
    return model(batch.to(model_device(model))).argmax(dim=1)
