#!/usr/bin/env python3
"""PyTorch reference for the character-level GPT benchmark (examples/char_gpt --benchmark).

The same model as examples/char_gpt/gpt.h (nanoGPT's: token + position embeddings, pre-norm blocks
of causal self-attention through F.scaled_dot_product_attention and a GELU MLP, final LayerNorm,
head tied to the token embedding), the same AdamW (decay on 2-D weights only, betas 0.9/0.99),
gradient clipping at 1.0 and random token batches already in memory, so both sides time the
training step only (forward, backward, clip, step).

  /tmp/torch2/bin/python benchmarks/gpt_pytorch.py [--layers 4 --heads 4 --embd 128 --block 64 --batch 12]
      [--config cpu|384|gpt2] [--vocab 65] [--threads 2] [--steps 60] [--warmup 10] [--amp bf16]
      [--compile] [--device cpu|cuda]

The flags are benchmarks/gpt_cpu's (and gpt_gpu's); --config sets the model and batch flags to one
of nanoGPT's two shakespeare_char configurations or to the GPT-2-small shape benchmarks/gpt_gpu
times (vocabulary 50,304 unless --vocab is given); flags given as well override it. Prints the configuration, then
tokens_per_s=<number> as its last line (as gpt_cpu and char_gpt --benchmark).
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# The two configurations of nanoGPT's shakespeare_char: its README's CPU run and the GPU config.
CONFIGS = {
    "cpu": dict(n_layer=4, n_head=4, n_embd=128, block_size=64, batch_size=12),
    "384": dict(n_layer=6, n_head=6, n_embd=384, block_size=256, batch_size=64),
    # GPT-2 small at batch 8, benchmarks/gpt_gpu's default (its vocabulary: GPT2_VOCAB).
    "gpt2": dict(n_layer=12, n_head=12, n_embd=768, block_size=1024, batch_size=8),
}
GPT2_VOCAB = 50304  # GPT-2's 50,257 tokens padded to a multiple of 64, as nanoGPT and llm.c pad them
VOCAB = 65  # tiny Shakespeare's characters
# gpt_cpu's flags and the configuration keys they set.
FLAGS = {"--layers": "n_layer", "--heads": "n_head", "--embd": "n_embd", "--block": "block_size", "--batch": "batch_size"}


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, dropout=0.0):
        super().__init__()
        self.n_head = n_head
        self.dropout = dropout
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        return self.resid_dropout(self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C)))


class MLP(nn.Module):
    def __init__(self, n_embd, dropout=0.0):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, dropout=0.0):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, dropout)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """nanoGPT's model.py GPT with bias=True, module for module: the same state_dict names
    (transformer.wte.weight, transformer.h.0.ln_1.weight, ..., lm_head.weight), which are
    examples/char_gpt/gpt.h's too, so either side loads the other's weights."""

    def __init__(self, n_layer, n_head, n_embd, block_size, vocab=VOCAB, dropout=0.0):
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, n_embd),
            wpe=nn.Embedding(block_size, n_embd),
            drop=nn.Dropout(dropout),
            h=nn.ModuleList([Block(n_embd, n_head, dropout) for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(n_embd),
        ))
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied, as nanoGPT ties them
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * n_layer))
            elif p.dim() == 2:
                nn.init.normal_(p, 0.0, 0.02)
            else:
                nn.init.zeros_(p) if name.endswith("bias") else nn.init.ones_(p)

    def forward(self, idx, targets=None):
        """(logits [B, T, vocab], the mean cross-entropy against targets or None), as nanoGPT's."""
        T = idx.size(1)
        t = self.transformer
        x = t.drop(t.wte(idx) + t.wpe(torch.arange(T, device=idx.device)))
        for block in t.h:
            x = block(x)
        logits = self.lm_head(t.ln_f(x))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", choices=CONFIGS.keys(), help="one of nanoGPT's configurations (default cpu)")
    for flag, key in FLAGS.items():
        p.add_argument(flag, type=int, help=f"{key} (default: --config's)")
    p.add_argument("--vocab", type=int, help=f"vocabulary size (default {VOCAB}, {GPT2_VOCAB} with --config gpt2)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--amp", choices=["off", "bf16"], default="off")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (inductor)")
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    a = p.parse_args()
    c = dict(CONFIGS[a.config or "cpu"])
    if a.vocab is None:
        a.vocab = GPT2_VOCAB if a.config == "gpt2" else VOCAB
    for flag, key in FLAGS.items():
        if getattr(a, flag[2:]) is not None:
            c[key] = getattr(a, flag[2:])
    if min(c.values()) <= 0 or a.vocab <= 0 or a.threads <= 0 or a.steps <= 0 or a.warmup < 0:
        p.error("sizes, --threads and --steps must be positive, --warmup non-negative")
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    dev = torch.device(a.device)
    model = GPT(c["n_layer"], c["n_head"], c["n_embd"], c["block_size"], vocab=a.vocab).to(dev)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.99), fused=dev.type == "cuda")  # nanoGPT's choice on GPUs
    step_model = torch.compile(model) if a.compile else model
    B, T = c["batch_size"], c["block_size"]
    data = torch.randint(0, a.vocab, (8, B, T + 1)).to(dev)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    for i in range(a.warmup + a.steps):
        if i == a.warmup:
            sync()
            start = time.perf_counter()
        batch = data[i % len(data)]
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=a.amp == "bf16"):
            _, loss = step_model(batch[:, :-1], batch[:, 1:])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
    sync()
    seconds = time.perf_counter() - start
    print(f"torch {torch.__version__}, {c}, vocab {a.vocab}, threads {a.threads}, amp {a.amp}, "
          f"compile {a.compile}, device {dev}, loss {loss.item():.4f}")
    print(f"tokens_per_s={B * T * a.steps / seconds:.1f}")


if __name__ == "__main__":
    main()
