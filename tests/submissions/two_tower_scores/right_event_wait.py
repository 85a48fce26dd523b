"""The side stream records an event after the image encoder; the current stream waits for that event."""
import torch
import torch.nn.functional as F


def score_pairs(image_encoder, text_encoder, images, texts):
    device = images.device
    current = torch.accelerator.current_stream(device)
    side = torch.Stream(device)
    side.wait_stream(current)
    with side:
        image_emb = image_encoder(images)
        done = torch.Event()
        done.record(side)
    text_emb = text_encoder(texts)
    current.wait_event(done)
    return F.cosine_similarity(image_emb, text_emb, dim=1)
