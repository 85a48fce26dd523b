# expect: the device that saved the checkpoint
# on one gpu: passes (with one GPU the device that saved the checkpoint is the one that serves)
"""Capstone of "Beyond one device": a production inference service.

Predictor(path, device, batch_size) serves a text classifier that was trained elsewhere, and its predict(texts)
answers a list of requests at once:

    - the checkpoint at `path` is {"model": the classifier's state_dict, "vocab": its words (a list of str,
      "<pad>" first and "<unk>" second), "labels": the class names (a list of str), "dim": the embedding size},
      saved on the GPU that trained it: often a GPU this machine does not have, or another GPU of it. Loading it
      must put nothing on that device.
    - the model, TextClassifier(len(vocab), dim, len(labels)) with the saved weights, is kept as self.model and
      serves on `device` (any device: "cpu", "cuda:1", "mps"...), in eval mode
    - predict(texts) tokenises the texts (lower case, split on white space; a word not in the vocabulary is
      UNKNOWN, and each batch is padded with PAD to its longest text), runs the model on `batch_size` texts at a
      time, and returns one (label, probability) pair per text, in order: the name of the most probable class
      (a str) and its probability (a Python float)
    - serving records no autograd graph, and Python waits for the device a few times per batch, never once per
      text

It answers correctly on a laptop's CPU. On a GPU server it has four bugs of the chapters of this course: the
checkpoint lands on the GPU that saved it, the tokenised batch stays on the CPU, every forward pass records a
graph that nothing will ever use, and each answer is read from the device on its own. Fix them.

Check your fix with:  devcourse check inference_service
"""

import torch
from torch import nn

PAD, UNKNOWN = 0, 1


class TextClassifier(nn.Module):
    """The mean of a text's word embeddings (padding left out), then a linear layer; dropout while training."""

    def __init__(self, vocab_size: int, dim: int, classes: int):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=PAD)
        self.dropout = nn.Dropout(0.2)
        self.head = nn.Linear(dim, classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        mask = (ids != PAD).unsqueeze(-1)
        mean = (self.embed(ids) * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)
        return self.head(self.dropout(mean))


class Predictor:
    def __init__(self, path, device, batch_size: int = 64):
        checkpoint = torch.load(path, weights_only=True)
        self.device = torch.device(device)
        self.batch_size = batch_size
        self.labels = checkpoint["labels"]
        self.index = {word: i for i, word in enumerate(checkpoint["vocab"])}
        self.model = TextClassifier(len(checkpoint["vocab"]), checkpoint["dim"], len(self.labels))
        self.model.load_state_dict(checkpoint["model"])
        self.model.to(self.device).eval()

    def tokenise(self, texts: list[str]) -> torch.Tensor:
        rows = [[self.index.get(word, UNKNOWN) for word in text.lower().split()] for text in texts]
        longest = max(len(row) for row in rows)
        return torch.tensor([row + [PAD] * (longest - len(row)) for row in rows], device=self.device)

    @torch.inference_mode()
    def predict(self, texts: list[str]) -> list[tuple[str, float]]:
        answers = []
        for start in range(0, len(texts), self.batch_size):
            ids = self.tokenise(texts[start:start + self.batch_size])
            best, classes = self.model(ids).softmax(dim=-1).max(dim=-1)
            answers += [(self.labels[c], p) for p, c in zip(best.tolist(), classes.tolist())]
        return answers
