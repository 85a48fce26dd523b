"""A small causal language model on padded sequences, with a padding mask."""
import torch
from torch import nn

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
torch.manual_seed(0)
VOCAB, T, PAD = 50, 12, 0


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 32, padding_idx=PAD)
        self.attn = nn.MultiheadAttention(32, 4, batch_first=True)
        self.head = nn.Linear(32, VOCAB)

    def forward(self, tokens):
        n = tokens.shape[1]
        causal = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1).to(tokens.device)  # BUG: helper-copied-per-step
        h = self.embed(tokens)
        h, _ = self.attn(h, h, h, attn_mask=causal, need_weights=False)
        return self.head(h)


def batches(n):
    for _ in range(n):
        lengths = torch.randint(4, T + 1, (8,))
        tokens = torch.randint(1, VOCAB, (8, T))
        tokens[torch.arange(T) >= lengths[:, None]] = PAD
        yield tokens


model = TinyLM().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
for step, tokens in enumerate(batches(20)):
    tokens = tokens.to(device)
    logits = model(tokens[:, :-1])
    targets = tokens[:, 1:]
    real = targets != PAD
    if not real.any():  # BUG: host-read-per-step
        continue
    loss = nn.functional.cross_entropy(logits[real], targets[real])  # BUG: data-dependent-shape
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
