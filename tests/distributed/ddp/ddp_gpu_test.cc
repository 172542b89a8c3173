// DistributedDataParallel on GPUs. On the host, against a fake NCCL runtime: backward queues each
// bucket's all-reduce and ends by making the compute stream wait for them, never the host. With a
// device (*_CUDA, skipped without one): NCCL at world size 1 runs every collective and trains like
// one process (no_sync, unused parameters, fp16/bf16 hooks, buffers, stats from GPU events, the
// GPU lanes of the trace), and two ranks sharing one GPU through Gloo train like one process on the
// combined batch.
#include <atomic>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "data/sampler.h"
#include "distributed/comm/process_group_by_device.h"
#include "distributed/ddp/ddp.h"
#include "distributed/gloo/process_group_gloo.h"
#include "distributed/init.h"
#include "distributed/nccl/process_group_nccl.h"
#include "distributed/store/tcp_store.h"
#include "log/trace.h"
#include "nn/batchnorm.h"
#include "nn/functional.h"
#include "nn/linear.h"
#include "optim/sgd.h"
#include "ops/cuda_graph.h"
#include "tensor/random.h"
#include "runtime/stream.h"
#include "tests/distributed/nccl/fake_nccl_runtime.h"
#include "tests/multiprocess.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using dist::PrefixStore;
using dist::TCPStore;
using dist::TCPStoreOptions;
using std::chrono::milliseconds;

struct Mlp : nn::Module {
  Mlp() {
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(8, 16));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(16, 4));
  }
  Tensor forward(const Tensor& x) override { return fc2->forward(F::relu(fc1->forward(x))); }
  std::shared_ptr<nn::Linear> fc1, fc2;
};

// `never` is used by no rank: its gradient must stay undefined.
struct WithUnused : nn::Module {
  WithUnused() {
    used = register_module("used", std::make_shared<nn::Linear>(8, 4));
    never = register_module("never", std::make_shared<nn::Linear>(8, 4));
  }
  Tensor forward(const Tensor& x) override { return used->forward(x); }
  std::shared_ptr<nn::Linear> used, never;
};

struct WithNorm : nn::Module {
  WithNorm() {
    bn = register_module("bn", std::make_shared<nn::BatchNorm2d>(3));
  }
  Tensor forward(const Tensor& x) override { return bn->forward(x); }
  std::shared_ptr<nn::BatchNorm2d> bn;
};

std::pair<Tensor, Tensor> batch(int64_t n, uint64_t seed, Device dev = kCPU) {
  Generator g(seed);
  Tensor x = raw::randn({n, 8}, {}, &g);
  Tensor y = raw::randint(0, 4, {n}, TensorOptions(kInt64), &g);
  return {x.to(dev), y.to(dev)};
}

std::shared_ptr<TCPStore> store_of_one(const std::string& token) {
  TCPStoreOptions o;
  o.port = 0;
  o.is_server = true;
  o.token = token;
  return std::make_shared<TCPStore>(o);
}

