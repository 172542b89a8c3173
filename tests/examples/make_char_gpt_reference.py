#!/usr/bin/env python3
"""Writes tests/examples/char_gpt_reference.safetensors, PyTorch's figures for
tests/examples/char_gpt_reference_test.cc (llm.c's test_gpt2 for Colony's character-level GPT).

  /tmp/torch2/bin/python tests/examples/make_char_gpt_reference.py

The model is benchmarks/gpt_pytorch.py's GPT (nanoGPT's, and examples/char_gpt/gpt.h's): 2 layers,
4 heads, width 64, block 32, vocabulary 65, in float32. The file holds, by tensor name:
  param.<name>   the initial weights (state_dict names, the tied head once as transformer.wte.weight),
                 drawn at random, every one perturbed so that none is a constant a bug could hide
                 behind (LayerNorm weights 1 + noise, biases noise), and rounded to bfloat16 and
                 stored as such: bfloat16 widens to float32 exactly, so both sides start from the same
                 float32 weights, and the file is half the size (about 650 KB in all);
  x, y           one batch [4, 32] of token ids and its targets;
  logits         the forward pass's logits [4, 32, 65], float32;
  loss           its mean cross-entropy [1];
  grad.<name>    every parameter's gradient of that loss, float32;
  losses         the loss before each of 10 training steps on that batch [10]: AdamW with nanoGPT's
                 groups (decay 0.1 on 2-D weights), lr 1e-3, betas 0.9/0.99, clipped to norm 1.
Float32 throughout, as the test runs Colony: 1e-5 relative against float32 figures is what llm.c's
test checks. Generated, never edited by hand; rerun it after changing the model on both sides.
"""
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "benchmarks"))
import safetensors_torch  # noqa: E402
from gpt_pytorch import GPT  # noqa: E402

N_LAYER, N_HEAD, N_EMBD, BLOCK, VOCAB, BATCH, STEPS = 2, 4, 64, 32, 65, 4, 10


def main():
    torch.manual_seed(20261205)
    model = GPT(N_LAYER, N_HEAD, N_EMBD, BLOCK, vocab=VOCAB)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:  # LayerNorm weights and biases, Linear biases
                p.add_(0.1 * torch.randn_like(p))
            p.copy_(p.to(torch.bfloat16).float())
    initial = {"param." + n: p.detach().to(torch.bfloat16) for n, p in model.named_parameters()}
    tokens = torch.randint(0, VOCAB, (BATCH, BLOCK + 1))
    x, y = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()

    logits, loss = model(x, y)
    loss.backward()
    reference = dict(initial)
    reference.update({"x": x, "y": y, "logits": logits.detach(), "loss": loss.detach().reshape(1)})
    reference.update({"grad." + n: p.grad for n, p in model.named_parameters()})

    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.99))
    model.zero_grad(set_to_none=True)
    losses = []
    for _ in range(STEPS):
        _, loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
    reference["losses"] = torch.tensor(losses, dtype=torch.float32)
    out = os.path.join(here, "char_gpt_reference.safetensors")
    safetensors_torch.save(out, reference, {"generator": "tests/examples/make_char_gpt_reference.py",
                                            "torch": torch.__version__})
    print(f"wrote {out} ({os.path.getsize(out)} bytes): loss {reference['loss'].item():.6f}, "
          f"losses {', '.join(f'{v:.6f}' for v in losses)}")


if __name__ == "__main__":
    main()
