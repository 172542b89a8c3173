// What activation checkpointing (autograd/checkpoint.h) saves and costs on the character-level
// GPT (examples/char_gpt/gpt.h) at benchmarks/gpt_cpu's shapes: one training step's forward and
// backward, with every block's forward either plain or wrapped in autograd::checkpoint (the model's
// own forward with `x = checkpoint(block, x)` in its loop, as HuggingFace's gradient checkpointing).
//
//   bazel run -c opt --config=cpu //benchmarks:checkpoint_bench -- --checkpoint off|on [--layers 4 --embd 128
//       --block 64 --batch 12 --threads 2 --steps 20 --warmup 3]
//
// One mode per process, so the CPU allocator's peak (runtime/allocator.h: bytes held by live
// tensors, not what the allocator caches) is that mode's alone; alternate processes for a
// comparison. Prints activation_peak_bytes= (the peak over the steps less the bytes in use
// before the first, i.e. parameters, inputs) and ms_per_step= as its last two lines.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "colony.h"
#include "examples/char_gpt/gpt.h"

int main(int argc, char** argv) {
  using namespace colony;
  char_gpt::GPTConfig config;
  config.dropout = 0.1;  // so the recomputation must replay the masks
  int64_t batch = 12;
  int threads = 2, steps = 20, warmup = 3;
  std::string mode = "off";
  CLI::App app{"Activation checkpointing on the character-level GPT: peak activation bytes and step time"};
  app.add_option("--checkpoint", mode, "off: plain blocks; on: each block's forward checkpointed")
      ->check(CLI::IsMember({"off", "on"}));
  app.add_option("--layers", config.n_layer, "transformer blocks")->check(CLI::PositiveNumber);
  app.add_option("--heads", config.n_head, "attention heads (divides --embd)")->check(CLI::PositiveNumber);
  app.add_option("--embd", config.n_embd, "width of the residual stream")->check(CLI::PositiveNumber);
  app.add_option("--block", config.block_size, "context length in tokens")->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "blocks per step")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "CPU threads for compute")->check(CLI::PositiveNumber);
  app.add_option("--steps", steps, "timed steps")->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "steps before the timing starts")->check(CLI::NonNegativeNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    set_num_threads(threads);
    manual_seed(0);
    auto model = std::make_shared<char_gpt::GPT>(config);
    model->train();
    const bool ckpt = mode == "on";
    Tensor tokens = randint(0, config.vocab_size, {batch, config.block_size + 1}, TensorOptions(kInt64));
    const Tensor x_ids = tokens.narrow(1, 0, config.block_size).contiguous();
    const Tensor y_ids = tokens.narrow(1, 1, config.block_size).contiguous();
    std::printf("colony checkpoint_bench, checkpoint %s, %lld layers, %lld heads, width %lld, block %lld, batch %lld, "
                "dropout %.1f, threads %d, cpu_isa=%s\n",
                mode.c_str(), static_cast<long long>(config.n_layer), static_cast<long long>(config.n_head),
                static_cast<long long>(config.n_embd), static_cast<long long>(config.block_size),
                static_cast<long long>(batch), config.dropout, threads, get_cpu_capability());

    // GPT::forward, with the blocks' forwards optionally checkpointed.
    auto forward = [&](const Tensor& idx) {
      Tensor pos = arange(0, static_cast<double>(idx.size(1)), 1, TensorOptions(kInt64));
      Tensor x = model->drop->forward(model->wte->forward(idx) + model->wpe->forward(pos));
      for (size_t i = 0; i < model->h->size(); ++i) {
        auto block = [&, i](const Tensor& t) { return model->h->at<char_gpt::Block>(i).forward(t); };
        x = ckpt ? autograd::checkpoint(block, x) : block(x);
      }
      return model->lm_head->forward(model->ln_f->forward(x));
    };
    const int64_t base = cpu_allocator()->stats().bytes_in_use;
    double loss = 0;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    for (int i = 0; i < warmup + steps; ++i) {
      if (i == warmup) start = std::chrono::steady_clock::now();
      model->zero_grad();  // set to none: each step's gradients are new
      Tensor logits = forward(x_ids);
      Tensor l = F::cross_entropy(logits.reshape({-1, config.vocab_size}), y_ids.reshape({-1}));
      l.backward();
      loss = l.item<double>();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("loss=%.4f\nactivation_peak_bytes=%lld\nms_per_step=%.2f\n", loss,
                static_cast<long long>(cpu_allocator()->stats().peak_bytes_in_use - base), 1e3 * seconds / steps);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "checkpoint_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