TEST(DistributedDataParallelOnNccl, BackwardQueuesEveryBucketAndOnlyTheComputeStreamWaits) {
  auto rt = std::make_shared<dist::nccl_testing::FakeNcclRuntime>();
  dist::ProcessGroupNCCLOptions o;
  o.runtime = rt;
  o.device = 0;
  auto pg = std::make_shared<dist::ProcessGroupNCCL>(store_of_one("ddp-fake"), 0, 1, o);
  manual_seed(4);
  auto model = std::make_shared<Mlp>();
  auto ddp = std::make_shared<dist::DistributedDataParallel>(
      model, dist::DistributedDataParallelOptions().process_group(pg).first_bucket_cap_mb(1e-4).bucket_cap_mb(1e-4));
  const size_t buckets = ddp->reducer()->bucket_layout().size();
  ASSERT_GE(buckets, 3u);
  manual_seed(4);
  auto ref = std::make_shared<Mlp>();

  // From here the "GPU" never finishes on its own. A reducer that waited on the host for a
  // collective would never return from backward: after 5 s this releases it, and says so.
  rt->events_complete = false;
  rt->take_calls();
  std::atomic<bool> returned{false}, released{false};
  std::thread guard([&] {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!returned && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(milliseconds(5));
    if (!returned) {
      released = true;
      rt->complete_events();
    }
  });
  auto [x, y] = batch(16, 1);
  F::cross_entropy(ddp->forward(x), y).backward();
  returned = true;
  guard.join();
  EXPECT_FALSE(released) << "backward blocked the host until the collectives ran";

  // One all-reduce per bucket on the communication stream; then, at the end of backward, one wait
  // of the compute stream per bucket.
  const std::vector<std::string> calls = rt->take_calls();
  size_t reduces = 0, waits = 0, last_reduce = 0, first_wait = calls.size();
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].rfind("all_reduce", 0) == 0) {
      ++reduces;
      last_reduce = i;
      EXPECT_NE(calls[i].find("avg on comm"), std::string::npos) << calls[i];
    }
    if (calls[i] == "compute waits") {
      ++waits;
      first_wait = std::min(first_wait, i);
    }
  }
  EXPECT_EQ(reduces, buckets);
  EXPECT_EQ(waits, buckets);
  EXPECT_GT(first_wait, last_reduce) << "the compute stream waits once every bucket is queued";
  EXPECT_EQ(ddp->reducer()->stats().iterations, 1);

  // A world of one averages over itself: the gradients are the local ones.
  F::cross_entropy(ref->forward(x), y).backward();
  auto got = model->named_parameters(), want = ref->named_parameters();
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(testing::all_close(got[i].second.grad(), want[i].second.grad(), 0, 0)) << got[i].first;
  rt->complete_events();
}

// ---- with a GPU --------------------------------------------------------------------------------

// Forwards to `inner`, noting the device of every tensor DDP all-reduces.
class RecordingGroup final : public dist::ProcessGroup {
 public:
  explicit RecordingGroup(std::shared_ptr<dist::ProcessGroup> inner) : inner_(std::move(inner)) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string backend_name() const override { return inner_->backend_name(); }
  std::shared_ptr<dist::Work> allreduce(Tensor& t, dist::ReduceOp op, const dist::CollectiveOptions& o) override {
    allreduced_on.push_back(t.device());
    return inner_->allreduce(t, op, o);
  }
  std::shared_ptr<dist::Work> broadcast(Tensor& t, int root, const dist::CollectiveOptions& o) override {
    return inner_->broadcast(t, root, o);
  }
  std::shared_ptr<dist::Work> allgather(std::vector<Tensor>& outs, const Tensor& in,
                                        const dist::CollectiveOptions& o) override {
    return inner_->allgather(outs, in, o);
  }
  std::shared_ptr<dist::Work> reduce_scatter(Tensor& out, const std::vector<Tensor>& ins, dist::ReduceOp op,
                                             const dist::CollectiveOptions& o) override {
    return inner_->reduce_scatter(out, ins, op, o);
  }
  std::shared_ptr<dist::Work> barrier(const dist::CollectiveOptions& o) override { return inner_->barrier(o); }
  void abort(const std::string& reason) override { inner_->abort(reason); }

  std::vector<Device> allreduced_on;

 private:
  std::shared_ptr<dist::ProcessGroup> inner_;
};

// What init_process_group builds for NCCL (host tensors to Gloo, CUDA ones to NCCL), at world size
// 1, where init_process_group makes no group.
struct NcclOfOne {
  NcclOfOne() {
    store = store_of_one("ddp-cuda");
    auto gloo = std::make_shared<dist::ProcessGroupGloo>(std::make_shared<PrefixStore>("gloo", store), 0, 1);
    dist::ProcessGroupNCCLOptions o;
    o.device = 0;
    auto nccl = std::make_shared<dist::ProcessGroupNCCL>(store, 0, 1, o);
    group = std::make_shared<RecordingGroup>(std::make_shared<dist::ProcessGroupByDevice>(gloo, nccl));
  }
  dist::DistributedDataParallelOptions ddp_options() const {
    return dist::DistributedDataParallelOptions().process_group(group).first_bucket_cap_mb(1e-4).bucket_cap_mb(1e-4);
  }
  std::shared_ptr<TCPStore> store;
  std::shared_ptr<RecordingGroup> group;
};

