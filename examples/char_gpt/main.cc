// A character-level GPT trained on a text file (nanoGPT's shakespeare_char in C++): it prints the
// train and validation loss at each evaluation and ends by sampling text from the trained model.
// Under colonyrun or torchrun it trains data-parallel (each rank draws its own blocks).
//
//   python3 tools/fetch_text.py && ./bazelw run -c opt //examples/char_gpt

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

#include "colony.h"
#include "examples/char_gpt/checkpoint.h"
#include "examples/char_gpt/gpt.h"
#include "examples/char_gpt/train_step.h"
#include "examples/common/callers_folder.h"
#include "examples/lenet_cifar10/amp_mode.h"

using namespace colony;
using Clock = std::chrono::steady_clock;

namespace {

struct Flags {
  std::string data = "data/shakespeare/input.txt";
  char_gpt::GPTConfig model;
  int64_t batch_size = 12;
  int64_t max_iters = 2000;
  int64_t eval_interval = 250;
  int64_t eval_iters = 20;
  double lr = 1e-3, min_lr = 1e-4;
  int64_t warmup_iters = 100;
  int64_t lr_decay_iters = -1;  // -1: max_iters
  double weight_decay = 0.1, beta1 = 0.9, beta2 = 0.99, grad_clip = 1.0;
  int accum_steps = 1;
  std::string amp = "off";
  std::string device = "auto";
  int threads = 0;
  uint64_t seed = 1337;
  std::string checkpoint, resume, metrics;
  bool benchmark = false;
  int64_t warmup_steps = 10;
  int zero = 0;
  int64_t sample_tokens = 500;
  double temperature = 0.8;
  int64_t top_k = 200;
  std::string prompt = "\n";
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// v with `digits` decimals, or in scientific notation ("%.*e") when scientific.
std::string num(double v, int digits = 4, bool scientific = false) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), scientific ? "%.*e" : "%.*f", digits, v);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  CLI::App app{"Train a character-level GPT on a text file with Colony, then sample from it"};
  app.add_option("--data", f.data, "the text to train on (python3 tools/fetch_text.py writes the default)");
  app.add_option("--n_layer", f.model.n_layer, "transformer blocks")->check(CLI::PositiveNumber);
  app.add_option("--n_head", f.model.n_head, "attention heads (divides --n_embd)")->check(CLI::PositiveNumber);
  app.add_option("--n_embd", f.model.n_embd, "width of the residual stream")->check(CLI::PositiveNumber);
  app.add_option("--block_size", f.model.block_size, "context length in characters")->check(CLI::PositiveNumber);
  app.add_option("--dropout", f.model.dropout, "dropout probability")->check(CLI::Range(0.0, 0.99));
  app.add_option("--batch_size", f.batch_size, "blocks per micro-batch and rank")->check(CLI::PositiveNumber);
  app.add_option("--max_iters", f.max_iters, "optimizer steps in total")->check(CLI::NonNegativeNumber);
  app.add_option("--eval_interval", f.eval_interval, "steps between evaluations")->check(CLI::PositiveNumber);
  app.add_option("--eval_iters", f.eval_iters, "batches each evaluation averages, per split")->check(CLI::PositiveNumber);
  app.add_option("--lr", f.lr, "AdamW's peak learning rate")->check(CLI::NonNegativeNumber);
  app.add_option("--min_lr", f.min_lr, "the rate the cosine decay ends at")->check(CLI::NonNegativeNumber);
  app.add_option("--warmup_iters", f.warmup_iters, "steps of linear warm-up")->check(CLI::NonNegativeNumber);
  app.add_option("--lr_decay_iters", f.lr_decay_iters, "step at which the cosine decay reaches --min_lr (-1: --max_iters)")
      ->check(CLI::Range(int64_t{-1}, std::numeric_limits<int64_t>::max()));
  app.add_option("--weight_decay", f.weight_decay, "AdamW weight decay, on 2-D weights only")->check(CLI::NonNegativeNumber);
  app.add_option("--beta2", f.beta2, "AdamW's second-moment decay")->check(CLI::Range(0.0, 1.0));
  app.add_option("--grad_clip", f.grad_clip, "clip the gradients' global norm to this (0: off)")->check(CLI::NonNegativeNumber);
  app.add_option("--accum_steps", f.accum_steps, "micro-batches per optimizer step")->check(CLI::PositiveNumber);
  app.add_option("--amp", f.amp, "mixed precision: off, bf16 or fp16 (float16 with GradScaler)");
  app.add_option("--device", f.device, "cpu, cuda (this rank's GPU), cuda:N or auto (cuda when available)");
  app.add_option("--threads", f.threads, "CPU threads for compute (0: COLONY_NUM_THREADS or all cores)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", f.seed, "seed for the weights, the batches and the sampling");
  app.add_option("--checkpoint", f.checkpoint,
                 "at each evaluation and at the end, write the weights here (safetensors, PyTorch's names) and the "
                 "training state beside them (<path>.train)");
  app.add_option("--resume", f.resume, "continue from this checkpoint (the --checkpoint path of a run)");
  app.add_option("--metrics", f.metrics, "append one JSON line per evaluation to this file");
  app.add_flag("--benchmark", f.benchmark, "time training steps only; last line: tokens_per_s=<number>");
  app.add_option("--warmup_steps", f.warmup_steps, "benchmark: steps excluded from the timing")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--zero", f.zero, "ZeRO stage: 0 plain DDP, 1 optimizer state sharded, 2 gradients too")
      ->check(CLI::Range(0, 2));
  app.add_option("--sample_tokens", f.sample_tokens, "characters to sample at the end (0: none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--temperature", f.temperature, "sampling temperature")->check(CLI::PositiveNumber);
  app.add_option("--top_k", f.top_k, "sample among the k likeliest characters (0: all)")->check(CLI::NonNegativeNumber);
  app.add_option("--prompt", f.prompt, "text the sample starts from");
  CLI11_PARSE(app, argc, argv);
  examples::run_in_callers_folder();

  try {
    if (f.threads > 0) set_num_threads(f.threads);
    manual_seed(f.seed);
    const lenet::AmpMode amp = lenet::AmpMode::parse(f.amp);
    dist::init_process_group();
    const Device dev = dist::device_for_rank(f.device);
    const bool main_process = dist::is_main_process();
    const int64_t rank = dist::get_rank(), world = dist::get_world_size();
    if (f.lr_decay_iters < 0) f.lr_decay_iters = f.max_iters;

    // The text: its characters are the vocabulary; the first 90 % trains, the rest validates.
    const std::string text = data::read_text(f.data);
    const data::CharTokenizer tokenizer = data::CharTokenizer::from_text(text);
    const data::TokenSplit split = data::split_tokens(tokenizer.encode_tensor(text), 0.9);
    f.model.vocab_size = tokenizer.vocab_size();
    // Each rank draws its own blocks of the job's stream (data/token_blocks.h). Evaluation reads
    // the same eval_iters batches of each split every time, so its figures compare across steps.
    auto blocks = [&](const Tensor& tokens, uint64_t seed) {
      return data::TokenBlocks(tokens, f.model.block_size,
                               data::TokenBlocksOptions().seed(seed).rank(rank).world_size(world));
    };
    data::TokenBlocks train_blocks = blocks(split.train, f.seed);
    data::TokenBlocks train_eval = blocks(split.train, f.seed + 1), val_eval = blocks(split.val, f.seed + 2);
    if (main_process)
      log::info("{}: {} characters, vocabulary of {}; {} train / {} val tokens; trains on {} ({} rank(s))", f.data,
                text.size(), tokenizer.vocab_size(), split.train.numel(), split.val.numel(), dev.str(), world);

    auto model = std::make_shared<char_gpt::GPT>(f.model);
    model->to(dev);
    auto ddp = std::make_shared<dist::DistributedDataParallel>(model, dist::DistributedDataParallelOptions().zero_stage(f.zero));
    if (main_process) {
      int64_t n = 0;
      for (const Tensor& p : model->parameters()) n += p.numel();
      log::info("GPT: {} layers, {} heads, width {}, context {}: {} parameters", f.model.n_layer, f.model.n_head,
                f.model.n_embd, f.model.block_size, n);
    }

    // nanoGPT's AdamW: weight decay on the 2-D weights only (train_step.h).
    const auto defaults = optim::AdamWOptions(f.lr).betas({f.beta1, f.beta2});
    std::vector<optim::ParamGroup> groups = char_gpt::adamw_groups(ddp->parameters(), f.weight_decay);
    std::unique_ptr<optim::Optimizer> optimizer;
    dist::ZeroRedundancyOptimizer* zero = nullptr;
    if (f.zero > 0) {
      // DDP's zero_stage(1|2) reduce-scatters each bucket, so each rank holds the averaged
      // gradient of its shard only: the optimizer steps those shards (ddp(ddp)). step() leaves the
      // all-gathers of the updated shards in flight until DDP's next forward (overlap_all_gather);
      // evaluation and sampling read the model directly, so they wait for them first.
      auto zo = dist::ZeroRedundancyOptimizerOptions().ddp(ddp).overlap_all_gather(true);
      auto z = std::make_unique<dist::ZeroRedundancyOptimizer>(
          groups, defaults, dist::optimizer_factory<optim::AdamW, optim::AdamWOptions>(), zo);
      zero = z.get();
      optimizer = std::move(z);
    } else {
      optimizer = std::make_unique<optim::AdamW>(groups, defaults);
    }
    optim::Optimizer& opt = *optimizer;
    // Linear warm-up from lr/warmup to lr, then a cosine decay to min_lr at lr_decay_iters.
    const int64_t warmup = std::max<int64_t>(f.warmup_iters, 1);
    optim::SequentialLR schedule(
        opt,
        {std::make_shared<optim::LinearLR>(opt, 1.0 / static_cast<double>(warmup), 1.0, warmup),
         std::make_shared<optim::CosineAnnealingLR>(opt, std::max<int64_t>(f.lr_decay_iters - warmup, 1), f.min_lr)},
        {warmup});
    optim::GradScaler scaler(optim::GradScalerOptions().enabled(amp.uses_scaler()));
    // Each rank unscales what it holds; an overflow on any rank skips the step on every rank.
    if (zero) scaler.set_found_inf_reducer(zero->found_inf_reducer());
    char_gpt::TrainStep train_step(*model, *ddp, opt, scaler, zero,
                                   {f.accum_steps, f.grad_clip, amp, dev});

    int64_t step = 0;
    if (!f.resume.empty()) {
      optim::TrainingState s = char_gpt::load_checkpoint(f.resume, *model, opt, &scaler);
      if (s.extra["vocabulary"] != tokenizer.vocabulary())
        throw std::invalid_argument(f.resume + " was trained on a text with another vocabulary than " + f.data +
                                    "'s: resume with the same --data");
      step = s.step;
      schedule.set_last_epoch(step);
      if (main_process) log::info("resumed from {} at step {}", f.resume, step);
      // --max_iters counts from step 0, so a run resumed at or past it trains nothing (and only
      // samples: a way to sample from a checkpoint); say so rather than exit without a word.
      if (main_process && step >= f.max_iters)
        log::info("step {} is already at --max_iters {}: nothing to train (raise --max_iters to go on)", step,
                  f.max_iters);
    }
    auto save = [&]() {
      if (f.checkpoint.empty()) return;
      if (zero) zero->consolidate_state_dict(0);
      if (main_process) {
        optim::TrainingState s;
        s.step = step;
        s.extra["vocabulary"] = tokenizer.vocabulary();
        // The configuration, as nanoGPT's checkpoints keep model_args (load_in_pytorch.py reads it).
        s.extra["n_layer"] = std::to_string(f.model.n_layer);
        s.extra["n_head"] = std::to_string(f.model.n_head);
        s.extra["n_embd"] = std::to_string(f.model.n_embd);
        s.extra["block_size"] = std::to_string(f.model.block_size);
        s.extra["vocab_size"] = std::to_string(f.model.vocab_size);
        s.extra["bias"] = f.model.bias ? "true" : "false";
        char_gpt::save_checkpoint(f.checkpoint, *model, opt, s, &scaler);
      }
    };
    // Batch k of a stream depends on (seed, rank, world size, k) only: training step s takes
    // batches s * accum_steps + micro, so a resumed run draws what the uninterrupted one would have.
    auto batch_at = [&](data::TokenBlocks& stream, int64_t k) {
      stream.set_batches_drawn(k);
      return stream.next_batch(f.batch_size);
    };

    // The mean loss over eval_iters batches of each split, averaged over the ranks.
    auto estimate_loss = [&]() {
      if (zero) zero->wait_for_parameters();
      NoGradGuard no_grad;
      AutocastGuard autocast(dev.type, amp.dtype, amp.enabled);
      model->eval();
      double out[2];
      data::TokenBlocks* splits[2] = {&train_eval, &val_eval};
      for (int i = 0; i < 2; ++i) {
        double sum = 0;
        for (int64_t k = 0; k < f.eval_iters; ++k) {
          data::TokenBatch b = batch_at(*splits[i], k);
          sum += char_gpt::lm_loss(model->forward(b.x.to(dev)), b.y.to(dev)).item<double>();
        }
        out[i] = dist::all_reduce(sum / static_cast<double>(f.eval_iters));
      }
      model->train();
      return std::pair<double, double>(out[0], out[1]);
    };

    // Prints "step N: train_loss=X val_loss=Y lr=Z" (key=value, so scripts read it as they read
    // tokens_per_s=) and appends the figures to --metrics.
    auto evaluate = [&]() {
      auto [train_loss, val_loss] = estimate_loss();
      if (!main_process) return;
      log::info("step {}: train_loss={} val_loss={} lr={}", step, num(train_loss), num(val_loss),
                num(schedule.get_last_lr()[0], 2, true));
      if (!f.metrics.empty()) {
        std::ofstream m(f.metrics, std::ios::app);
        m << nlohmann::json{{"step", step}, {"train_loss", train_loss}, {"val_loss", val_loss}}.dump() << "\n";
      }
    };

    double bench_tokens = 0, bench_seconds = 0;
    Clock::time_point timed_start = Clock::now();
    const int64_t start_step = step;
    while (step < f.max_iters) {
      if (!f.benchmark && step % f.eval_interval == 0 && step > start_step) {
        evaluate();
        save();
      }
      if (f.benchmark && step - start_step == f.warmup_steps) timed_start = Clock::now();
      const double step_loss =
          train_step([&](int micro) { return batch_at(train_blocks, step * f.accum_steps + micro); });
      schedule.step();
      ++step;
      if (f.benchmark && step - start_step > f.warmup_steps)
        bench_tokens += static_cast<double>(f.batch_size * f.accum_steps * f.model.block_size);
      if (!f.benchmark && main_process && step % 10 == 0) log::info("step {}: loss {}", step, num(step_loss));
    }
    if (f.benchmark) bench_seconds = seconds_since(timed_start);
    if (!f.benchmark && step > start_step) {
      evaluate();
      save();
    }
    if (f.benchmark) {
      bench_tokens = dist::all_reduce(bench_tokens, dist::ReduceOp::kSum);
      bench_seconds = dist::all_reduce(bench_seconds, dist::ReduceOp::kMax);
      if (main_process) {
        if (bench_tokens == 0) {
          log::error("--benchmark: no steps after the {} warm-up steps; raise --max_iters", f.warmup_steps);
          return 1;
        }
        std::printf("amp=%s\ntokens_per_s=%.1f\n", amp.name().c_str(), bench_tokens / bench_seconds);
      }
    } else if (main_process && f.sample_tokens > 0) {
      Generator gen(f.seed);
      if (zero) zero->wait_for_parameters();
      model->eval();
      AutocastGuard autocast(dev.type, amp.dtype, amp.enabled);
      Tensor start = tokenizer.encode_tensor(f.prompt).view({1, -1}).to(dev);
      Tensor out = model->generate(start, f.sample_tokens, f.temperature, f.top_k, &gen);
      std::printf("---- sample ----\n%s\n", tokenizer.decode(out.view({-1}).to(kCPU)).c_str());
    }
    dist::destroy_process_group();
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    dist::destroy_process_group();
    return 1;
  }
  return 0;
}
