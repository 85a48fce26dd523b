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
        self.register_buffer("causal", torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1), persistent=False)

    def forward(self, tokens):
        n = tokens.shape[1]
        h = self.embed(tokens)
        h, _ = self.attn(h, h, h, attn_mask=self.causal[:n, :n], need_weights=False)
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
    # padding is ignored by the loss itself: no boolean indexing, no test on the host
    loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1), ignore_index=PAD)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