TEST(DistributedDataParallel_CUDA, NcclWorldOfOneRunsEveryCollective) {
  COLONY_REQUIRE_CUDA(1);
  NcclOfOne one;
  EXPECT_EQ(one.group->backend_name(), "gloo+nccl");
  const Device dev = Device::cuda(0);
  Tensor t = raw::from_vector(std::vector<float>{1, -2, 3}, {3}).to(dev);
  for (dist::ReduceOp op : {dist::ReduceOp::kSum, dist::ReduceOp::kAvg, dist::ReduceOp::kMax, dist::ReduceOp::kMin})
    one.group->allreduce(t, op, {})->wait();
  one.group->broadcast(t, 0, {})->wait();
  EXPECT_EQ(testing::values(t), (std::vector<double>{1, -2, 3}));
  std::vector<Tensor> outs{raw::zeros({3}, TensorOptions(dev))};
  one.group->allgather(outs, t, {})->wait();
  Tensor out = raw::zeros({3}, TensorOptions(dev));
  std::vector<Tensor> ins{t};
  one.group->reduce_scatter(out, ins, dist::ReduceOp::kSum, {})->wait();
  one.group->barrier({})->wait();
  EXPECT_EQ(testing::values(outs[0]), (std::vector<double>{1, -2, 3}));
  EXPECT_EQ(testing::values(out), (std::vector<double>{1, -2, 3}));
}

TEST(DistributedDataParallel_CUDA, NcclWorldOfOneTrainsLikeOneProcessWithoutBlockingTheHost) {
  COLONY_REQUIRE_CUDA(1);
  const Device dev = Device::cuda(0);
  const std::string trace_path = ::testing::TempDir() + "/ddp_gpu_trace.json";
  trace::start(trace_path);
  NcclOfOne one;
  manual_seed(11);
  auto model = std::make_shared<Mlp>();
  model->to(dev);
  auto ddp = std::make_shared<dist::DistributedDataParallel>(model, one.ddp_options());
  manual_seed(11);
  auto ref = std::make_shared<Mlp>();
  ref->to(dev);
  optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  optim::SGD ref_opt(ref->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  for (int step = 0; step < 8; ++step) {
    auto [x, y] = batch(16, 100 + step, dev);
    opt.zero_grad();
    F::cross_entropy(ddp->forward(x), y).backward();
    opt.step();
    ref_opt.zero_grad();
    F::cross_entropy(ref->forward(x), y).backward();
    ref_opt.step();
  }
  auto got = model->named_parameters(), want = ref->named_parameters();
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(testing::all_close(got[i].second, want[i].second, 1e-5, 1e-6)) << got[i].first;
  ASSERT_FALSE(one.group->allreduced_on.empty());
  for (const Device& d : one.group->allreduced_on) EXPECT_EQ(d, dev) << "a bucket left the GPU";
  for (const auto& p : model->parameters()) EXPECT_EQ(p.grad().device(), dev);

  // The timings come from events, read once the GPU passed them.
  current_stream(dev).synchronize();
  const auto stats = ddp->reducer()->stats();
  EXPECT_EQ(stats.iterations, 8);
  EXPECT_GT(stats.comm_seconds, 0);
  ddp.reset();  // the reducer reads the last events (a trace is on)
  trace::flush();
  std::ifstream f(trace_path);
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_NE(ss.str().find("GPU communication stream"), std::string::npos);
  EXPECT_NE(ss.str().find("\"tid\":3}"), std::string::npos) << "all-reduces on the GPU communication lane";
  EXPECT_NE(ss.str().find("\"tid\":2}"), std::string::npos) << "backward on the GPU compute lane";
}

// A whole DDP step (forward, backward with the bucket all-reduces on the communication stream,
// SGD) captured in one CUDA graph: the replays give the losses and weights of eager DDP steps.
// The capture needs the buckets rebuilt first (the second iteration), so one warm-up is refused.
TEST(DistributedDataParallel_CUDA, NcclStepCapturedInACudaGraphReplaysLikeEagerSteps) {
  COLONY_REQUIRE_CUDA(1);
  const Device dev = Device::cuda(0);
  constexpr int kWarmup = 2, kSteps = 4;
  std::vector<std::pair<Tensor, Tensor>> batches;
  for (int i = 0; i <= kSteps; ++i) batches.push_back(batch(16, 200 + i, dev));
  struct Run {
    std::vector<double> losses, weights;
  };
  auto run = [&](bool graphed, int warmup) {
    NcclOfOne one;
    manual_seed(12);
    auto model = std::make_shared<Mlp>();
    model->to(dev);
    auto ddp = std::make_shared<dist::DistributedDataParallel>(model, one.ddp_options());
    optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1).momentum(0.9));
    Tensor x = raw::clone(batches[0].first), y = raw::clone(batches[0].second), loss;
    auto step = [&] {
      opt.zero_grad();
      loss = F::cross_entropy(ddp->forward(x), y);
      loss.backward();
      opt.step();
    };
    Run r;
    std::optional<cuda::GraphedStep> g;
    if (graphed) {
      g = cuda::make_graphed_step(step, dev, warmup);
    } else {
      for (int k = 0; k < warmup; ++k) step();
    }
    for (int s = 0; s < kSteps; ++s) {
      x.copy_(batches[s + 1].first);
      y.copy_(batches[s + 1].second);
      graphed ? g->replay() : step();
      r.losses.push_back(loss.item<double>());
    }
    for (const Tensor& p : model->parameters()) {
      const auto v = testing::values(p);
      r.weights.insert(r.weights.end(), v.begin(), v.end());
    }
    return r;
  };
  const Run eager = run(false, kWarmup), replayed = run(true, kWarmup);
  EXPECT_EQ(replayed.losses, eager.losses);
  EXPECT_EQ(replayed.weights, eager.weights);
  EXPECT_TRUE(testing::throws_with<std::runtime_error>([&] { run(true, 1); }, "the buckets are rebuilt"));
}

