// The character-level GPT's training step timed on random token batches already on the device:
// the body of benchmarks/gpt_cpu and benchmarks/gpt_gpu, which differ only in their defaults. The
// model is examples/char_gpt/gpt.h's, the step examples/char_gpt/train_step.h's (forward,
// backward, clipping to 1.0, AdamW with nanoGPT's groups at lr 1e-3 and betas 0.9/0.99), on 8
// batches cycled, so the figure compares frameworks and nothing else; benchmarks/gpt_pytorch.py
// is the same work in PyTorch, with the same flags.
//
// Prints the configuration and the CPU kernels' instruction set (cpu_isa=...), then
// tokens_per_s=<number> (batch x block x steps over the timed steps' seconds) as its last line.
// Each step reads its loss (item()), which waits for a GPU's work, so the timed span holds it all.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "colony.h"
#include "examples/char_gpt/gpt.h"
#include "examples/char_gpt/train_step.h"
#include "examples/lenet_cifar10/amp_mode.h"

namespace gpt_bench {

struct Defaults {
  char_gpt::GPTConfig model;  // layers, heads, width, block, vocabulary
  int64_t batch = 12;
  int threads = 2, steps = 60, warmup = 10;
  std::string amp = "off";
  std::string device = "cpu";
};

inline int main(int argc, char** argv, const char* program, Defaults d) {
  using namespace colony;
  char_gpt::GPTConfig& model_config = d.model;
  CLI::App app{"Time the character-level GPT's training step on random token batches in memory"};
  app.add_option("--layers", model_config.n_layer, "transformer blocks")->check(CLI::PositiveNumber);
  app.add_option("--heads", model_config.n_head, "attention heads (divides --embd)")->check(CLI::PositiveNumber);
  app.add_option("--embd", model_config.n_embd, "width of the residual stream")->check(CLI::PositiveNumber);
  app.add_option("--block", model_config.block_size, "context length in tokens")->check(CLI::PositiveNumber);
  app.add_option("--vocab", model_config.vocab_size, "vocabulary size")->check(CLI::PositiveNumber);
  app.add_option("--batch", d.batch, "blocks per step")->check(CLI::PositiveNumber);
  app.add_option("--threads", d.threads, "CPU threads for compute")->check(CLI::PositiveNumber);
  app.add_option("--steps", d.steps, "timed steps")->check(CLI::PositiveNumber);
  app.add_option("--warmup", d.warmup, "steps before the timing starts")->check(CLI::NonNegativeNumber);
  app.add_option("--amp", d.amp, "off or bf16 (bfloat16 autocast)")->check(CLI::IsMember({"off", "bf16"}));
  app.add_option("--device", d.device, "cpu, cuda or cuda:N");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints the usage or the error
    return rc == 0 ? 0 : 2;      // bad arguments exit with 2, as the other benchmarks do
  }

  try {
    set_num_threads(d.threads);
    const Device dev(d.device);
    if (dev.is_cuda() && !cuda::is_available())
      throw std::runtime_error("--device " + d.device + ": no CUDA device (" + cuda::unavailable_reason() + ")");
    const lenet::AmpMode amp = lenet::AmpMode::parse(d.amp);
    std::printf("colony %s, %lld layers, %lld heads, width %lld, block %lld, batch %lld, vocab %lld, threads %d, "
                "device %s\n",
                program, static_cast<long long>(model_config.n_layer), static_cast<long long>(model_config.n_head),
                static_cast<long long>(model_config.n_embd), static_cast<long long>(model_config.block_size),
                static_cast<long long>(d.batch), static_cast<long long>(model_config.vocab_size), d.threads,
                dev.str().c_str());
    std::printf("cpu_isa=%s\namp=%s\n", get_cpu_capability(), amp.name().c_str());
    manual_seed(0);
    auto model = std::make_shared<char_gpt::GPT>(model_config);
    model->to(dev);
    // No process group: DDP simply runs the model, as in a one-process char_gpt run.
    dist::DistributedDataParallel ddp(model);
    optim::AdamW opt(char_gpt::adamw_groups(model->parameters(), 0.1), optim::AdamWOptions(1e-3).betas({0.9, 0.99}));
    optim::GradScaler scaler(optim::GradScalerOptions().enabled(false));  // bf16 needs no loss scaling
    char_gpt::TrainStep step(*model, ddp, opt, scaler, nullptr, {1, 1.0, amp, dev});

    // 8 batches of random tokens, each [batch, block + 1]: x its first block tokens, y its last.
    std::vector<data::TokenBatch> batches;
    for (int i = 0; i < 8; ++i) {
      Tensor tokens = randint(0, model_config.vocab_size, {d.batch, model_config.block_size + 1}, TensorOptions(kInt64));
      batches.push_back({tokens.narrow(1, 0, model_config.block_size).contiguous().to(dev),
                         tokens.narrow(1, 1, model_config.block_size).contiguous().to(dev)});
    }
    double loss = 0;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    for (int i = 0; i < d.warmup + d.steps; ++i) {
      if (i == d.warmup) start = std::chrono::steady_clock::now();
      loss = step([&](int) { return batches[static_cast<size_t>(i) % batches.size()]; });
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("loss=%.4f\ntokens_per_s=%.1f\n", loss,
                static_cast<double>(d.batch * model_config.block_size * d.steps) / seconds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
  return 0;
}

}  // namespace gpt_bench
