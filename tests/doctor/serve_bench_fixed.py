"""Serve a small decoder: micro-batched requests, each timed, then a forward benchmark. The token embedding
table stays on the CPU on purpose (in real life it is too large for the device); the decoder runs on the device."""
import time

import torch
from torch import nn

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
torch.manual_seed(0)
VOCAB, D, T = 1000, 32, 16


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(D, 4, batch_first=True)
        self.head = nn.Linear(D, VOCAB)

    def forward(self, h):
        n = h.shape[1]
        causal = torch.triu(torch.ones(n, n, dtype=torch.bool, device=h.device), diagonal=1)
        h, _ = self.attn(h, h, h, attn_mask=causal, need_weights=False)
        return self.head(h)


table = nn.Embedding(VOCAB, D)  # kept on the CPU
decoder = Decoder().to(device).eval()


def embed(ids):
    return table(ids).to(device)


def requests(n):
    for i in range(n):
        yield {"ids": torch.randint(0, VOCAB, (8, T)), "request": i}


@torch.no_grad()
def serve(batch, micro=4):
    out = []
    for ids in batch["ids"].split(micro):  # the ids stay on the CPU, with the table
        logits = decoder(embed(ids))
        out.append(logits[:, -1].argmax(-1))
    out = torch.cat(out)
    if (out < 0).any():  # once per request
        print("bad token in request", batch["request"])
    return out


latencies = []
for batch in requests(10):
    start = time.perf_counter()
    tokens = serve(batch)
    torch.accelerator.synchronize()
    latencies.append(time.perf_counter() - start)
print(f"median latency {sorted(latencies)[len(latencies) // 2] * 1e3:.1f} ms")

x = embed(torch.randint(0, VOCAB, (8, T)))
times = []
with torch.no_grad():
    for _ in range(20):
        torch.accelerator.synchronize()
        start = time.perf_counter()
        decoder(x)
        torch.accelerator.synchronize()
        times.append(time.perf_counter() - start)
print(f"forward: {min(times) * 1e3:.2f} ms")