TEST(DistributedDataParallel_CUDA, NcclNoSyncUnusedParametersHooksAndBuffers) {
  COLONY_REQUIRE_CUDA(1);
  const Device dev = Device::cuda(0);
  NcclOfOne one;
  {  // no_sync: three local micro-batches and a synced one equal the plain accumulation.
    manual_seed(5);
    auto model = std::make_shared<Mlp>();
    model->to(dev);
    auto ddp = std::make_shared<dist::DistributedDataParallel>(model, one.ddp_options());
    manual_seed(5);
    auto local = std::make_shared<Mlp>();
    local->to(dev);
    for (int micro = 0; micro < 4; ++micro) {
      auto [x, y] = batch(8, 30 + micro, dev);
      std::optional<dist::DistributedDataParallel::NoSyncGuard> guard;
      if (micro < 3) guard.emplace(ddp->no_sync());
      F::cross_entropy(ddp->forward(x), y).backward();
      F::cross_entropy(local->forward(x), y).backward();
    }
    EXPECT_EQ(ddp->reducer()->stats().iterations, 1);
    auto got = model->named_parameters(), want = local->named_parameters();
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(testing::all_close(got[i].second.grad(), want[i].second.grad(), 1e-5, 1e-7)) << got[i].first;
  }
  {  // A parameter no rank used keeps an undefined gradient (the one host read of the flags).
    auto model = std::make_shared<WithUnused>();
    model->to(dev);
    auto ddp = std::make_shared<dist::DistributedDataParallel>(model, one.ddp_options());
    for (int step = 0; step < 2; ++step) {
      model->zero_grad();
      auto [x, y] = batch(8, 50 + step, dev);
      F::cross_entropy(ddp->forward(x), y).backward();
      EXPECT_TRUE(model->used->weight.grad().defined());
      EXPECT_FALSE(model->never->weight.grad().defined());
      EXPECT_FALSE(model->never->bias.grad().defined());
    }
  }
  for (DType wire : {kFloat16, kBFloat16}) {  // compression hooks: the wire type's values, on the GPU
    manual_seed(3);
    auto model = std::make_shared<Mlp>();
    model->to(dev);
    auto ddp = std::make_shared<dist::DistributedDataParallel>(model, one.ddp_options());
    ddp->register_comm_hook(wire == kFloat16 ? dist::comm_hooks::fp16_compress() : dist::comm_hooks::bf16_compress());
    manual_seed(3);
    auto ref = std::make_shared<Mlp>();
    ref->to(dev);
    auto [x, y] = batch(16, 70, dev);
    one.group->allreduced_on.clear();
    F::cross_entropy(ddp->forward(x), y).backward();
    F::cross_entropy(ref->forward(x), y).backward();
    for (const Device& d : one.group->allreduced_on) EXPECT_EQ(d, dev) << dtype_name(wire);
    const Tensor got = model->fc1->weight.grad(), exact = ref->fc1->weight.grad();
    auto through_wire = [&](const Tensor& t) { return raw::to(raw::to(t, kCPU, wire), kCPU, kFloat32); };
    EXPECT_TRUE(testing::all_close(through_wire(got), got, 0.0, 0.0)) << dtype_name(wire);
    EXPECT_TRUE(testing::all_close(got, through_wire(exact), 1e-6, 1e-7)) << dtype_name(wire);
  }
  {  // Buffers are broadcast at construction and at forward, on the GPU.
    auto model = std::make_shared<WithNorm>();
    model->to(dev);
    auto ddp = std::make_shared<dist::DistributedDataParallel>(model, one.ddp_options());
    model->eval();
    Tensor out = ddp->forward(raw::randn({2, 3, 4, 4}).to(dev));
    EXPECT_EQ(out.device(), dev);
    EXPECT_EQ(model->bn->running_mean.device(), dev);
  }
}

