#!/usr/bin/env python3
"""nanoGPT's train.py for shakespeare_char on the CPU, reduced to what examples/char_gpt does, so
that a char_gpt run has a PyTorch twin on the same data split: the text's sorted characters as the
vocabulary, the first 90 % of it to train and the rest to validate (nanoGPT's prepare.py), random
blocks per batch (its get_batch), benchmarks/gpt_pytorch.py's GPT (nanoGPT's, with biases), AdamW
with decay on 2-D weights only, clipping to 1.0, and its get_lr (linear warm-up, cosine to min_lr).
The defaults are nanoGPT's README's CPU run:

  /tmp/torch2/bin/python benchmarks/gpt_train_pytorch.py [--data data/shakespeare/input.txt]
      [--max_iters 2000] [--threads 2] [--n_layer 4 --n_head 4 --n_embd 128 --block_size 64 ...]

Prints "step N: train loss X, val loss Y" at each evaluation (every --eval_interval steps and at the
end; each the mean of --eval_iters random batches per split), then val_loss=<final> and
seconds=<wall time of the whole run>.
"""
import argparse
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt_pytorch import GPT  # noqa: E402


def main():
    t0 = time.perf_counter()
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/shakespeare/input.txt")
    for name, default in [("n_layer", 4), ("n_head", 4), ("n_embd", 128), ("block_size", 64), ("batch_size", 12),
                          ("max_iters", 2000), ("eval_interval", 250), ("eval_iters", 20), ("warmup_iters", 100),
                          ("lr_decay_iters", -1), ("threads", 2), ("seed", 1337)]:
        p.add_argument("--" + name, type=int, default=default)
    for name, default in [("lr", 1e-3), ("min_lr", 1e-4), ("weight_decay", 0.1), ("beta2", 0.99), ("grad_clip", 1.0),
                          ("dropout", 0.0)]:
        p.add_argument("--" + name, type=float, default=default)
    a = p.parse_args()
    decay_iters = a.max_iters if a.lr_decay_iters < 0 else a.lr_decay_iters
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    with open(a.data, encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    ids = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([ids[c] for c in text], dtype=torch.int64)
    n = int(len(data) * 0.9)
    splits = {"train": data[:n], "val": data[n:]}
    print(f"{a.data}: {len(text)} characters, vocabulary of {len(chars)}; {n} train / {len(data) - n} val tokens; "
          f"torch {torch.__version__}, {a.threads} threads")

    def get_batch(split):
        d = splits[split]
        ix = torch.randint(len(d) - a.block_size, (a.batch_size,))
        x = torch.stack([d[i:i + a.block_size] for i in ix])
        y = torch.stack([d[i + 1:i + 1 + a.block_size] for i in ix])
        return x, y

    def get_lr(it):  # nanoGPT's
        if it < a.warmup_iters:
            return a.lr * (it + 1) / (a.warmup_iters + 1)
        if it > decay_iters:
            return a.min_lr
        ratio = (it - a.warmup_iters) / max(decay_iters - a.warmup_iters, 1)
        return a.min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (a.lr - a.min_lr)

    @torch.no_grad()
    def estimate_loss():
        model.eval()
        out = {}
        for split in ("train", "val"):
            out[split] = sum(model(*get_batch(split))[1].item() for _ in range(a.eval_iters)) / a.eval_iters
        model.train()
        return out

    model = GPT(a.n_layer, a.n_head, a.n_embd, a.block_size, vocab=len(chars), dropout=a.dropout)
    decay = [q for q in model.parameters() if q.dim() >= 2]
    no_decay = [q for q in model.parameters() if q.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=a.lr, betas=(0.9, a.beta2))
    losses = None
    for it in range(a.max_iters + 1):
        if it > 0 and (it % a.eval_interval == 0 or it == a.max_iters):
            losses = estimate_loss()
            print(f"step {it}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}", flush=True)
        if it == a.max_iters:
            break
        for group in opt.param_groups:
            group["lr"] = get_lr(it)
        _, loss = model(*get_batch("train"))
        loss.backward()
        if a.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), a.grad_clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
    if losses is not None:
        print(f"val_loss={losses['val']:.4f}")
    print(f"seconds={time.perf_counter() - t0:.1f}")


if __name__ == "__main__":
    main()
