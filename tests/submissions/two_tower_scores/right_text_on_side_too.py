"""Runs the text encoder on a second side stream; the current stream waits for both."""
import torch
import torch.nn.functional as F


def score_pairs(image_encoder, text_encoder, images, texts):
    device = images.device
    current = torch.accelerator.current_stream(device)
    a, b = torch.Stream(device), torch.Stream(device)
    for s in (a, b):
        s.wait_stream(current)
    with a:
        image_emb = image_encoder(images)
    with b:
        text_emb = text_encoder(texts)
    current.wait_stream(a)
    current.wait_stream(b)
    return F.cosine_similarity(image_emb, text_emb, dim=1)
