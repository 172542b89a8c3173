// All-reduce, reduce-scatter and all-gather time and bandwidth of the default process group, per
// message size, in nccl-tests' terms: the size is the whole buffer (for reduce-scatter the input,
// world x output; for all-gather the output, world x input), algbw = size / time, and
// busbw = algbw * 2 (n - 1) / n for allreduce, algbw * (n - 1) / n for reduce-scatter and
// all-gather (what each rank's link carries, comparable across world sizes and with nccl-tests'
// all_reduce_perf, reduce_scatter_perf and all_gather_perf).
//
//   colonyrun --nproc_per_node=2 --master_port=0 .bazel/bin/benchmarks/allreduce_bench      # Gloo, host
//   ... allreduce_bench --op reduce_scatter   (or all_gather, or all: the three one after another)
//   colonyrun --nproc_per_node=N .bazel/bin/benchmarks/allreduce_bench --device cuda        # NCCL, N GPUs
//   .bazel/bin/benchmarks/allreduce_bench --device cuda                                     # NCCL, 1 GPU
//
// --device cuda uses the group init_process_group picks (NCCL when every local rank has its own GPU,
// else Gloo through pinned host memory), or, alone, an NCCL group of one (busbw is 0 there by the
// formula; the time is NCCL's launch cost). Without a GPU it says so and exits 0. On the host each
// size reports the median of single all-reduces; on a GPU the mean over back-to-back all-reduces
// queued on the stream (as nccl-tests does), timed from the host after synchronizing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "distributed/init.h"
#include "distributed/nccl/process_group_nccl.h"
#include "distributed/store/tcp_store.h"
#include "runtime/cuda.h"
#include "ops/raw_ops.h"
#include "runtime/stream.h"

using namespace colony;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

const char* const kOps[] = {"allreduce", "reduce_scatter", "all_gather"};

void report(const dist::ProcessGroup& group, const std::string& op, int64_t n, double ms) {
  const double bytes = n * 4.0;
  const double algbw = bytes / 1e9 / (ms / 1e3);  // GB/s
  const int w = group.size();
  const double busbw = algbw * (op == "allreduce" ? 2.0 : 1.0) * (w - 1) / w;
  std::printf("%-14s %12.0f B %11lld float32  %10.3f us  algbw %8.3f GB/s  busbw %8.3f GB/s\n", op.c_str(), bytes,
              static_cast<long long>(n), ms * 1e3, algbw, busbw);
}

// One collective `op` over a buffer of n elements in all (for the flat ones n / world per rank,
// at least one: whole.numel() is what was moved).
struct Collective {
  Collective(dist::ProcessGroup& group, const std::string& op, int64_t n, Device dev) : group(group), op(op) {
    const int64_t part = std::max<int64_t>(1, n / group.size());
    whole = raw::ones({op == "allreduce" ? n : part * group.size()}, TensorOptions(dev));
    piece = raw::ones({part}, TensorOptions(dev));
  }
  std::shared_ptr<dist::Work> launch(dist::ReduceOp reduce) {
    if (op == "reduce_scatter") return group.reduce_scatter_tensor(piece, whole, reduce);
    if (op == "all_gather") return group.allgather_into_tensor(whole, piece);
    return group.allreduce(whole, reduce);
  }
  dist::ProcessGroup& group;
  std::string op;
  Tensor whole, piece;
};

// One size on the host: the median of single collectives.
double host_ms(dist::ProcessGroup& group, const std::string& op, int64_t n) {
  Collective c(group, op, n, kCPU);
  std::vector<double> ms;
  const int reps = n > 1000000 ? 10 : 200;
  for (int i = 0; i < reps + 5; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    c.launch(dist::ReduceOp::kAvg)->wait();
    if (i >= 5) ms.push_back(ms_since(t0));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// One size on the GPU: back-to-back collectives, then one synchronization.
double device_ms(dist::ProcessGroup& group, const std::string& op, Device dev, int64_t n) {
  Collective c(group, op, n, dev);
  const int reps = n >= (int64_t{1} << 24) ? 10 : 40;
  auto run = [&](int k) {
    std::shared_ptr<dist::Work> last;
    for (int i = 0; i < k; ++i) (last = c.launch(dist::ReduceOp::kSum))->wait();
    dist::synchronize(*last);
    current_stream(dev).synchronize();
  };
  run(5);  // warm-up
  const auto t0 = std::chrono::steady_clock::now();
  run(reps);
  return ms_since(t0) / reps;
}

}  // namespace

int main(int argc, char** argv) {
  std::string device = "cpu";
  std::string op = "allreduce";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
      device = argv[++i];
    } else if (std::strcmp(argv[i], "--op") == 0 && i + 1 < argc) {
      op = argv[++i];
    } else {
      std::fprintf(stderr, "usage: allreduce_bench [--device cpu|cuda] [--op allreduce|reduce_scatter|all_gather|all]\n");
      return 2;
    }
  }
  std::vector<std::string> ops;
  for (const char* known : kOps)
    if (op == known || op == "all") ops.push_back(known);
  if (ops.empty()) {
    std::fprintf(stderr, "allreduce_bench: --op must be allreduce, reduce_scatter, all_gather or all, got \"%s\"\n",
                 op.c_str());
    return 2;
  }
  if (device != "cpu" && device != "cuda") {
    std::fprintf(stderr, "allreduce_bench: --device must be cpu or cuda, got \"%s\"\n", device.c_str());
    return 2;
  }
  if (device == "cuda" && cuda::device_count() == 0) {
    std::printf("allreduce_bench: skipped: --device cuda needs a GPU, and this machine has none (%s)\n",
                cuda::unavailable_reason().c_str());
    return 0;
  }
  dist::init_process_group();
  std::shared_ptr<dist::ProcessGroup> group = dist::default_process_group();
  std::shared_ptr<dist::TCPStore> store;  // a group of one's
  if (!group && device == "cuda") {
    dist::TCPStoreOptions so;
    so.port = 0;
    so.is_server = true;
    so.token = "allreduce-bench";
    store = std::make_shared<dist::TCPStore>(so);
    group = std::make_shared<dist::ProcessGroupNCCL>(store, 0, 1);
  }
  if (!group) {
    std::fprintf(stderr,
                 "allreduce_bench: run me under colonyrun with --nproc_per_node >= 2 (or with --device cuda)\n");
    return 1;
  }
  const Device dev = device == "cuda" ? dist::local_device() : kCPU;
  if (dist::is_main_process())
    std::printf("allreduce_bench: %d rank(s), backend %s, %s tensors%s\n", group->size(),
                group->backend_name().c_str(), dev.str().c_str(),
                dev.is_cuda() ? " (mean of back-to-back collectives, sum)" : " (median of single collectives, avg)");
  std::vector<int64_t> sizes;
  if (dev.is_cuda()) {
    for (int64_t n = 256; n <= (int64_t{1} << 26); n *= 4) sizes.push_back(n);  // 1 KiB .. 256 MiB
  } else {
    sizes = {1, 62006, 131072, 262144, 524288, 6553600};  // LeNet's one bucket (62,006) to 25 MiB
  }
  for (const std::string& o : ops)
    for (int64_t n : sizes) {
      const double ms = dev.is_cuda() ? device_ms(*group, o, dev, n) : host_ms(*group, o, n);
      // What moved: a flat collective's buffer is a whole number of per-rank blocks.
      const int64_t moved = o == "allreduce" ? n : std::max<int64_t>(1, n / group->size()) * group->size();
      if (dist::is_main_process()) report(*group, o, moved, ms);
    }
  group.reset();
  dist::destroy_process_group();
}
