# expect: before the side stream had written them
"""Makes the side stream wait for the current one before the cosine: the wrong direction."""
import torch
import torch.nn.functional as F


def score_pairs(image_encoder, text_encoder, images, texts):
    device = images.device
    current = torch.accelerator.current_stream(device)
    side = torch.Stream(device)
    side.wait_stream(current)
    with side:
        image_emb = image_encoder(images)
    text_emb = text_encoder(texts)
    side.wait_stream(current)
    return F.cosine_similarity(image_emb, text_emb, dim=1)
