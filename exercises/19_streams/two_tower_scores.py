"""Two encoders on two streams.

score_pairs(image_encoder, text_encoder, images, texts) scores B image-text pairs: the cosine similarity of each
image's embedding with its text's embedding.

    image_encoder, text_encoder  modules on the device of the inputs, each giving (B, E) embeddings
    images   float tensor (B, Di);  texts  float tensor (B, Dt)
    returns  float tensor (B,) on the inputs' device

To keep the accelerator busy, the image encoder runs on a second stream while the text encoder runs on the
current one; the two meet in the cosine. Python must not wait for the device: the function only queues work.

It has a device bug: on a GPU the scores are wrong on some runs and right on others, never on the CPU.
Fix it so the scores are always right, with the two encoders still on two streams.

Check your fix with:  devcourse check two_tower_scores
"""

import torch
import torch.nn.functional as F


def score_pairs(image_encoder, text_encoder, images, texts):
    device = images.device
    current = torch.accelerator.current_stream(device)
    side = torch.Stream(device)
    side.wait_stream(current)            # the side stream starts once the inputs are ready
    with side:
        image_emb = image_encoder(images)
    text_emb = text_encoder(texts)
    return F.cosine_similarity(image_emb, text_emb, dim=1)
