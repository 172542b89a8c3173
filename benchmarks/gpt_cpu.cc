// Character-level GPT training on the CPU with the batches in memory: Colony's side of
// benchmarks/gpt_pytorch.py, timed by benchmarks/gpt_bench.h; gpt_rounds.sh alternates them.
// Defaults: nanoGPT's CPU configuration of shakespeare_char.
//
//   bazel run -c opt --config=cpu //benchmarks:gpt_cpu -- --layers 4 --heads 4 --embd 128 --block 64
//       --batch 12 --threads 2 --steps 60 [--warmup 10] [--amp bf16] [--vocab 65]
//
// Last line: tokens_per_s=<number>.
#include "benchmarks/gpt_bench.h"

int main(int argc, char** argv) { return gpt_bench::main(argc, argv, "gpt_cpu", gpt_bench::Defaults()); }
