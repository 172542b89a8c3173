// Character-level GPT training on the CPU with the batches in memory: Colony's side of
// benchmarks/gpt_pytorch.py (the same model, examples/char_gpt/gpt.h, and the same step,
// examples/char_gpt/train_step.h: forward, backward, clipping to 1.0, AdamW with nanoGPT's groups
// at lr 1e-3 and betas 0.9/0.99), on 8 random token batches cycled, so that the two figures
// compare the frameworks and nothing else. benchmarks/gpt_rounds.sh alternates them.
//
//   bazel run -c opt --config=cpu //benchmarks:gpt_cpu -- --layers 4 --heads 4 --embd 128
//       --block 64 --batch 12 --threads 2 --steps 60 [--warmup 10] [--amp bf16] [--vocab 65]
//
// Prints the configuration and the CPU kernels' instruction set (cpu_isa=...), then
// tokens_per_s=<number> (batch x block x steps over the timed steps' seconds) as its last line.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <vector>

#include "colony.h"
#include "examples/char_gpt/gpt.h"
#include "examples/char_gpt/train_step.h"
#include "examples/lenet_cifar10/amp_mode.h"

int main(int argc, char** argv) {
  using namespace colony;
  char_gpt::GPTConfig model_config;  // nanoGPT's CPU configuration of shakespeare_char by default
  int64_t batch = 12;
  int threads = 2, steps = 60, warmup = 10;
  std::string amp_flag = "off";
  CLI::App app{"Time the character-level GPT's training step on random token batches in memory"};
  app.add_option("--layers", model_config.n_layer, "transformer blocks")->check(CLI::PositiveNumber);
  app.add_option("--heads", model_config.n_head, "attention heads (divides --embd)")->check(CLI::PositiveNumber);
  app.add_option("--embd", model_config.n_embd, "width of the residual stream")->check(CLI::PositiveNumber);
  app.add_option("--block", model_config.block_size, "context length in tokens")->check(CLI::PositiveNumber);
  app.add_option("--vocab", model_config.vocab_size, "vocabulary size (65: tiny Shakespeare's characters)")
      ->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "blocks per step")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "CPU threads for compute")->check(CLI::PositiveNumber);
  app.add_option("--steps", steps, "timed steps")->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "steps before the timing starts")->check(CLI::NonNegativeNumber);
  app.add_option("--amp", amp_flag, "off or bf16 (bfloat16 autocast)")->check(CLI::IsMember({"off", "bf16"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints the usage or the error
    return rc == 0 ? 0 : 2;      // bad arguments exit with 2, as the other benchmarks do
  }

  try {
    set_num_threads(threads);
    const lenet::AmpMode amp = lenet::AmpMode::parse(amp_flag);
    std::printf("colony, %lld layers, %lld heads, width %lld, block %lld, batch %lld, vocab %lld, threads %d\n",
                static_cast<long long>(model_config.n_layer), static_cast<long long>(model_config.n_head),
                static_cast<long long>(model_config.n_embd), static_cast<long long>(model_config.block_size),
                static_cast<long long>(batch), static_cast<long long>(model_config.vocab_size), threads);
    std::printf("cpu_isa=%s\namp=%s\n", get_cpu_capability(), amp.name().c_str());
    manual_seed(0);
    auto model = std::make_shared<char_gpt::GPT>(model_config);
    // No process group: DDP simply runs the model, as in a one-process char_gpt run.
    dist::DistributedDataParallel ddp(model);
    optim::AdamW opt(char_gpt::adamw_groups(model->parameters(), 0.1), optim::AdamWOptions(1e-3).betas({0.9, 0.99}));
    optim::GradScaler scaler(optim::GradScalerOptions().enabled(false));  // bf16 needs no loss scaling
    char_gpt::TrainStep step(*model, ddp, opt, scaler, nullptr, {1, 1.0, amp, kCPU});

    // 8 batches of random tokens, each [batch, block + 1]: x its first block tokens, y its last.
    std::vector<data::TokenBatch> batches;
    for (int i = 0; i < 8; ++i) {
      Tensor tokens = randint(0, model_config.vocab_size, {batch, model_config.block_size + 1}, TensorOptions(kInt64));
      batches.push_back({tokens.narrow(1, 0, model_config.block_size).contiguous(),
                         tokens.narrow(1, 1, model_config.block_size).contiguous()});
    }
    double loss = 0;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    for (int i = 0; i < warmup + steps; ++i) {
      if (i == warmup) start = std::chrono::steady_clock::now();
      loss = step([&](int) { return batches[static_cast<size_t>(i) % batches.size()]; });
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("loss=%.4f\ntokens_per_s=%.1f\n", loss,
                static_cast<double>(batch * model_config.block_size * steps) / seconds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpt_cpu: %s\n", e.what());
    return 1;
  }
  return 0;
}
