#!/usr/bin/env python3
"""Loads a char_gpt checkpoint into the same model in PyTorch (benchmarks/gpt_pytorch.py's GPT,
nanoGPT's module for module) with load_state_dict, strictly, and decodes greedily from it: the
text must be the one char_gpt sampled with --top_k 1 (the likeliest character at every step), which
holds only if PyTorch computes the same logits from Colony's weights.

  ./bazelw run -c opt //examples/char_gpt -- --max_iters 500 --checkpoint /tmp/ck.safetensors \\
      --top_k 1 --prompt 'ROMEO:' --sample_tokens 200 | sed -n '/^---- sample ----$/,$p' | tail -n +2 > /tmp/colony.txt
  /tmp/torch2/bin/python examples/char_gpt/load_in_pytorch.py /tmp/ck.safetensors --prompt 'ROMEO:' \\
      --tokens 200 --expect /tmp/colony.txt

The model's configuration and the vocabulary come from the file's metadata. Exits 1 when the text
differs from --expect's (printing where), 0 when it matches or no --expect was given.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks"))
import safetensors_torch  # noqa: E402
from gpt_pytorch import GPT  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("checkpoint", help="the weights char_gpt --checkpoint wrote")
    p.add_argument("--prompt", default="\n")
    p.add_argument("--tokens", type=int, default=200, help="characters to decode")
    p.add_argument("--expect", help="a file with char_gpt's sample (prompt included) to compare with")
    a = p.parse_args()

    state, meta = safetensors_torch.load(a.checkpoint)
    if meta.get("bias", "true") != "true":
        sys.exit(f"{a.checkpoint}: a model without biases; gpt_pytorch.py's GPT has them")
    model = GPT(int(meta["n_layer"]), int(meta["n_head"]), int(meta["n_embd"]), int(meta["block_size"]),
                vocab=int(meta["vocab_size"]))
    model.load_state_dict(state)  # strict: every name must be the model's, and no name missing
    model.eval()
    print(f"{a.checkpoint}: step {meta['step']}, {len(state)} tensors loaded by load_state_dict (strict)")

    vocab = meta["vocabulary"]
    ids = {c: i for i, c in enumerate(vocab)}
    idx = torch.tensor([[ids[c] for c in a.prompt]])
    with torch.no_grad():
        for _ in range(a.tokens):
            logits, _ = model(idx[:, -model.block_size:])
            idx = torch.cat([idx, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    text = "".join(vocab[i] for i in idx[0].tolist())
    print("---- greedy sample (PyTorch) ----")
    print(text)
    if a.expect:
        with open(a.expect, encoding="utf-8") as f:
            expected = f.read()
        expected = expected[:-1] if expected.endswith("\n") else expected  # the newline char_gpt prints after it
        if expected != text:
            at = next((i for i, (x, y) in enumerate(zip(text, expected)) if x != y), min(len(text), len(expected)))
            print(f"DIFFERS from {a.expect} at character {at}: {text[at:at + 20]!r} against {expected[at:at + 20]!r}")
            return 1
        print(f"equals {a.expect}: the same {len(text)} characters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
