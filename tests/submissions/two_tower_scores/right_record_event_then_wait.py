"""stream.record_event() and event.wait(stream), and record_stream for the embeddings."""
import torch
import torch.nn.functional as F


def score_pairs(image_encoder, text_encoder, images, texts):
    device = images.device
    main = torch.accelerator.current_stream(device)
    side = torch.Stream(device)
    side.wait_stream(main)
    with side:
        image_emb = image_encoder(images)
    image_ready = side.record_event()
    text_emb = text_encoder(texts)
    image_ready.wait(main)
    image_emb.record_stream(main)
    return F.cosine_similarity(image_emb, text_emb, dim=1)
