// LeNet on CIFAR-10: the user's program of docs/ARCHITECTURE.md with flags, progress, metrics, checkpoints
// and a benchmark mode. Without CIFAR-10 on disk it trains on the synthetic CIFAR-10-shaped set.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>

#include "colony.h"
#include "examples/common/callers_folder.h"
#include "examples/lenet_cifar10/amp_mode.h"
#include "examples/lenet_cifar10/graphed_training.h"
#include "examples/lenet_cifar10/lenet.h"
#include "examples/lenet_cifar10/progress.h"

using namespace colony;
using Clock = std::chrono::steady_clock;

namespace {

struct Flags {
  std::string data_dir = "data/cifar-10-batches-bin";
  int epochs = 10;
  int batch_size = 32;
  double lr = 0.001;
  double momentum = 0.9;
  int workers = 4;
  std::string device = "auto";
  int threads = 0;
  uint64_t seed = 0;
  int64_t max_steps = -1;
  int64_t train_images = 0;
  std::string checkpoint, resume, metrics;
  bool benchmark = false;
  int warmup_steps = 20;
  int accum_steps = 1;
  double bucket_cap_mb = 25, first_bucket_cap_mb = 1;  // DistributedDataParallelOptions' defaults
  std::string amp = "off";
  bool cuda_graph = false;
  int zero = 0;  // ZeRO stage: 0 (plain DDP), 1 (optimizer state sharded), 2 (gradients too)
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Accuracy over the whole test set, without gradients. Each rank scores its own shard (every
// sample exactly once over the job) and the counts are summed.
struct Evaluation {
  double accuracy = 0;
  int64_t images = 0;  // over all ranks: the whole test set, each image once
};

Evaluation evaluate(nn::Module& model, data::DataLoader& loader, Device dev, const lenet::AmpMode& amp) {
  NoGradGuard no_grad;
  AutocastGuard autocast(dev.type, amp.dtype, amp.enabled);
  model.eval();
  int64_t correct = 0, total = 0;
  for (auto& batch : loader) {
    Tensor pred = model.forward(batch.data.to(dev)).argmax(1);
    correct += (pred == batch.target.to(dev)).sum().item<int64_t>();
    total += batch.size();
  }
  model.train();
  const double all_correct = dist::all_reduce(static_cast<double>(correct), dist::ReduceOp::kSum);
  const double all_total = dist::all_reduce(static_cast<double>(total), dist::ReduceOp::kSum);
  return {all_total > 0 ? all_correct / all_total : 0.0, static_cast<int64_t>(all_total)};
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  CLI::App app{"Train LeNet on CIFAR-10 (or its synthetic stand-in) with Colony"};
  app.add_option("--data_dir", f.data_dir, "CIFAR-10 binary folder (cifar-10-batches-bin)");
  app.add_option("--epochs", f.epochs, "epochs to train")->check(CLI::PositiveNumber);
  app.add_option("--batch_size", f.batch_size, "images per step")->check(CLI::PositiveNumber);
  app.add_option("--lr", f.lr, "SGD learning rate")->check(CLI::NonNegativeNumber);
  app.add_option("--momentum", f.momentum, "SGD momentum")->check(CLI::NonNegativeNumber);
  app.add_option("--workers", f.workers, "data loader threads (0: load in the training thread)")->check(CLI::NonNegativeNumber);
  app.add_option("--device", f.device,
                 "cpu, cuda (this rank's GPU: cuda:LOCAL_RANK), cuda:N or auto (cuda when available)");
  app.add_option("--threads", f.threads, "CPU threads for compute (0: COLONY_NUM_THREADS or all cores)")->check(CLI::NonNegativeNumber);
  app.add_option("--seed", f.seed, "seed for weights, data order and the synthetic set");
  app.add_option("--max_steps", f.max_steps, "stop after this many optimizer steps in total (-1: no limit)")
      ->check(CLI::Range(int64_t{-1}, std::numeric_limits<int64_t>::max()));
  app.add_option("--train_images", f.train_images, "train on the first N images of the training set (0: all)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--checkpoint", f.checkpoint, "write a training checkpoint here after each epoch and at the end");
  app.add_option("--resume", f.resume, "continue from this training checkpoint (default after a colonyrun restart: --checkpoint)");
  app.add_option("--metrics", f.metrics, "append one JSON line per epoch to this file");
  app.add_flag("--benchmark", f.benchmark, "time training steps only; last line: images_per_s=<number>");
  app.add_option("--warmup_steps", f.warmup_steps, "benchmark: steps excluded from the timing")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--accum_steps", f.accum_steps,
                 "micro-batches per optimizer step (gradient accumulation; only the last one communicates)")
      ->check(CLI::PositiveNumber);
  app.add_option("--bucket_cap_mb", f.bucket_cap_mb, "all-reduce bucket size cap in MiB (DDP's bucket_cap_mb)")
      ->check(CLI::PositiveNumber);
  app.add_option("--first_bucket_cap_mb", f.first_bucket_cap_mb,
                 "cap of the first bucket, whose all-reduce starts earliest in backward (LeNet's 242 KiB of "
                 "gradients fit in the default 1 MiB: set less to overlap communication with backward)")
      ->check(CLI::PositiveNumber);
  app.add_option("--amp", f.amp, "mixed precision: off, bf16 (bfloat16 autocast) or fp16 (float16 autocast + GradScaler)");
  app.add_flag("--cuda_graph", f.cuda_graph,
               "capture the training step once as a CUDA graph and replay it (on CUDA devices, one GPU per rank, "
               "--accum_steps 1; a smaller last batch runs eagerly)");
  app.add_option("--zero", f.zero,
                 "ZeRO stage: 0 plain DDP; 1 shards the optimizer's state over the ranks "
                 "(dist::ZeroRedundancyOptimizer; each bucket reduce-scattered, the parameters all-gathered: "
                 "an all-reduce's bytes; checkpoints keep the non-sharded format); 2 also the gradients")
      ->check(CLI::Range(0, 2));
  CLI11_PARSE(app, argc, argv);
  examples::run_in_callers_folder();

  try {
    if (f.threads > 0) set_num_threads(f.threads);
    manual_seed(f.seed);
    const lenet::AmpMode amp = lenet::AmpMode::parse(f.amp);
    dist::init_process_group();
    // "cuda" means this rank's own GPU (cuda:LOCAL_RANK), as "auto" does when there are GPUs.
    const Device dev = dist::device_for_rank(f.device);
    bool main_process = dist::is_main_process();
    if (auto group = dist::default_process_group())
      log::info("trains on {} (process group: {}, world size {})", dev.str(), group->backend_name(),
                dist::get_world_size());
    if (f.cuda_graph) {
      // What the captured step cannot do yet, refused before any work (ops/cuda_graph.h).
      std::string why;
      if (!dev.is_cuda()) why = "it needs a CUDA device, the run is on " + dev.str();
      else if (dist::get_world_size() > 1 &&
               dist::default_process_group()->backend_name().find("nccl") == std::string::npos)
        why = "DDP over Gloo (ranks sharing a GPU) cannot be captured: its all-reduces run on the host; give each rank "
              "its own GPU (NCCL)";
      else if (f.accum_steps != 1) why = "--accum_steps must be 1";
      else if (f.zero != 0) why = "a ZeRO step cannot be captured (ZeroRedundancyOptimizer has no step_unless); use --zero 0";
      if (!why.empty()) throw std::invalid_argument("--cuda_graph: " + why);
    }

    auto model = std::make_shared<lenet::LeNet>();
    model->to(dev);
    auto ddp = std::make_shared<dist::DistributedDataParallel>(
        model, dist::DistributedDataParallelOptions()
                   .bucket_cap_mb(f.bucket_cap_mb)
                   .first_bucket_cap_mb(f.first_bucket_cap_mb)
                   .zero_stage(f.zero));
    // --zero 1: each rank keeps the momentum of its 1/N of the elements, DDP's partition by
    // bucket (by parameter, fc1's weight alone would be 77 % of LeNet's state on one rank), and
    // receives only that shard's averaged gradient (a reduce-scatter). --zero 2: it also keeps only
    // that shard of the gradients.
    std::unique_ptr<optim::Optimizer> optimizer;
    dist::ZeroRedundancyOptimizer* zero = nullptr;
    const optim::SGDOptions sgd = optim::SGDOptions(f.lr).momentum(f.momentum);
    if (f.zero > 0) {
      auto zo = dist::ZeroRedundancyOptimizerOptions().ddp(ddp);
      auto z = std::make_unique<dist::ZeroRedundancyOptimizer>(
          ddp->parameters(), sgd, dist::optimizer_factory<optim::SGD, optim::SGDOptions>(), zo);
      zero = z.get();
      optimizer = std::move(z);
    } else {
      optimizer = std::make_unique<optim::SGD>(ddp->parameters(), sgd);
    }
    optim::Optimizer& opt = *optimizer;
    // Under DDP an overflow on one rank reaches every rank through the averaged gradients, so all
    // ranks skip the same steps and their scales stay equal.
    optim::GradScaler scaler(optim::GradScalerOptions().enabled(amp.uses_scaler()));
    // --zero 1 and 2: each rank sees only its shard of the averaged gradients; an overflow in any
    // skips everywhere.
    if (zero) scaler.set_found_inf_reducer(zero->found_inf_reducer());

    // CIFAR-10 when its folder exists, else the synthetic set (same shapes, 50,000 / 10,000 images).
    // A folder that exists but holds a missing, truncated or corrupt file is an error naming that
    // file: silently training on synthetic images instead would look like a successful run.
    std::shared_ptr<const data::Dataset> train, test;
    auto normalize = data::Normalize({0.5, 0.5, 0.5}, {0.5, 0.5, 0.5});
    std::error_code no_dir;
    if (std::filesystem::exists(f.data_dir, no_dir)) {
      train = std::make_shared<data::TransformedDataset>(data::CIFAR10(f.data_dir, data::Split::kTrain).transform(normalize));
      test = std::make_shared<data::TransformedDataset>(data::CIFAR10(f.data_dir, data::Split::kTest).transform(normalize));
      if (main_process) log::info("training on CIFAR-10 from {}", f.data_dir);
    } else {
      train = std::make_shared<data::TransformedDataset>(data::SyntheticCIFAR10(data::Split::kTrain, f.seed).transform(normalize));
      test = std::make_shared<data::TransformedDataset>(data::SyntheticCIFAR10(data::Split::kTest, f.seed).transform(normalize));
      if (main_process) {
        log::info("no CIFAR-10 at {}: training on the synthetic CIFAR-10-shaped set (50,000/10,000 images, seed {}); "
                  "get the real data with data::CIFAR10::download or from https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz",
                  f.data_dir, f.seed);
      }
    }
    // An epoch: the first --train_images images (all by default), in an order drawn from --seed.
    const int64_t epoch_size = f.train_images > 0 ? std::min(f.train_images, train->size()) : train->size();
    data::DistributedSampler sampler(epoch_size, data::DistributedSamplerOptions().shuffle(true).seed(f.seed));
    bool pin = dev.is_cuda();
    data::DataLoader loader(train, sampler, data::DataLoaderOptions(f.batch_size).workers(f.workers).pin_memory(pin));
    auto test_sampler = data::SubsetSampler::strided(test->size(), dist::get_rank(), dist::get_world_size());
    data::DataLoader test_loader(test, test_sampler, data::DataLoaderOptions(256).workers(f.workers).pin_memory(pin));

    // Samples each rank takes per optimizer step; the data stream's position is kept in samples of
    // the whole job, so a run resumed with another world size or batch size continues it exactly.
    const int64_t world = dist::get_world_size();
    const int64_t step_samples = static_cast<int64_t>(f.batch_size) * f.accum_steps;
    int64_t start_epoch = 0, step = 0, start_sample = 0;
    // A group that colonyrun --max_restarts started again picks up from its own checkpoint.
    if (f.resume.empty() && dist::restart_count() > 0 && !f.checkpoint.empty() &&
        access(f.checkpoint.c_str(), F_OK) == 0) {
      f.resume = f.checkpoint;
    }
    if (!f.resume.empty()) {
      optim::TrainingState s = optim::load_checkpoint(f.resume, *model, opt, &scaler);
      start_sample = optim::resume_position(s, f.resume, epoch_size, f.seed, world, step_samples);
      start_epoch = s.epoch;
      step = s.step;
      if (main_process)
        log::info("resumed from {} at epoch {}, step {}, sample {} of {} (written by {} rank(s) with batch size {})",
                  f.resume, s.epoch, s.step, start_sample, epoch_size, s.world_size, s.batch_size);
    }
    const int64_t start_step = step;
    // Where the data stream stands: epoch `at_epoch` (under way), `at_sample` samples into it.
    int64_t at_epoch = start_epoch, at_sample = start_sample;
    auto save = [&]() {
      // ZeRO: every rank sends its shard of the state to rank 0, which saves the whole.
      if (!f.checkpoint.empty() && zero) zero->consolidate_state_dict(0);
      if (!f.checkpoint.empty() && main_process) {
        optim::TrainingState s;
        s.epoch = at_epoch;
        s.step = step;
        s.epoch_samples = at_sample;
        s.data_seed = f.seed;
        s.world_size = world;
        s.batch_size = step_samples;
        optim::save_checkpoint(f.checkpoint, *model, opt, s, &scaler);
      }
    };

    // Optimizer steps per epoch; batches left over when --accum_steps does not divide the
    // epoch are skipped.
    int64_t steps_per_epoch = loader.size() / f.accum_steps;
    if (steps_per_epoch == 0) {
      throw std::invalid_argument("--accum_steps " + std::to_string(f.accum_steps) + " exceeds the " +
                                  std::to_string(loader.size()) + " batches of an epoch");
    }
    double bench_images = 0, bench_seconds = 0;
    bool stopped = false;
    lenet::GraphedTraining graph(*ddp, opt, scaler, dev, amp);  // used with --cuda_graph only
    for (int64_t epoch = start_epoch; epoch < f.epochs && !stopped; ++epoch) {
      if (f.max_steps >= 0 && step >= f.max_steps) {
        stopped = true;  // at the end of the last epoch: nothing of this one taken, nothing to score
        break;
      }
      sampler.set_epoch(epoch);
      // A resumed epoch continues where the whole job's stream stopped (the samples it took).
      if (epoch == start_epoch) sampler.set_start(start_sample);
      at_epoch = epoch;
      at_sample = sampler.start();
      Progress bar(main_process && !f.benchmark, "epoch " + std::to_string(epoch + 1) + "/" + std::to_string(f.epochs),
                   loader.size() / f.accum_steps);
      double loss_sum = 0;
      int64_t loss_count = 0, images = 0, index = 0;
      Clock::time_point epoch_start = Clock::now(), timed_start = epoch_start;
      // --max_steps and resuming count optimizer steps; one step takes accum_steps batches.
      int64_t micro = 0;
      for (auto& batch : loader) {
        if (f.cuda_graph && batch.size() == f.batch_size && !(f.max_steps >= 0 && step >= f.max_steps)) {
          ++index;
          if (f.benchmark && step - start_step == f.warmup_steps) timed_start = Clock::now();
          const double l = graph.run(batch).item<double>();
          ++step;
          at_sample += step_samples * world;
          loss_sum += l;
          ++loss_count;
          images += batch.size();
          if (f.benchmark && step - start_step > f.warmup_steps) bench_images += batch.size();
          bar.update(index, "loss " + std::to_string(l).substr(0, 6));
          continue;
        }
        ++index;
        if (f.max_steps >= 0 && step >= f.max_steps) {
          stopped = true;
          break;
        }
        if (f.benchmark && micro == 0 && step - start_step == f.warmup_steps) timed_start = Clock::now();
        if (micro == 0) opt.zero_grad();
        const bool last_micro = micro + 1 == f.accum_steps;
        Tensor loss;
        {
          // Every micro-batch but the last accumulates locally; the last one's backward averages
          // all of it over the ranks.
          std::optional<dist::DistributedDataParallel::NoSyncGuard> local;
          if (!last_micro) local.emplace(ddp->no_sync());
          {
            AutocastGuard autocast(dev.type, amp.dtype, amp.enabled);
            loss = F::cross_entropy(ddp->forward(batch.data.to(dev)), batch.target.to(dev));
          }
          scaler.scale(f.accum_steps > 1 ? loss / static_cast<double>(f.accum_steps) : loss).backward();
        }
        if (last_micro) {
          scaler.step(opt);
          scaler.update();
          ++step;
          at_sample += step_samples * world;
          micro = 0;
        } else {
          ++micro;
        }
        double l = loss.item<double>();
        loss_sum += l;
        ++loss_count;
        images += batch.size();
        if (f.benchmark && step - start_step > f.warmup_steps) bench_images += batch.size();
        bar.update(index / f.accum_steps, "loss " + std::to_string(l).substr(0, 6));
      }
      if (!stopped) {  // the whole epoch was taken: the stream stands at the start of the next
        at_epoch = epoch + 1;
        at_sample = 0;
      }
      double epoch_s = seconds_since(epoch_start);
      if (f.benchmark) bench_seconds += seconds_since(timed_start);
      bar.finish(loss_count);
      if (f.benchmark) continue;
      const Evaluation eval = evaluate(*model, test_loader, dev, amp);
      const double acc = eval.accuracy;
      // Over all ranks: the mean loss, and images per second of the whole job.
      double train_loss = dist::all_reduce(loss_count ? loss_sum / static_cast<double>(loss_count) : 0.0);
      double all_images = dist::all_reduce(static_cast<double>(images), dist::ReduceOp::kSum);
      double slowest = dist::all_reduce(epoch_s, dist::ReduceOp::kMax);
      double ips = slowest > 0 ? all_images / slowest : 0.0;
      if (main_process) {
        log::info("epoch {} done: train_loss={} test_accuracy={} ({} test images) images_per_s={}", epoch + 1,
                  train_loss, acc, eval.images, static_cast<int64_t>(ips));
        if (!f.metrics.empty()) {
          std::ofstream m(f.metrics, std::ios::app);
          m << nlohmann::json{{"epoch", epoch + 1}, {"step", step}, {"train_loss", train_loss},
                              {"test_accuracy", acc}, {"test_images", eval.images}, {"images_per_s", ips}}
                   .dump()
            << "\n";
        }
      }
      save();
    }
    if (stopped) save();
    if (main_process) {
      nn::save(*model, "lenet.safetensors");
      if (!f.benchmark) log::info("weights written to lenet.safetensors");
    }
    if (f.benchmark) {
      // The job's throughput: every rank's images over the slowest rank's time.
      bench_images = dist::all_reduce(bench_images, dist::ReduceOp::kSum);
      bench_seconds = dist::all_reduce(bench_seconds, dist::ReduceOp::kMax);
    }
    if (f.benchmark && main_process) {
      if (const dist::Reducer* r = ddp->reducer()) {
        auto st = r->stats();
        std::printf("allreduce_seconds=%.3f hidden_behind_backward=%.1f%%\n", st.comm_seconds,
                    st.comm_seconds > 0 ? 100.0 * st.hidden_seconds / st.comm_seconds : 0.0);
      }
      if (bench_images == 0) {
        log::error("--benchmark: no steps after the {} warm-up steps; raise --max_steps or --epochs", f.warmup_steps);
        return 1;
      }
      std::printf("amp=%s\nimages_per_s=%.1f\n", amp.name().c_str(), bench_images / bench_seconds);
    }
    dist::destroy_process_group();
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    dist::destroy_process_group();  // from a catch block: tells the other ranks this one failed
    return 1;
  }
  return 0;
}
