// GPT training on one GPU: the GPT-2-small shape (12 layers, 12 heads, width 768, block 1024,
// GPT-2's vocabulary padded to 50,304 as nanoGPT and llm.c pad it) under bfloat16 autocast, timed
// by benchmarks/gpt_bench.h on random token batches already on the device. Its PyTorch twin is
// `benchmarks/gpt_pytorch.py --device cuda --config gpt2 --amp bf16 [--compile]`; tools/gpu_check.sh runs
// both when a GPU is lent.
//
//   bazel run -c opt //benchmarks:gpt_gpu -- [--batch 8] [--steps 20] [--warmup 5] [--amp off]
//
// Last line: tokens_per_s=<number>.
#include "benchmarks/gpt_bench.h"

int main(int argc, char** argv) {
  gpt_bench::Defaults d;
  d.model.n_layer = 12;
  d.model.n_head = 12;
  d.model.n_embd = 768;
  d.model.block_size = 1024;
  d.model.vocab_size = 50304;
  d.batch = 8;
  d.steps = 20;
  d.warmup = 5;
  d.amp = "bf16";
  d.device = "cuda";
  return gpt_bench::main(argc, argv, "gpt_gpu", d);
}