// Two ranks on one GPU: NCCL refuses that, Gloo stages the CUDA buckets through host memory.
TEST(DistributedDataParallel_CUDA, TwoRanksSharingOneGpuThroughGlooMatchOneProcess) {
  COLONY_REQUIRE_CUDA(1);
  auto results = testing::run_ranks(2, [](int rank) {
    dist::InitOptions io;
    io.backend = "gloo";
    dist::init_process_group(io);
    EXPECT_EQ(dist::default_process_group()->backend_name(), "gloo");
    const Device dev = dist::local_device();
    ASSERT_TRUE(dev.is_cuda());
    manual_seed(100 + rank);  // different initial weights: DDP must broadcast rank 0's
    auto model = std::make_shared<Mlp>();
    model->to(dev);
    auto ddp = std::make_shared<dist::DistributedDataParallel>(
        model, dist::DistributedDataParallelOptions().first_bucket_cap_mb(1e-4).bucket_cap_mb(1e-4));
    optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1).momentum(0.9));
    manual_seed(100);
    auto ref = std::make_shared<Mlp>();
    ref->to(dev);
    optim::SGD ref_opt(ref->parameters(), optim::SGDOptions(0.1).momentum(0.9));
    for (int step = 0; step < 6; ++step) {
      auto [x, y] = batch(32, 200 + step, dev);  // rank r takes rows r*16 .. r*16+15
      opt.zero_grad();
      F::cross_entropy(ddp->forward(raw::narrow(x, 0, rank * 16, 16)), raw::narrow(y, 0, rank * 16, 16)).backward();
      opt.step();
      ref_opt.zero_grad();
      F::cross_entropy(ref->forward(x), y).backward();
      ref_opt.step();
    }
    auto got = model->named_parameters(), want = ref->named_parameters();
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(testing::all_close(got[i].second, want[i].second, 1e-5, 1e-6)) << got[i].first;
    EXPECT_GT(ddp->reducer()->stats().comm_seconds, 0) << "Gloo's times reach the stats through the staging";
    dist::destroy_process_group();
  });
  if (testing::in_rank_child()) return;
  EXPECT_TRUE(testing::all_succeeded(results));
}

}  // namespace
}  // namespace colony
